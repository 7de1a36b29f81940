/**
 * Ed25519 as seals use it: RFC 8032 §5.1, pure (no context, no prehash).
 *
 * Signing is @noble/ed25519 (deterministic, so any RFC 8032 signer reproduces our bytes).
 * Verification prefers the platform's native WebCrypto Ed25519 (Node 20+ and current Chromium,
 * Firefox and Safari) and falls back to @noble/ed25519's curve arithmetic. Both backends
 * must give the same answer on every input, or a seal could verify in the service and fail in a
 * browser (or the reverse). Two rules make that so:
 *
 * 1. `precheckEd25519` runs on the bytes before either backend sees them: lengths, canonical
 *    encodings of A and R (RFC 8032 §5.1.3), S < L (§5.1.7 step 1), and our policy of refusing
 *    small-order A and R (see SMALL_ORDER_Y). Native implementations differ exactly on these
 *    edges (OpenSSL, for one, accepts the identity key with R = identity, S = 0 for every message).
 * 2. The group equation is the cofactorless one, checked as "[S]B - [k]A encodes to exactly the
 *    bytes of R", the form of ref10 and its descendants (OpenSSL in Node, BoringSSL in
 *    Chromium). RFC 8032 §5.1.7 step 3 allows it: "It's sufficient, but not required, to instead
 *    check [S]B = R + [k]A'". @noble/ed25519's own `verify` uses the cofactored equation, which
 *    accepts signatures with a mixed-order R that OpenSSL rejects (see the tests), so the noble
 *    backend evaluates the equation itself with noble's Point.
 */
import { Point, getPublicKey as nobleGetPublicKey, hashes, sign as nobleSign } from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { concatBytes, fromHex, toHex } from './encoding.ts';
import { SvcError } from './errors.ts';
import type { SvcErrorCode } from './errors.ts';

// @noble/ed25519 v3 offers only async methods until a synchronous SHA-512 is wired in (README,
// "Enabling synchronous methods").
hashes.sha512 = sha512;

export const ED25519_SEED_LENGTH = 32;
export const ED25519_PUBLIC_KEY_LENGTH = 32;
export const ED25519_SIGNATURE_LENGTH = 64;

// RFC 8032 §5.1: field prime p and group order L.
const P = 2n ** 255n - 19n;
const L = 2n ** 252n + 27742317777372353535851937790883648493n;

/**
 * y-coordinates of the eight points of small order (the torsion subgroup): 1 (identity), p-1
 * (order 2), 0 (the two points of order 4) and ±y8 (the four points of order 8; y8 as in
 * libsodium's blocklist). With canonical y and the sign bit ignored, these five values cover
 * every small-order encoding.
 *
 * Policy: refuse small-order A and R. An honest key (clamped scalar times B) and an honest R
 * ([r]B) are never small-order, and a small-order key lets anyone forge (identity A, identity R,
 * S = 0 verifies for every message under the cofactorless equation). libsodium and @noble's
 * strict mode refuse small-order A the same way; libsodium refuses small-order R too.
 */
const Y8 = 2707385501144840649318225287225658788936804267575313519463743609750303402022n;
const SMALL_ORDER_Y: ReadonlySet<bigint> = new Set([0n, 1n, P - 1n, Y8, P - Y8]);

/** Why a (public key, signature) pair was refused before any curve arithmetic. */
export type Ed25519Rejection =
  | 'public_key_length'
  | 'public_key_non_canonical'
  | 'public_key_small_order'
  | 'signature_length'
  | 'r_non_canonical'
  | 'r_small_order'
  | 's_out_of_range';

/**
 * The byte-level checks both backends share (cheap: no square roots, no scalar multiplication).
 * Returns null when the pair may go on to the group equation. A key that is not a curve point at
 * all passes here and fails in every backend's decoding.
 */
export function precheckEd25519(publicKey: Uint8Array, signature: Uint8Array): Ed25519Rejection | null {
  if (publicKey.length !== ED25519_PUBLIC_KEY_LENGTH) return 'public_key_length';
  if (signature.length !== ED25519_SIGNATURE_LENGTH) return 'signature_length';
  const a = classifyPointEncoding(publicKey);
  if (a !== 'ok') return a === 'non_canonical' ? 'public_key_non_canonical' : 'public_key_small_order';
  const r = classifyPointEncoding(signature.subarray(0, 32));
  if (r !== 'ok') return r === 'non_canonical' ? 'r_non_canonical' : 'r_small_order';
  // RFC 8032 §5.1.7 step 1: "If S is not less than L, reject" (non-malleability, §8.4).
  if (bytesToNumberLE(signature.subarray(32, 64)) >= L) return 's_out_of_range';
  return null;
}

function classifyPointEncoding(encoded: Uint8Array): 'ok' | 'non_canonical' | 'small_order' {
  const signBit = encoded[31]! >> 7;
  const y = bytesToNumberLE(encoded) & ((1n << 255n) - 1n);
  // RFC 8032 §5.1.3 step 1: "If the resulting value is >= p, decoding fails."
  if (y >= P) return 'non_canonical';
  // RFC 8032 §5.1.3 step 4: "If x = 0, and x_0 = 1, decoding fails." x = 0 exactly when y = ±1.
  if (signBit === 1 && (y === 1n || y === P - 1n)) return 'non_canonical';
  if (SMALL_ORDER_Y.has(y)) return 'small_order';
  return 'ok';
}

