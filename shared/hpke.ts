/**
 * Review context sealed to reviewers' devices with HPKE (RFC 9180), so the gate service carries
 * it without ever being able to read it.
 *
 * Suite (RFC 9180 §7): DHKEM(X25519, HKDF-SHA256) 0x0020, HKDF-SHA256 0x0001,
 * ChaCha20-Poly1305 0x0003, base mode (mode_base, §5.1.1), single-shot Seal/Open (§6.1).
 * - info: the fixed REVIEW_CONTEXT_INFO, so a ciphertext made for this purpose opens for no
 *   other (§8.1: info binds the application context).
 * - aad: the JCS bytes (RFC 8785) of {action_key, payload_hash}: a ciphertext moved to another
 *   paused action, or one whose sealed payload_hash differs, does not open.
 *
 * The plaintext is the exact gate request body the employee's browser sent (and, for files,
 * their name, type, size and hash); `checkReviewContext` recomputes payload_hash from it with
 * the same code the gate used (./attestation.ts payloadCommitment), so the reviewer sees
 * whether it is exactly what was gated.
 *
 * Runs in the browser and in Node: WebCrypto only (no Buffer). A recipient's private key may be
 * a non-extractable CryptoKey pair (the console keeps one in IndexedDB).
 */
import { CipherSuite, DhkemX25519HkdfSha256, HkdfSha256 } from '@hpke/core';
import { Chacha20Poly1305 } from '@hpke/chacha20poly1305';
import { isRecord, payloadHash } from './attestation.ts';
import { canonicalBytes, parseJson } from './canonical-json.ts';
import { fromBase64Url, fromUtf8, utf8 } from './encoding.ts';
import { SvcError } from './errors.ts';
import { sha256Hex } from './hash.ts';

/** RFC 9180 §7.1, §7.2, §7.3 identifiers of the suite this module uses. */
export const REVIEW_CONTEXT_SUITE = { kem_id: 0x0020, kdf_id: 0x0001, aead_id: 0x0003 } as const;
/** RFC 9180 §5.1: the application's info string; changing it is a new format version. */
export const REVIEW_CONTEXT_INFO_TEXT = 'action-gate review context v1';
export const REVIEW_CONTEXT_INFO = utf8(REVIEW_CONTEXT_INFO_TEXT);
/** Format of the plaintext document. */
export const REVIEW_CONTEXT_FORMAT = 'svc.review-context/v1';
/** RFC 9180 §7.1: Npk (and Nenc) of DHKEM(X25519, HKDF-SHA256). */
export const X25519_PUBLIC_KEY_BYTES = 32;

/** A ciphertext for one recipient: RFC 9180 §6.1 Seal's (enc, ct). */
export interface SealedContext {
  enc: Uint8Array;
  ct: Uint8Array;
}

/** What binds a ciphertext to one paused action (the associated data). */
export interface ContextBinding {
  action_key: string;
  payload_hash: string;
}

/** A file's description as the employee's browser knows it; the name is optional. */
export interface ContextFile {
  name?: string;
  media_type: string;
  size: number;
  sha256: string;
  name_sha256: string;
}

/** The plaintext: the gate request body as sent, and what the body commits to by hash only. */
export interface ReviewContextDocument {
  format: typeof REVIEW_CONTEXT_FORMAT;
  gate_request: Record<string, unknown>;
  files?: ContextFile[];
}

let suite: CipherSuite | undefined;

/** The one cipher suite (RFC 9180 §7), built once. */
export function reviewContextSuite(): CipherSuite {
  return (suite ??= new CipherSuite({ kem: new DhkemX25519HkdfSha256(), kdf: new HkdfSha256(), aead: new Chacha20Poly1305() }));
}

/** The associated data: JCS bytes of {action_key, payload_hash} (RFC 8785 §3.2.3 member order). */
export function reviewContextAad(binding: ContextBinding): Uint8Array {
  return canonicalBytes({ action_key: binding.action_key, payload_hash: binding.payload_hash });
}

/** A copy in a fresh ArrayBuffer: WebCrypto and @hpke/core take buffers, not views into larger ones. */
function buffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.slice().buffer as ArrayBuffer;
}

/** Imports a raw X25519 public key (RFC 7748 §5: 32 bytes, little-endian u-coordinate). */
export async function importRecipientKey(raw: Uint8Array): Promise<CryptoKey> {
  if (!(raw instanceof Uint8Array) || raw.length !== X25519_PUBLIC_KEY_BYTES) {
    throw new SvcError('HPKE_KEY_INVALID', `expected a raw X25519 public key of ${X25519_PUBLIC_KEY_BYTES} bytes, got ${raw instanceof Uint8Array ? raw.length : typeof raw}`);
  }
  try {
    return await reviewContextSuite().kem.deserializePublicKey(buffer(raw));
  } catch {
    throw new SvcError('HPKE_KEY_INVALID', 'the X25519 public key could not be imported');
  }
}

/** RFC 9180 §6.1 SealBase(pkR, info, aad, pt) to one recipient's raw public key. */
export async function sealReviewContext(recipientPublicKey: Uint8Array, plaintext: Uint8Array, binding: ContextBinding): Promise<SealedContext> {
  const pkR = await importRecipientKey(recipientPublicKey);
  const sender = await reviewContextSuite().createSenderContext({ recipientPublicKey: pkR, info: buffer(REVIEW_CONTEXT_INFO) });
  const ct = await sender.seal(buffer(plaintext), buffer(reviewContextAad(binding)));
  return { enc: new Uint8Array(sender.enc), ct: new Uint8Array(ct) };
}

