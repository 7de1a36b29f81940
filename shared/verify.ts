/**
 * Itemized verification of an evidence packet (interface-spec "Verify request"), written as
 * the recipe it follows: canonical form → packet hash → attestation hash → signature → key
 * identity → key status. Every check is always reported; hostile input never throws.
 */
import { assertAttestation, attestationBytes, isRecord, packetHash } from './attestation.ts';
import { fromBase64Url, isSha256Hex } from './encoding.ts';
import { verifyEd25519 } from './ed25519.ts';
import { isSvcError } from './errors.ts';
import { sha256Hex } from './hash.ts';
import type { TrustedKey, TrustedKeySet } from './trusted-keys.ts';
import type { AttestationV2, Check, CheckName, VerifyRequest, VerifyResult } from './types.ts';

export const CHECK_ORDER: readonly CheckName[] = [
  'canonical_form',
  'packet_hash',
  'attestation_hash',
  'signature',
  'key_identity',
  'key_status',
];

export async function verifyEvidence(input: unknown, keys: TrustedKeySet): Promise<VerifyResult> {
  const shape = readVerifyRequest(input);
  if (!shape.ok) return notEvaluated(shape.problems);
  const { request: req, attestationBytes: bytes } = shape.value;
  const att = req.seal.attestation;
  const key = keys.get(req.seal.key_id);

  const checks: Check[] = [
    pass('canonical_form', 'packet fields and attestation are well formed and canonicalizable (RFC 8785)'),
    checkPacketHash(req, att),
    checkAttestationHash(sha256Hex(bytes), req.seal.attestation_hash),
    await checkSignature(key, bytes, req.seal.signature),
    checkKeyIdentity(key, req.seal.key_id, att, req.seal.dev_key),
    checkKeyStatus(key, att),
  ];
  return result(checks, key, att.dev_key);
}

/** Combines checks into a result: verified only when every check passed. */
export function result(checks: Check[], key: TrustedKey | undefined, devKey: boolean): VerifyResult {
  return {
    verified: checks.every((c) => c.ok),
    key_status: key?.status ?? 'unknown',
    dev_key: devKey,
    checks,
  };
}

export function failedChecks(r: VerifyResult): CheckName[] {
  return r.checks.filter((c) => !c.ok).map((c) => c.name);
}

/** packet_hash recomputed from the six committed fields must equal both the packet's and the seal's. */
export function checkPacketHash(fields: VerifyRequest, att: AttestationV2): Check {
  const recomputed = packetHash(fields);
  if (recomputed !== fields.packet_hash) {
    return fail('packet_hash', `recomputed ${recomputed} from the packet fields, packet says ${fields.packet_hash}`);
  }
  if (recomputed !== att.packet_hash) {
    return fail('packet_hash', `recomputed ${recomputed}, the signed attestation commits to ${att.packet_hash}`);
  }
  const mismatched = (['action_key', 'status', 'decision', 'payload_hash', 'review_route'] as const).filter(
    (k) => fields[k] !== att[k],
  );
  if (mismatched.length > 0) {
    return fail('packet_hash', `packet and attestation disagree on ${mismatched.join(', ')}`);
  }
  return pass('packet_hash', `SHA-256 of the JCS packet fields is ${recomputed}, as signed`);
}

export function checkAttestationHash(recomputed: string, claimed: string): Check {
  return recomputed === claimed
    ? pass('attestation_hash', `SHA-256 of the JCS attestation is ${recomputed}`)
    : fail('attestation_hash', `recomputed ${recomputed}, seal says ${claimed}`);
}

export async function checkSignature(key: TrustedKey | undefined, message: Uint8Array, signature: string | Uint8Array): Promise<Check> {
  if (!key) return fail('signature', 'not checked: the signing key is not in the trusted key set');
  let sig: Uint8Array;
  try {
    sig = typeof signature === 'string' ? fromBase64Url(signature) : signature;
  } catch {
    return fail('signature', 'signature is not valid base64url');
  }
  const ok = await verifyEd25519(key.publicKey, message, sig);
  return ok
    ? pass('signature', `Ed25519 signature verifies under key ${key.kid}`)
    : fail('signature', `Ed25519 signature does not verify under key ${key.kid}`);
}

