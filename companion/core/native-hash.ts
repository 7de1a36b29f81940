/**
 * The companion hashes with node:crypto (OpenSSL, SHA-NI where present) instead of shared/'s
 * portable @noble SHA-256: about 6x faster on the small inputs of sealing
 * (`npm run bench -- core` measures it). Same function, same bytes; only the speed changes.
 */
import { hash } from 'node:crypto';
import { useSha256 } from '../../shared/hash.ts';

export function nodeSha256(data: Uint8Array): Uint8Array {
  // One-shot crypto.hash (Node 20.12+) skips the Hash object createHash allocates per call.
  return hash('sha256', data, 'buffer');
}

export function installNativeSha256(): void {
  useSha256(nodeSha256);
}
