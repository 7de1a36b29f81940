/**
 * Attestation document v2 and the packet commitment (DESIGN.md §3).
 *
 * packet_hash = SHA-256 of the JCS bytes of exactly the packet fields /v1/verify receives
 * (action_key, href, status, decision, payload_hash, review_route). Those JCS bytes are the
 * seal bundle's payload.json, so `sha256sum payload.json` reproduces packet_hash.
 */
import { canonicalBytes, canonicalize, canonicalizeMember, canonicalString } from './canonical-json.ts';
import { isSha256Hex, utf8 } from './encoding.ts';
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

/**
 * The JCS text of the packet fields (RFC 8785 §3.2): payload.json of a seal bundle, the same
 * text canonicalize(packetFields(p)) writes. Its six members are written in their §3.2.3 order
 * without walking an object; anything but a string (or null where allowed) goes through
 * canonicalize, which writes or refuses it as for any value.
 */
export function packetText(p: PacketFields): string {
  const actionKey = text(p.action_key);
  const decision = textOrNull(p.decision);
  const href = text(p.href);
  const payload = text(p.payload_hash);
  const route = textOrNull(p.review_route);
  const status = text(p.status);
  if (actionKey === undefined || decision === undefined || href === undefined || payload === undefined || route === undefined || status === undefined) {
    return canonicalize(packetFields(p));
  }
  return `{"action_key":${actionKey},"decision":${decision},"href":${href},"payload_hash":${payload},"review_route":${route},"status":${status}}`;
}

/** The bytes packet_hash is taken over: payload.json of a seal bundle. */
export function packetBytes(p: PacketFields): Uint8Array {
  return utf8(packetText(p));
}

export function packetHash(p: PacketFields): string {
  return sha256Hex(packetText(p));
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
  return utf8(attestationText(attestation));
}

/** An attestation v2's members, sorted as RFC 8785 §3.2.3 orders them (UTF-16 code units). */
const ATTESTATION_MEMBERS: readonly (keyof AttestationV2)[] = (
  [
    'format',
    'action_key',
    'tenant_id',
    'pack',
    'kind',
    'decision',
    'status',
    'payload_hash',
    'packet_hash',
    'review_route',
    'recorded_at',
    'key_id',
    'dev_key',
    'tenant_seq',
    'prev_attestation_hash',
    'manifest_digest',
    'policy_digest',
    'context',
  ] as const
).slice().sort();

/** Each member's text before its value: `"name":`, after a comma but for the first (memberwise). */
const MEMBER_OPENINGS = new Map(ATTESTATION_MEMBERS.map((name, i) => [name, `${i === 0 ? '' : ','}"${name}":`]));

/**
 * The attestation's JCS text (RFC 8785 §3.2), the bytes a seal signs and attestation_hash is
 * taken over: the same text canonicalize(attestation) writes. A plain attestation with exactly
 * the v2 members (context optional) is written member by member in their §3.2.3 order, its
 * context as canonicalize writes it there (canonicalizeMember); anything else (another member, a value of another type, a lone
 * surrogate) goes through canonicalize whole, which writes or refuses it as for any value.
 */
export function attestationText(attestation: AttestationV2): string {
  return memberwise(attestation) ?? canonicalize(attestation);
}

function memberwise(a: AttestationV2): string | undefined {
  const proto: unknown = Object.getPrototypeOf(a);
  if (proto !== Object.prototype && proto !== null) return undefined;
  if (Object.getOwnPropertySymbols(a).length > 0) return undefined;
  const hasContext = a.context !== undefined;
  if (Object.keys(a).length !== ATTESTATION_MEMBERS.length - (hasContext ? 0 : 1)) return undefined;
  let out = '{';
  for (const name of ATTESTATION_MEMBERS) {
    const value: unknown = a[name];
    let member: string | undefined;
    if (name === 'context' && !hasContext) continue;
    // Own members only, as canonicalize reads them (Object.keys).
    if (!Object.hasOwn(a, name)) return undefined;
    if (name === 'context') {
      try {
        member = canonicalizeMember(a, name, value);
      } catch {
        return undefined; // canonicalize(attestation) throws the same error
      }
    } else if (typeof value === 'string') member = canonicalString(value);
    else if (value === null) member = 'null';
    else if (typeof value === 'boolean') member = value ? 'true' : 'false';
    // RFC 8785 §3.2.2.3: ECMAScript Number::toString, -0 as "0"; NaN and ±Infinity refused.
    else if (typeof value === 'number' && Number.isFinite(value)) member = String(value);
    // A member missing (undefined) or of another type: canonicalize names and refuses it.
    if (member === undefined) return undefined;
    // Without context the first member is still action_key, so the openings hold either way.
    out += MEMBER_OPENINGS.get(name)! + member;
  }
  return out + '}';
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? canonicalString(value) : undefined;
}

function textOrNull(value: unknown): string | undefined {
  return value === null ? 'null' : text(value);
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
