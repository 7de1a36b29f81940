/** SHA-256 (FIPS 180-4) as the evidence format uses it: bytes in, bytes or lowercase hex out. */
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { hmac } from '@noble/hashes/hmac.js';
import { toHex, utf8 } from './encoding.ts';

export type Sha256Function = (data: Uint8Array) => Uint8Array;

/** SHA-256 as lowercase hex, of bytes or of a string's UTF-8 bytes. */
export type Sha256HexFunction = (data: Uint8Array | string) => string;

let sha256Backend: Sha256Function = nobleSha256;
let sha256HexBackend: Sha256HexFunction | undefined;

/**
 * Replaces the portable SHA-256 with a platform's native one (the companion installs
 * node:crypto, about 6x faster on small inputs here). SHA-256 has one correct output, so this
 * changes speed only; the same pattern as @noble/ed25519's `hashes` hook. `hex`, when given, is
 * the same function writing its own hex and encoding a string itself (node:crypto does both
 * natively: no bytes object for the text, none for the digest), which sha256Hex then uses.
 */
export function useSha256(fn: Sha256Function, hex?: Sha256HexFunction): void {
  sha256Backend = fn;
  sha256HexBackend = hex;
}

export function sha256(data: Uint8Array | string): Uint8Array {
  return sha256Backend(typeof data === 'string' ? utf8(data) : data);
}

export function sha256Hex(data: Uint8Array | string): string {
  return sha256HexBackend ? sha256HexBackend(data) : toHex(sha256(data));
}

export type HmacSha256Function = (key: Uint8Array, message: Uint8Array) => Uint8Array;

let hmacBackend: HmacSha256Function = (key, message) => hmac(nobleSha256, key, message);

/** Replaces the portable HMAC-SHA256 with a native one, like useSha256 (speed only). */
export function useHmacSha256(fn: HmacSha256Function): void {
  hmacBackend = fn;
}

/** HMAC-SHA256 (RFC 2104), used by webhook and callback signatures. */
export function hmacSha256(key: Uint8Array | string, message: Uint8Array | string): Uint8Array {
  const k = typeof key === 'string' ? utf8(key) : key;
  const m = typeof message === 'string' ? utf8(message) : message;
  return hmacBackend(k, m);
}
