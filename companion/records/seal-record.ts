/**
 * One record request, from validated body to sealed record (interface-spec "Record request",
 * States and transitions: "valid body → status recorded (terminal); sealed; no review routing").
 *
 * What is kept: payload_hash, the source_payload digests, a digest of the metadata and one of
 * each of its values, and the metadata values themselves only while the tenant's setting
 * retains declared statutory metadata (interface-spec "Tenant"; PATCH /account/me). The caller keeps the payload to re-prove payload_hash; every
 * response says so in payload_retention (interface-spec "What the service does" 7).
 */
import { payloadCommitment } from '../../shared/attestation.ts';
import { canonicalBytes } from '../../shared/canonical-json.ts';
import { sha256Hex } from '../../shared/hash.ts';
import type { TenantStore } from '../account/store.ts';
import type { AuthContext } from '../core/auth.ts';
import type { Clock } from '../core/clock.ts';
import { ProblemError } from '../core/errors.ts';
import { SEALED } from '../evidence/sealed-response.ts';
import type { SealOutcome, SealPipeline } from '../evidence/sealer.ts';
import { estimateCredits } from '../metering/credits.ts';
import { getRecordPack } from '../packs/registry.ts';
import type { RecordBody } from './schema.ts';

/** Batch items share the single endpoint's scope: a batch item may be retried alone, and the reverse. */
export const RECORD_IDEMPOTENCY_SCOPE = 'POST /v1/record';

/** Records are of acts that already happened; this much clock skew between caller and server is tolerated. */
export const OCCURRED_AT_MAX_SKEW_MS = 5 * 60_000;

export interface RecordSealDeps {
  sealer: SealPipeline;
  clock: Clock;
  tenants: Pick<TenantStore, 'getTenant'>;
}

export interface PayloadRetention {
  raw_content_stored: false;
  stored: string;
  metadata_values_retained: boolean;
  caller_retains: string;
}

export function payloadRetention(metadataRetained: boolean): PayloadRetention {
  return {
    raw_content_stored: false,
    stored: metadataRetained ? 'hash commitments and the declared metadata values (tenant setting)' : 'hash commitments only',
    metadata_values_retained: metadataRetained,
    caller_retains: 'source_payload and metadata, to re-prove payload_hash',
  };
}

/**
 * Whether the tenant keeps declared metadata values (its retain_statutory_metadata setting).
 * Read before sealing, once per request: a batch's items are then handed to the sealer in
 * their own order, none held back by a read of its own.
 */
export async function metadataRetention(deps: RecordSealDeps, tenantId: string): Promise<boolean> {
  return (await deps.tenants.getTenant(tenantId))?.retainStatutoryMetadata ?? false;
}

/** `retainMetadata` is the tenant's setting (metadataRetention); it matters only when metadata is sent. */
export function sealRecord(deps: RecordSealDeps, auth: AuthContext, body: RecordBody, retainMetadata: boolean): Promise<SealOutcome> {
  const pack = getRecordPack(body.pack)!; // the schema admits record pack names only
  const m = pack.manifest;
  const event = m.event_types.find((e) => e.id === body.event_type)!;
  assertNotFuture(body.occurred_at, deps.clock.now());

  // One canonicalization gives both payload_hash and the byte count metering estimates from.
  const { hash, bytes } = payloadCommitment(body);
  const idempotencyKey = body.idempotency_key;
  const credits = estimateCredits(bytes.length, m.rate).credits;
  const metadataSha256 = body.metadata !== undefined ? sha256Hex(canonicalBytes(body.metadata)) : undefined;
  // One digest per value (SHA-256 of its JCS bytes), so a single value (a model name, a marking
  // id) can be shown to match the seal without the others.
  const valueDigests = body.metadata !== undefined ? Object.fromEntries(Object.entries(body.metadata).map(([k, v]) => [k, sha256Hex(canonicalBytes(v))])) : undefined;
  const retained = body.metadata !== undefined && retainMetadata;
  const retention = payloadRetention(retained);
  // Committed in the attestation: the digests themselves let a verifier match content to a seal
  // without the rest of the payload.
  const committed = {
    pack_version: m.version,
    event_type: body.event_type,
    occurred_at: body.occurred_at,
    source_payload: body.source_payload,
    ...(metadataSha256 !== undefined ? { metadata_sha256: metadataSha256, metadata_value_sha256: valueDigests } : {}),
  };

  return deps.sealer.seal({
    auth,
    vertical: m.name,
    actionType: event.action_type,
    pack: m.name,
    kind: 'record',
    decision: null,
    status: 'recorded',
    reviewRoute: null,
    payloadHash: hash,
    manifestDigest: pack.digest,
    policyDigest: null,
    context: committed,
    details: {
      event_type: body.event_type,
      occurred_at: body.occurred_at,
      source_payload: body.source_payload,
      ...(metadataSha256 !== undefined ? { metadata_sha256: metadataSha256 } : {}),
      ...(retained ? { metadata: body.metadata } : {}),
      payload_retention: retention,
    },
    metering: { counted: true, credits },
    ...(idempotencyKey !== undefined ? { idempotency: { scope: RECORD_IDEMPOTENCY_SCOPE, key: idempotencyKey, requestHash: hash } } : {}),
    respond: {
      template: {
        status: 'recorded',
        action_key: SEALED.actionKey,
        pack: m.name,
        event_type: body.event_type,
        occurred_at: body.occurred_at,
        evidence_packet: SEALED.packet,
        payload_hash: hash,
        review_route: null,
        verify_request: SEALED.verifyRequest,
        payload_retention: retention,
      },
    },
  });
}

function assertNotFuture(occurredAt: string, now: Date): void {
  if (Date.parse(occurredAt) > now.getTime() + OCCURRED_AT_MAX_SKEW_MS) {
    throw ProblemError.validation([
      { in: 'body', path: '/occurred_at', message: 'must not be in the future: a record is of an act that already happened', code: 'too_big' },
    ]);
  }
}
