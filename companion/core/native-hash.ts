/**
 * The companion hashes with node:crypto (OpenSSL, SHA-NI where present) instead of shared/'s
 * portable @noble SHA-256 and HMAC: about 6x faster on the small inputs of sealing
 * (`npm run bench -- core` measures it) and of webhook signatures. Same functions, same bytes;
 * only the speed changes.
 */
import { createHmac, hash } from 'node:crypto';
import { useHmacSha256, useSha256 } from '../../shared/hash.ts';

export function nodeSha256(data: Uint8Array): Uint8Array {
  // One-shot crypto.hash (Node 20.12+) skips the Hash object createHash allocates per call.
  return plain(hash('sha256', data, 'buffer'));
}

/** SHA-256 as hex, node:crypto encoding a string's UTF-8 and the digest's hex itself (no Buffer for either). */
export function nodeSha256Hex(data: Uint8Array | string): string {
  return hash('sha256', data, 'hex');
}

export function nodeHmacSha256(key: Uint8Array, message: Uint8Array): Uint8Array {
  return plain(createHmac('sha256', key).update(message).digest());
}

/** A view of a Buffer's bytes as the plain Uint8Array @noble returns, so callers see one type. */
function plain(b: Buffer): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

export function installNativeSha256(): void {
  useSha256(nodeSha256, nodeSha256Hex);
  useHmacSha256(nodeHmacSha256);
}