/**
 * Throws KEY_INVALID unless `value` is a usable Ed25519 public key: 32 bytes, a canonical
 * encoding of a curve point (RFC 8032 §5.1.3), not of small order.
 */
export function assertEd25519PublicKey(value: unknown): asserts value is Uint8Array {
  if (!isBytes(value)) throw new SvcError('KEY_INVALID', `expected a Uint8Array public key, got ${typeName(value)}`);
  if (value.length !== ED25519_PUBLIC_KEY_LENGTH) {
    throw new SvcError('KEY_INVALID', `expected Uint8Array of length 32, got ${value.length}`);
  }
  const cls = classifyPointEncoding(value);
  if (cls === 'non_canonical') throw new SvcError('KEY_INVALID', 'public key is not a canonical point encoding (RFC 8032 §5.1.3)');
  if (cls === 'small_order') throw new SvcError('KEY_INVALID', 'public key is a point of small order');
  if (decodePoint(value) === undefined) throw new SvcError('KEY_INVALID', 'public key is not a point on edwards25519');
}

export function isEd25519PublicKey(value: unknown): value is Uint8Array {
  try {
    assertEd25519PublicKey(value);
    return true;
  } catch {
    return false;
  }
}

/** RFC 8032 §5.1.5: the public key for a 32-byte seed. */
export function getPublicKey(seed: Uint8Array): Uint8Array {
  assertSeed(seed);
  return nobleGetPublicKey(seed);
}

/** RFC 8032 §5.1.6: deterministic signature (R || S, 64 bytes) of `message` under `seed`. */
export function signEd25519(seed: Uint8Array, message: Uint8Array): Uint8Array {
  assertSeed(seed);
  assertBytes(message, 'message', 'ENCODING_INVALID');
  return nobleSign(message, seed);
}

/**
 * RFC 8032 §5.1.7 verification with the checks above. Never throws on hostile bytes (wrong
 * lengths, non-points, out-of-range S all answer false); throws SvcError only when an argument
 * is not a Uint8Array at all.
 */
export async function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  assertVerifyArguments(publicKey, message, signature);
  // Snapshot before the first await so a caller mutating its buffers cannot change what is
  // verified midway, and both backends see the same bytes.
  const [pk, msg, sig] = [publicKey.slice(), message.slice(), signature.slice()];
  if (precheckEd25519(pk, sig) !== null) return false;
  if (await hasWebCryptoEd25519()) {
    try {
      return await webCryptoEquation(pk, msg, sig);
    } catch (e) {
      // A platform that advertised Ed25519 but refuses it now (policy change, unusual build):
      // stop asking it, and answer with the noble backend, which computes the same predicate.
      if (isNotSupported(e)) webCryptoProbe = Promise.resolve(false);
    }
  }
  return nobleEquation(pk, msg, sig);
}

/**
 * Backend 1: the platform's WebCrypto Ed25519 after the shared precheck. Rejects with the
 * platform's NotSupportedError where WebCrypto has no Ed25519.
 */
export async function verifyWithWebCrypto(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  assertVerifyArguments(publicKey, message, signature);
  const [pk, msg, sig] = [publicKey.slice(), message.slice(), signature.slice()];
  if (precheckEd25519(pk, sig) !== null) return false;
  return webCryptoEquation(pk, msg, sig);
}

/** Backend 2: @noble/ed25519 point arithmetic after the shared precheck. Synchronous. */
export function verifyWithNoble(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  assertVerifyArguments(publicKey, message, signature);
  if (precheckEd25519(publicKey, signature) !== null) return false;
  return nobleEquation(publicKey, message, signature);
}

// ---- key caches -------------------------------------------------------------------------

/**
 * Verifying many seals under one key is the common case: cache the decoded point (a square
 * root) and the imported CryptoKey per key. A verifier sees a handful of service keys, so a
 * small bound suffices and keeps hostile streams of fresh keys from growing memory.
 */
const KEY_CACHE_LIMIT = 64;

/** Insertion-ordered Map used as a small LRU: a hit moves the entry to the back. */
class BoundedCache<V> {
  readonly #entries = new Map<string, V>();
  readonly #limit: number;

  constructor(limit: number) {
    this.#limit = limit;
  }

