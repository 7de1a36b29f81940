/**
 * Byte encodings used by the evidence format: UTF-8, lowercase hex, unpadded base64url
 * (RFC 4648 §5), and a constant-time comparison. Browser-safe: no Buffer.
 */
import { SvcError } from './errors.ts';

const encoder = new TextEncoder();
// ignoreBOM: true keeps a leading U+FEFF in the text. The default (WHATWG Encoding §7.2)
// strips it, so bytes with a BOM would decode to the same text as bytes without one and
// pass a canonical-form check they fail (RFC 8259 §8.1: JSON text carries no BOM).
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Strict UTF-8 decode: invalid sequences throw rather than become U+FFFD. */
export function fromUtf8(bytes: Uint8Array): string {
  try {
    return decoder.decode(bytes);
  } catch {
    throw new SvcError('ENCODING_INVALID', 'expected valid UTF-8 bytes');
  }
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += HEX[b];
  return out;
}

const HEX_RE = /^(?:[0-9a-fA-F]{2})*$/;

export function fromHex(hex: string): Uint8Array {
  if (typeof hex !== 'string' || !HEX_RE.test(hex)) {
    throw new SvcError('ENCODING_INVALID', `expected an even-length hex string, got ${describe(hex)}`);
  }
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** True for a lowercase 64-character hex string: the evidence format's SHA-256 form. */
export function isSha256Hex(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{64}$/.test(value);
}

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const B64URL_INDEX = new Map([...B64URL].map((c, i) => [c, i]));

/** The base64url alphabet as ASCII codes, and a scratch area for short encodings (toBase64Url). */
const B64URL_CODES = Uint8Array.from(B64URL, (c) => c.charCodeAt(0));
const SCRATCH = new Uint8Array(256);
const ascii = new TextDecoder('utf-8');

/** RFC 4648 §5 base64url without padding (as JWS and RFC 8037 use it). */
export function toBase64Url(bytes: Uint8Array): string {
  // Written as ASCII codes and decoded once: one string made, where adding to a string four
  // characters at a time makes a string object per step. A short input (a signature, a key, a
  // hash) is written into the scratch area: encoding is synchronous, so no call sees another's.
  if (bytes.length <= (SCRATCH.length / 4) * 3) return ascii.decode(SCRATCH.subarray(0, encodeInto(bytes, SCRATCH)));
  const out = new Uint8Array(Math.ceil((bytes.length * 4) / 3));
  return ascii.decode(out.subarray(0, encodeInto(bytes, out)));
}

/** Writes the base64url codes of `bytes` into `out` from 0; returns how many. */
function encodeInto(bytes: Uint8Array, out: Uint8Array): number {
  let o = 0;
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out[o++] = B64URL_CODES[n >> 18]!;
    out[o++] = B64URL_CODES[(n >> 12) & 63]!;
    out[o++] = B64URL_CODES[(n >> 6) & 63]!;
    out[o++] = B64URL_CODES[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out[o++] = B64URL_CODES[n >> 18]!;
    out[o++] = B64URL_CODES[(n >> 12) & 63]!;
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out[o++] = B64URL_CODES[n >> 18]!;
    out[o++] = B64URL_CODES[(n >> 12) & 63]!;
    out[o++] = B64URL_CODES[(n >> 6) & 63]!;
  }
  return o;
}

/**
 * Strict decoder: rejects padding, standard-alphabet characters, impossible lengths and
 * non-zero trailing bits, so every byte string has exactly one accepted encoding.
 */
export function fromBase64Url(text: string): Uint8Array {
  if (typeof text !== 'string' || text.length % 4 === 1) {
    throw new SvcError('ENCODING_INVALID', `expected unpadded base64url, got ${describe(text)}`);
  }
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let bits = 0;
  let acc = 0;
  let o = 0;
  for (const c of text) {
    const v = B64URL_INDEX.get(c);
    if (v === undefined) {
      throw new SvcError('ENCODING_INVALID', `expected base64url alphabet, got ${JSON.stringify(c)}`);
    }
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
  }
  if ((acc & ((1 << bits) - 1)) !== 0) {
    throw new SvcError('ENCODING_INVALID', 'base64url has non-zero trailing bits');
  }
  return out;
}

/** Standard base64 with padding (RFC 4648 §4), for PEM bodies. */
export function toBase64(bytes: Uint8Array): string {
  const url = toBase64Url(bytes).replace(/-/g, '+').replace(/_/g, '/');
  return url + '='.repeat((4 - (url.length % 4)) % 4);
}

/**
 * Compares two byte strings in time that depends only on their lengths, so a mismatch
 * position never leaks through timing (used for MACs and secrets).
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** Constant-time comparison of two strings by their UTF-8 bytes. */
export function constantTimeEqualText(a: string, b: string): boolean {
  return constantTimeEqual(utf8(a), utf8(b));
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

function describe(value: unknown): string {
  if (typeof value !== 'string') return typeof value;
  return value.length > 40 ? `${JSON.stringify(value.slice(0, 40))}… (${value.length} chars)` : JSON.stringify(value);
}