export function checkKeyIdentity(key: TrustedKey | undefined, sealKeyId: string, att: AttestationV2, sealDevKey: boolean): Check {
  if (sealKeyId !== att.key_id) return fail('key_identity', `seal names key ${sealKeyId}, attestation names ${att.key_id}`);
  if (sealDevKey !== att.dev_key) return fail('key_identity', `seal dev_key ${sealDevKey} differs from attestation dev_key ${att.dev_key}`);
  if (!key) return fail('key_identity', `key ${sealKeyId} is not in the trusted key set`);
  if (!key.kidMatchesKey) return fail('key_identity', `trusted key ${key.kid} is not the RFC 7638 thumbprint of its public key`);
  return pass('key_identity', `key ${key.kid} is in the trusted key set and its id is its RFC 7638 thumbprint`);
}

export function checkKeyStatus(key: TrustedKey | undefined, att: AttestationV2): Check {
  if (!key) return fail('key_status', 'unknown: the key is not in the trusted key set');
  if (key.status === 'revoked') return fail('key_status', `key ${key.kid} is revoked`);
  // A production key never signs a sandbox record, nor the reverse (DESIGN.md §3).
  const isSandboxKey = key.status === 'sandbox' || key.devKey;
  if (isSandboxKey !== att.dev_key) {
    return fail('key_status', `attestation dev_key ${att.dev_key} but key ${key.kid} is ${isSandboxKey ? 'a sandbox' : 'a production'} key`);
  }
  if (isSandboxKey) return pass('key_status', 'sandbox key: valid sandbox evidence, never production evidence');
  return pass('key_status', `production key, status ${key.status}`);
}

export function pass(name: CheckName, detail: string): Check {
  return { name, ok: true, detail };
}

export function fail(name: CheckName, detail: string): Check {
  return { name, ok: false, detail };
}

/** When the input cannot be read at all, every check is reported as failed and why. */
export function notEvaluated(problems: string[]): VerifyResult {
  const checks = CHECK_ORDER.map((name) =>
    name === 'canonical_form' ? fail(name, problems.join('; ')) : fail(name, 'not checked: the input is malformed'),
  );
  return { verified: false, key_status: 'unknown', dev_key: false, checks };
}

type Read<T> = { ok: true; value: T } | { ok: false; problems: string[] };

/**
 * Structural validation of a verify request, collecting every bad field path. On success it
 * also returns the attestation's JCS bytes, made once here and then hashed and verified.
 */
export function readVerifyRequest(input: unknown): Read<{ request: VerifyRequest; attestationBytes: Uint8Array }> {
  const problems: string[] = [];
  if (!isRecord(input)) return { ok: false, problems: ['expected a JSON object'] };
  for (const k of ['action_key', 'href', 'status'] as const) {
    if (typeof input[k] !== 'string') problems.push(`${k}: expected string`);
  }
  for (const k of ['packet_hash', 'payload_hash'] as const) {
    if (!isSha256Hex(input[k])) problems.push(`${k}: expected lowercase hex SHA-256`);
  }
  for (const k of ['decision', 'review_route'] as const) {
    if (input[k] !== null && typeof input[k] !== 'string') problems.push(`${k}: expected string or null`);
  }
  const seal = input.seal;
  let bytes: Uint8Array | undefined;
  if (!isRecord(seal)) {
    problems.push('seal: expected object');
  } else {
    if (seal.alg !== 'Ed25519') problems.push('seal.alg: expected "Ed25519"');
    if (typeof seal.key_id !== 'string') problems.push('seal.key_id: expected string');
    if (typeof seal.dev_key !== 'boolean') problems.push('seal.dev_key: expected boolean');
    if (!isSha256Hex(seal.attestation_hash)) problems.push('seal.attestation_hash: expected lowercase hex SHA-256');
    if (typeof seal.signature !== 'string') problems.push('seal.signature: expected base64url string');
    try {
      assertAttestation(seal.attestation);
      bytes = attestationBytes(seal.attestation); // refuses what RFC 8785 cannot represent
    } catch (e) {
      if (!isSvcError(e)) throw e;
      const errors = (e.details?.errors as { path: string; message: string }[] | undefined) ?? [{ path: '', message: e.message }];
      for (const err of errors) problems.push(`seal.attestation${err.path ? '.' + err.path : ''}: ${err.message}`);
    }
  }
  return problems.length > 0 || bytes === undefined
    ? { ok: false, problems }
    : { ok: true, value: { request: input as unknown as VerifyRequest, attestationBytes: bytes } };
}
