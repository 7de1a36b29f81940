/**
 * The replay decision for a request carrying an idempotency key: the stored answer when the
 * body is the same, 422 when the key was used for a different body, nothing for a new key or
 * one older than the window (24 h by default, SVC_IDEMPOTENCY_TTL_SECONDS, as Stripe keeps
 * keys), which is then forgotten and its request sealed anew.
 *
 * What is kept is the compact form of the first answer: the response with its evidence packet
 * and verify request (the seal, most of its size) replaced by markers, since the sealed record
 * row already holds them byte for byte (evidence/record-view.ts rebuilds them). A replay is
 * therefore the same JSON as the first answer without a second copy of the evidence.
 *
 * Part of the seal pipeline (the sealer asks it before sealing and stores the answer in the
 * seal's transaction), so it lives inside evidence/.
 */
import { ProblemError } from '../../core/errors.ts';
import { viewRecord } from '../record-view.ts';
import { MARKER, markerPart, SEALED } from '../sealed-response.ts';
import type { SealedParts } from '../sealed-response.ts';
import type { Sync } from '../../core/async-store.ts';
import type { EvidenceStore, SealedRecordRow } from '../store.ts';
import type { IdempotencyStore, IdempotencyWindow, StoredResponse } from './store.ts';

export const IDEMPOTENCY_TTL_DEFAULT_SECONDS = 24 * 3600;

export interface IdempotencyClaim {
  /** The endpoint family the key is unique within, e.g. "POST /v1/gate". */
  scope: string;
  key: string;
  requestHash: string;
}

export interface Replay {
  status: number;
  body: unknown;
}

/** The response as JSON text with every copy of the record's packet or verify request replaced by a marker (../sealed-response.ts). */
export function compactResponse(body: unknown, record: Omit<SealedParts, 'actionKey'>): string {
  const swap = (v: unknown): unknown => {
    if (v === record.packet) return SEALED.packet;
    if (v === record.verifyRequest) return SEALED.verifyRequest;
    if (Array.isArray(v)) return v.map(swap);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, swap(x)]));
    return v;
  };
  return JSON.stringify(swap(body));
}

function expand(compact: string, parts: () => Omit<SealedParts, 'actionKey'>): unknown {
  let cached: Omit<SealedParts, 'actionKey'> | undefined;
  return JSON.parse(compact, (_key, value: unknown) => {
    const part = markerPart(value);
    if (part !== 'evidence_packet' && part !== 'verify_request') return value;
    cached ??= parts();
    return part === 'evidence_packet' ? cached.packet : cached.verifyRequest;
  });
}

export async function findReplay(
  store: IdempotencyStore,
  evidence: EvidenceStore,
  tenantId: string,
  claim: IdempotencyClaim,
  window: IdempotencyWindow,
): Promise<Replay | undefined> {
  const earlier = await store.find(tenantId, claim.scope, claim.key, window);
  if (!earlier) return undefined;
  const row = needsRecord(earlier, claim) ? await evidence.findRecord(tenantId, earlier.actionKey) : undefined;
  return replayOf(earlier, row);
}

/**
 * findReplay on a transaction's synchronous stores (core/async-store.ts syncOf): the same
 * answer, with no promise to wait for on a keyed seal's way.
 */
export function findReplayNow(
  store: Sync<IdempotencyStore>,
  evidence: Sync<EvidenceStore>,
  tenantId: string,
  claim: IdempotencyClaim,
  window: IdempotencyWindow,
): Replay | undefined {
  const earlier = store.find(tenantId, claim.scope, claim.key, window);
  if (!earlier) return undefined;
  const row = needsRecord(earlier, claim) ? evidence.findRecord(tenantId, earlier.actionKey) : undefined;
  return replayOf(earlier, row);
}

/** Refuses a key used for another body (422); else whether its stored answer names evidence to read. */
function needsRecord(earlier: StoredResponse, claim: IdempotencyClaim): boolean {
  if (earlier.requestHash !== claim.requestHash) {
    throw new ProblemError({
      status: 422,
      code: 'idempotency_key_reused',
      detail: 'This idempotency_key was already used for a different request body; use a new key for a new request.',
      errors: [{ in: 'body', path: '/idempotency_key', message: 'already used for a different request body' }],
    });
  }
  return earlier.response.includes(`"${MARKER}"`);
}

function replayOf(earlier: StoredResponse, row: SealedRecordRow | undefined): Replay {
  const body = expand(earlier.response, () => {
    if (!row) throw new Error('an idempotency row names a sealed record that does not exist');
    const view = viewRecord(row);
    return { packet: view.packet, verifyRequest: view.verifyRequest };
  });
  return { status: earlier.status, body };
}
