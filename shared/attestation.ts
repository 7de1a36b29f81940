/**
 * Attestation document v2 and the packet commitment (DESIGN.md §3).
 *
 * packet_hash = SHA-256 of the JCS bytes of exactly the packet fields /v1/verify receives
 * (action_key, href, status, decision, payload_hash, review_route). Those JCS bytes are the
 * seal bundle's payload.json, so `sha256sum payload.json` reproduces packet_hash.
 */
import { canonicalBytes } from './canonical-json.ts';
import { isSha256Hex } from './encoding.ts';
import { SvcError } from './errors.ts';
import { sha256Hex } from './hash.ts';
import { ATTESTATION_FORMAT } from './types.ts';
import type { AttestationV2, PacketFields, SealKind } from './types.ts';

const SEAL_KINDS: readonly SealKind[] = ['gate', 'record', 'review', 'mirror', 'policy', 'epoch'];

/** Picks exactly the committed packet fields, so extra members never change the hash. */
export function packetFields(p: PacketFields): PacketFields {
  return {
    action_key: p.action_key,
    href: p.href,
    status: p.status,
    decision: p.decision,
    payload_hash: p.payload_hash,
    review_route: p.review_route,
  };
}

/** The bytes packet_hash is taken over: payload.json of a seal bundle. */
export function packetBytes(p: PacketFields): Uint8Array {
  return canonicalBytes(packetFields(p));
}

export function packetHash(p: PacketFields): string {
  return sha256Hex(packetBytes(p));
}

/**
 * payload_hash: SHA-256 of the JCS bytes of the caller's payload, which is the request body
 * without idempotency_key (DESIGN.md §3): a retry with another key re-proves the same payload.
 */
export function payloadHash(body: Record<string, unknown>): string {
  return payloadCommitment(body).hash;
}

/** payload_hash together with the JCS bytes it is taken over (metering counts those bytes). */
export function payloadCommitment(body: Record<string, unknown>): { hash: string; bytes: Uint8Array } {
  const { idempotency_key: _ignored, ...payload } = body;
  const bytes = canonicalBytes(payload);
  return { hash: sha256Hex(bytes), bytes };
}

export function attestationBytes(attestation: AttestationV2): Uint8Array {
  return canonicalBytes(attestation);
}

export function attestationHash(attestation: AttestationV2): string {
  return sha256Hex(attestationBytes(attestation));
}

type FieldError = { path: string; message: string };

const RFC3339_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * Structural check of an attestation received from outside. Collects every bad field,
 * then throws once (SEAL_MALFORMED, details.errors), so a report can name all of them.
 */
export function assertAttestation(value: unknown): asserts value is AttestationV2 {
  const errors: FieldError[] = [];
  const bad = (path: string, message: string) => errors.push({ path, message });
  if (!isRecord(value)) {
    throw new SvcError('SEAL_MALFORMED', `expected attestation object, got ${typeName(value)}`, {
      errors: [{ path: '$', message: 'expected object' }],
    });
  }
  const a = value;
  if (a.format !== ATTESTATION_FORMAT) bad('format', `expected "${ATTESTATION_FORMAT}"`);
  for (const k of ['action_key', 'tenant_id', 'pack', 'status', 'key_id'] as const) {
    if (typeof a[k] !== 'string' || a[k] === '') bad(k, 'expected non-empty string');
  }
  if (!SEAL_KINDS.includes(a.kind as SealKind)) bad('kind', `expected one of ${SEAL_KINDS.join(', ')}`);
  for (const k of ['decision', 'review_route'] as const) {
    if (a[k] !== null && typeof a[k] !== 'string') bad(k, 'expected string or null');
  }
  for (const k of ['payload_hash', 'packet_hash'] as const) {
    if (!isSha256Hex(a[k])) bad(k, 'expected lowercase hex SHA-256');
  }
  for (const k of ['prev_attestation_hash', 'manifest_digest', 'policy_digest'] as const) {
    if (a[k] !== null && !isSha256Hex(a[k])) bad(k, 'expected lowercase hex SHA-256 or null');
  }
  if (typeof a.recorded_at !== 'string' || !RFC3339_UTC_MS.test(a.recorded_at) || Number.isNaN(Date.parse(a.recorded_at))) {
    bad('recorded_at', 'expected RFC 3339 UTC timestamp with milliseconds');
  }
  if (typeof a.dev_key !== 'boolean') bad('dev_key', 'expected boolean');
  if (!Number.isSafeInteger(a.tenant_seq) || (a.tenant_seq as number) < 0) bad('tenant_seq', 'expected integer >= 0');
  if (a.context !== undefined && !isRecord(a.context)) bad('context', 'expected object');
  if (errors.length > 0) {
    throw new SvcError('SEAL_MALFORMED', `attestation has ${errors.length} bad field(s): ${errors.map((e) => e.path).join(', ')}`, {
      errors,
    });
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
