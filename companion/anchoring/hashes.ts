/**
 * RFC 9162 §2.1.1 leaf and node hashes with node:crypto's one-shot SHA-256, for the hot paths
 * of anchoring (a leaf per seal, a fold per epoch close, a proof per request). shared/merkle
 * hashes with the portable @noble SHA-256, several times slower on these 33- and 65-byte
 * inputs here; the bytes hashed, and so the hashes, are the same.
 */
import { hash } from 'node:crypto';

const H = 32;
// Reused inputs: hashing is synchronous, so no call can see another's bytes.
const LEAF_INPUT = new Uint8Array(1 + H); // 0x00 ‖ a 32-byte leaf (the tenant logs' only shape)
const NODE_INPUT = new Uint8Array(1 + 2 * H);
NODE_INPUT[0] = 0x01;

/** SHA-256(0x00 ‖ data). */
export function leafHash(data: Uint8Array): Uint8Array {
  if (data.length === H) {
    LEAF_INPUT.set(data, 1);
    return hash('sha256', LEAF_INPUT, 'buffer');
  }
  const input = new Uint8Array(1 + data.length);
  input.set(data, 1);
  return hash('sha256', input, 'buffer');
}

/** SHA-256(0x01 ‖ left ‖ right) over two 32-byte child hashes. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  if (left.length !== H || right.length !== H) throw new RangeError('Merkle child hashes are 32 bytes');
  NODE_INPUT.set(left, 1);
  NODE_INPUT.set(right, 1 + H);
  return hash('sha256', NODE_INPUT, 'buffer');
}

/** Lowercase hex of a hash, through Buffer's native encoder rather than a per-byte loop. */
export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}