  get(key: string): V | undefined {
    const value = this.#entries.get(key);
    if (value !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.#limit) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
  }

  deleteIf(key: string, value: V): void {
    if (this.#entries.get(key) === value) this.#entries.delete(key);
  }
}

// ---- noble backend ----------------------------------------------------------------------

const noblePoints = new BoundedCache<Point>(KEY_CACHE_LIMIT);

function nobleEquation(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  const A = decodePoint(publicKey);
  if (A === undefined) return false;
  const r = signature.subarray(0, 32);
  const s = bytesToNumberLE(signature.subarray(32, 64));
  // RFC 8032 §5.1.7 step 2: k = SHA-512(dom2(F, C) || R || A || PH(M)); for pure Ed25519 dom2 is
  // empty and PH is the identity. The hash takes the bytes as received (canonical by precheck).
  const k = bytesToNumberLE(sha512(concatBytes(r, publicKey, message))) % L;
  // RFC 8032 §5.1.7 step 3, cofactorless: [S]B - [k]A must encode to R byte for byte.
  try {
    const check = Point.BASE.multiply(s, false).subtract(A.multiply(k, false));
    return bytesEqual(check.toBytes(), r);
  } catch {
    // noble throws on out-of-range scalars; the precheck already excludes them, but hostile
    // bytes must never surface as an exception.
    return false;
  }
}

/** Strict RFC 8032 §5.1.3 decoding (noble's non-ZIP-215 mode), cached per key. */
function decodePoint(publicKey: Uint8Array): Point | undefined {
  const id = toHex(publicKey);
  let point = noblePoints.get(id);
  if (point === undefined) {
    try {
      point = Point.fromBytes(publicKey, false);
    } catch {
      return undefined;
    }
    noblePoints.set(id, point);
  }
  return point;
}

// ---- WebCrypto backend ------------------------------------------------------------------

const ED25519_ALGORITHM = { name: 'Ed25519' } as const;
const webCryptoKeys = new BoundedCache<Promise<CryptoKey>>(KEY_CACHE_LIMIT);
let webCryptoProbe: Promise<boolean> | undefined;

// Known answer for the probe: RFC 8032 §7.1 TEST 1 (empty message).
const PROBE_PUBLIC_KEY = fromHex('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
const PROBE_SIGNATURE = fromHex(
  'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
);

/**
 * Whether this platform's WebCrypto verifies Ed25519, decided once: it must import a raw key
 * and accept a known-good signature (engines without Ed25519 throw NotSupportedError on import).
 */
export function hasWebCryptoEd25519(): Promise<boolean> {
  webCryptoProbe ??= (async () => {
    try {
      const subtle = globalThis.crypto?.subtle;
      if (subtle === undefined) return false;
      const key = await subtle.importKey('raw', PROBE_PUBLIC_KEY.slice(), ED25519_ALGORITHM, false, ['verify']);
      return (await subtle.verify(ED25519_ALGORITHM, key, PROBE_SIGNATURE.slice(), new Uint8Array(0))) === true;
    } catch {
      return false;
    }
  })();
  return webCryptoProbe;
}

/** Takes owned copies (`slice()`), which are also the ArrayBuffer-backed views WebCrypto types want. */
type OwnedBytes = Uint8Array<ArrayBuffer>;

async function webCryptoEquation(publicKey: OwnedBytes, message: OwnedBytes, signature: OwnedBytes): Promise<boolean> {
  const subtle = globalThis.crypto?.subtle;
  if (subtle === undefined) throw new DOMException('WebCrypto is not available', 'NotSupportedError');
  const key = await importVerifyKey(subtle, publicKey);
  return subtle.verify(ED25519_ALGORITHM, key, signature, message);
}

function importVerifyKey(subtle: SubtleCrypto, publicKey: OwnedBytes): Promise<CryptoKey> {
  const id = toHex(publicKey);
  const cached = webCryptoKeys.get(id);
  if (cached !== undefined) return cached;
  // Cache the promise, not the key, so concurrent first verifications share one import.
  const imported = subtle.importKey('raw', publicKey, ED25519_ALGORITHM, false, ['verify']);
  webCryptoKeys.set(id, imported);
  imported.catch(() => webCryptoKeys.deleteIf(id, imported));
  return imported;
}

function isNotSupported(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'NotSupportedError';
}

// ---- helpers ----------------------------------------------------------------------------

function bytesToNumberLE(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!);
  return n;
}

/** Plain comparison: R and the recomputed R' are public values, nothing here is secret. */
function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Uint8Array check that also holds across realms (iframes, workers), as @noble does it. */
function isBytes(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array || (ArrayBuffer.isView(value) && value.constructor.name === 'Uint8Array');
}

function assertBytes(value: unknown, name: string, code: SvcErrorCode): asserts value is Uint8Array {
  if (!isBytes(value)) throw new SvcError(code, `expected ${name} as Uint8Array, got ${typeName(value)}`);
}

function assertSeed(seed: unknown): asserts seed is Uint8Array {
  assertBytes(seed, 'seed', 'KEY_INVALID');
  if (seed.length !== ED25519_SEED_LENGTH) {
    throw new SvcError('KEY_INVALID', `expected seed of length 32, got ${seed.length}`);
  }
}

function assertVerifyArguments(publicKey: unknown, message: unknown, signature: unknown): void {
  assertBytes(publicKey, 'publicKey', 'KEY_INVALID');
  assertBytes(message, 'message', 'ENCODING_INVALID');
  assertBytes(signature, 'signature', 'SIGNATURE_INVALID_ENCODING');
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value;
  return (value as object).constructor?.name ?? 'object';
}
