/**
 * The 4-file seal bundle (DESIGN.md §3), verifiable with stock tools and no code of ours:
 *   payload.json      JCS bytes of the packet fields; its SHA-256 is packet_hash
 *   attestation.json  JCS bytes of the attestation v2 document (commits to packet_hash)
 *   attestation.sig   the raw 64-byte Ed25519 signature over attestation.json
 *   verify.json       the recipe: key id, public key (PEM and JWK), canonicalization, hashes,
 *                     and the exact commands. A pure function of the attestation and the key,
 *                     so the verifier regenerates it and any edit to it is detected.
 */
import { assertAttestation, attestationBytes, isRecord, packetFields } from './attestation.ts';
import { canonicalBytes, isCanonical, parseJson } from './canonical-json.ts';
import { fromBase64Url, fromUtf8, toBase64Url } from './encoding.ts';
import { SvcError, isSvcError } from './errors.ts';
import { sha256Hex } from './hash.ts';
import { jwkToPublicKey, keyId, publicKeyToSpkiPem } from './keys.ts';
import type { TrustedKey, TrustedKeySet } from './trusted-keys.ts';
import type { AttestationV2, Check, PacketFields, Seal, VerifyRequest, VerifyResult } from './types.ts';
import {
  checkAttestationHash,
  checkKeyIdentity,
  checkKeyStatus,
  checkPacketHash,
  checkSignature,
  fail,
  notEvaluated,
  pass,
  result,
} from './verify.ts';

export const BUNDLE_FORMAT = 'svc.seal-bundle/v1';
export const BUNDLE_FILE_NAMES = ['payload.json', 'attestation.json', 'attestation.sig', 'verify.json'] as const;
export type BundleFileName = (typeof BUNDLE_FILE_NAMES)[number];
export type SealBundle = Record<BundleFileName, Uint8Array>;
/**
 * Beside a bundle's 4 files once the record's epoch has closed: the record's inclusion proof
 * (interface-spec "Inclusion proof") with the epoch's RFC 3161 tokens and witness
 * cosignatures, which a verifier's timestamp and witness policies are checked on.
 */
export const BUNDLE_PROOF_FILE = 'inclusion-proof.json';

export function buildBundle(fields: PacketFields, seal: Seal, publicKey: Uint8Array): SealBundle {
  const payload = canonicalBytes(packetFields(fields));
  const attestation = attestationBytes(seal.attestation);
  if (sha256Hex(payload) !== seal.attestation.packet_hash) {
    throw new SvcError('BUNDLE_MALFORMED', 'packet fields do not hash to the packet_hash the seal commits to');
  }
  return {
    'payload.json': payload,
    'attestation.json': attestation,
    'attestation.sig': signatureBytes(seal.signature),
    'verify.json': canonicalBytes(bundleRecipe(seal.attestation, seal.attestation_hash, publicKey)),
  };
}

function signatureBytes(signature: string): Uint8Array {
  try {
    return fromBase64Url(signature);
  } catch {
    throw new SvcError('BUNDLE_MALFORMED', 'seal signature is not base64url');
  }
}

/**
 * verify.json: everything an auditor needs, and nothing secret. The key's status is left out
 * on purpose: it changes over time (active → retired) while a bundle must stay verifiable.
 */
export function bundleRecipe(att: AttestationV2, attestationHash: string, publicKey: Uint8Array): Record<string, unknown> {
  const jwk = { kty: 'OKP', crv: 'Ed25519', x: toBase64Url(publicKey), kid: keyId(publicKey), alg: 'EdDSA', use: 'sig' };
  return {
    format: BUNDLE_FORMAT,
    action_key: att.action_key,
    alg: 'Ed25519',
    key_id: att.key_id,
    dev_key: att.dev_key,
    public_key: { jwk, pem: publicKeyToSpkiPem(publicKey) },
    canonicalization: 'RFC 8785 (JCS), UTF-8 bytes, no trailing newline',
    hash: 'SHA-256, lowercase hex',
    files: {
      'payload.json': { sha256: att.packet_hash, holds: 'the packet fields action_key, decision, href, payload_hash, review_route, status' },
      'attestation.json': { sha256: attestationHash, holds: `the attestation document (${att.format}) that was signed` },
      'attestation.sig': { holds: 'the raw 64-byte Ed25519 signature (RFC 8032) over attestation.json' },
    },
    checks: [
      'sha256(payload.json) equals packet_hash inside attestation.json',
      'sha256(attestation.json) equals files["attestation.json"].sha256',
      'attestation.sig verifies over attestation.json under the key whose RFC 7638 thumbprint is key_id',
      'key_id is listed in the tenant\'s published keys (/.well-known/service-keys.json) and is not revoked',
    ],
    commands: [
      `sha256sum payload.json    # expect ${att.packet_hash}`,
      `sha256sum attestation.json    # expect ${attestationHash}`,
      'openssl pkeyutl -verify -pubin -inkey key.pem -rawin -in attestation.json -sigfile attestation.sig',
    ],
    trust: att.dev_key
      ? 'SANDBOX evidence signed with the public, reproducible dev key (seed = SHA-256("svc-sandbox-dev-key/v1")). Never production evidence.'
      : `Take key.pem from the tenant's published keys (kid ${att.key_id}), not from this file; this copy is for convenience.`,
  };
}