/**
 * RFC 9180 §6.1 OpenBase(enc, skR, info, aad, ct). Throws HPKE_OPEN_FAILED for a tampered or
 * truncated ciphertext, another recipient's, or one bound to another action or payload_hash.
 */
export async function openReviewContext(recipientKey: CryptoKeyPair | CryptoKey, sealed: SealedContext, binding: ContextBinding): Promise<Uint8Array> {
  try {
    const recipient = await reviewContextSuite().createRecipientContext({ recipientKey, enc: buffer(sealed.enc), info: buffer(REVIEW_CONTEXT_INFO) });
    return new Uint8Array(await recipient.open(buffer(sealed.ct), buffer(reviewContextAad(binding))));
  } catch {
    throw new SvcError('HPKE_OPEN_FAILED', 'the review context did not open: it was altered, is for another device, or is bound to another action or payload_hash');
  }
}

/** A new recipient key pair (browser: pass extractable=false to keep the private key in WebCrypto). */
export async function generateRecipientKeyPair(): Promise<CryptoKeyPair> {
  return reviewContextSuite().kem.generateKeyPair();
}

/** The raw 32 bytes of a recipient's public key, as registered with the companion. */
export async function rawPublicKey(key: CryptoKey): Promise<Uint8Array> {
  return new Uint8Array(await reviewContextSuite().kem.serializePublicKey(key));
}

/** The plaintext bytes: the document's JCS form, so the same document always encrypts the same bytes. */
export function encodeReviewContext(doc: ReviewContextDocument): Uint8Array {
  return canonicalBytes(doc);
}

/** Parses the plaintext back; throws REVIEW_CONTEXT_MALFORMED listing what is wrong. */
export function decodeReviewContext(bytes: Uint8Array): ReviewContextDocument {
  let value: unknown;
  try {
    value = parseJson(fromUtf8(bytes));
  } catch {
    throw new SvcError('REVIEW_CONTEXT_MALFORMED', 'the review context is not JSON');
  }
  const problems: string[] = [];
  if (!isRecord(value)) throw new SvcError('REVIEW_CONTEXT_MALFORMED', 'expected a JSON object');
  if (value.format !== REVIEW_CONTEXT_FORMAT) problems.push(`format: expected ${REVIEW_CONTEXT_FORMAT}`);
  if (!isRecord(value.gate_request)) problems.push('gate_request: expected an object');
  if (value.files !== undefined) {
    if (!Array.isArray(value.files)) problems.push('files: expected an array');
    else value.files.forEach((f, i) => {
      if (!isRecord(f) || typeof f.media_type !== 'string' || typeof f.size !== 'number' || typeof f.sha256 !== 'string' || typeof f.name_sha256 !== 'string' || (f.name !== undefined && typeof f.name !== 'string')) {
        problems.push(`files/${i}: expected {name?, media_type, size, sha256, name_sha256}`);
      }
    });
  }
  if (problems.length > 0) throw new SvcError('REVIEW_CONTEXT_MALFORMED', problems.join('; '), { problems });
  return value as unknown as ReviewContextDocument;
}

export interface ContextCheck {
  /** True only when payload_hash recomputed from the plaintext equals the sealed one and every file name matches its hash. */
  match: boolean;
  /** payload_hash recomputed from gate_request (DESIGN.md §3: JCS of the body minus idempotency_key). */
  computed: string;
  expected: string;
  /** Indexes of files whose name does not hash to the name_sha256 beside it. */
  file_name_mismatches: number[];
}

/** Recomputes payload_hash from the decrypted gate request and compares it with the sealed one. */
export function checkReviewContext(doc: ReviewContextDocument, expectedPayloadHash: string): ContextCheck {
  const computed = payloadHash(doc.gate_request);
  const mismatches = (doc.files ?? []).flatMap((f, i) => (f.name !== undefined && sha256Hex(utf8(f.name)) !== f.name_sha256 ? [i] : []));
  return { match: computed === expectedPayloadHash && mismatches.length === 0, computed, expected: expectedPayloadHash, file_name_mismatches: mismatches };
}

/** What a reviewer's browser makes of the ciphertext sealed to its device. */
export type ReadContext = { kind: 'opened'; doc: ReviewContextDocument; check: ContextCheck } | { kind: 'refused'; why: string };

/**
 * Opens a ciphertext as served (base64url `enc` and `ct`), decodes it and recomputes
 * payload_hash against the one in `binding`: the console and the extension show what this says.
 * `binding.payload_hash` must be the hash of a record whose seal the caller verified.
 */
export async function readReviewContext(recipientKey: CryptoKeyPair | CryptoKey, sealed: { enc: string; ct: string }, binding: ContextBinding): Promise<ReadContext> {
  let plaintext: Uint8Array;
  try {
    plaintext = await openReviewContext(recipientKey, { enc: fromBase64Url(sealed.enc), ct: fromBase64Url(sealed.ct) }, binding);
  } catch {
    return { kind: 'refused', why: 'the context did not open: it was altered, is bound to another action or payload_hash, or was not sealed to this device' };
  }
  let doc: ReviewContextDocument;
  try {
    doc = decodeReviewContext(plaintext);
  } catch {
    return { kind: 'refused', why: 'the context opened but is not a review context document' };
  }
  return { kind: 'opened', doc, check: checkReviewContext(doc, binding.payload_hash) };
}