/**
 * Verifies a bundle's four files with the same itemized checks as an online verify, plus:
 * both JSON files must be exactly canonical, and verify.json must be the recipe for this
 * attestation and key.
 */
export async function verifyBundle(files: Partial<Record<string, Uint8Array>>, keys: TrustedKeySet): Promise<VerifyResult> {
  const missing = BUNDLE_FILE_NAMES.filter((n) => !(files[n] instanceof Uint8Array));
  if (missing.length > 0) return notEvaluated([`missing file(s): ${missing.join(', ')}`]);
  const f = files as SealBundle;

  const problems: string[] = [];
  const payload = readCanonical('payload.json', f['payload.json'], problems);
  const att = readCanonical('attestation.json', f['attestation.json'], problems);
  const recipe = readCanonical('verify.json', f['verify.json'], problems);
  try {
    assertAttestation(att);
  } catch (e) {
    if (!isSvcError(e)) throw e;
    problems.push(`attestation.json: ${e.message}`);
  }
  if (!isRecord(payload)) problems.push('payload.json: expected a JSON object');
  if (!isRecord(recipe) || typeof recipe.key_id !== 'string') problems.push('verify.json: expected a recipe with key_id');
  if (problems.length > 0) return notEvaluated(problems);

  const attestation = att as AttestationV2;
  const r = recipe as Record<string, unknown>;
  const key: TrustedKey | undefined = keys.get(attestation.key_id);
  const fields = { ...(payload as unknown as PacketFields), packet_hash: sha256Hex(f['payload.json']) } as VerifyRequest;
  const attestationHash = sha256Hex(f['attestation.json']);

  const checks: Check[] = [
    checkRecipe(r, attestation, attestationHash, key),
    checkPacketHash(fields, attestation),
    checkAttestationHash(attestationHash, String((r.files as Record<string, { sha256?: unknown }> | undefined)?.['attestation.json']?.sha256)),
    await checkSignature(key, f['attestation.json'], f['attestation.sig']),
    checkKeyIdentity(key, String(r.key_id), attestation, r.dev_key === true),
    checkKeyStatus(key, attestation),
  ];
  return result(checks, key, attestation.dev_key);
}

/** canonical_form for a bundle: canonical JSON files and a verify.json that is exactly the recipe. */
function checkRecipe(recipe: Record<string, unknown>, att: AttestationV2, attestationHash: string, key: TrustedKey | undefined): Check {
  // Regenerate with the trusted key when we have it (a swapped key then shows here and in
  // key_identity); otherwise with the key the recipe claims, to still catch other edits.
  let publicKey = key?.publicKey;
  if (!publicKey) {
    try {
      publicKey = jwkToPublicKey((recipe.public_key as { jwk?: unknown } | undefined)?.jwk);
    } catch {
      return fail('canonical_form', 'verify.json: public_key.jwk is not an Ed25519 JWK');
    }
  }
  const expected = sha256Hex(canonicalBytes(bundleRecipe(att, attestationHash, publicKey)));
  return expected === sha256Hex(canonicalBytes(recipe))
    ? pass('canonical_form', 'payload.json and attestation.json are exact RFC 8785 bytes; verify.json is the recipe for this seal')
    : fail('canonical_form', 'verify.json differs from the recipe for this attestation and key (edited, or made for another key)');
}

function readCanonical(name: string, bytes: Uint8Array, problems: string[]): unknown {
  try {
    const text = fromUtf8(bytes);
    if (!isCanonical(text)) {
      problems.push(`${name}: not exact RFC 8785 canonical bytes`);
      return undefined;
    }
    return parseJson(text);
  } catch (e) {
    if (!isSvcError(e)) throw e;
    problems.push(`${name}: ${e.message}`);
    return undefined;
  }
}

