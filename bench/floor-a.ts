/**
 * Floor A's work, shared by the gate bench's floors (companion-gate.ts) and the HTTP ceiling's
 * server (http-ceiling-server.ts), so both measure exactly the same thing: canonicalize a
 * document (RFC 8785), three chained SHA-256, one Ed25519 signature with node:crypto.
 */
import { createHash, createPrivateKey, randomBytes, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { canonicalBytes } from '../shared/canonical-json.ts';

/** A throwaway Ed25519 key (PKCS#8 DER: the fixed prefix, then a random 32-byte seed). */
export function floorAKey(): KeyObject {
  return createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), randomBytes(32)]), format: 'der', type: 'pkcs8' });
}

/** One seal's crypto: the last of the three hashes (hex) and the signature over the canonical bytes. */
export function floorAWork(doc: object, key: KeyObject): { hash: string; signature: Buffer } {
  const bytes = canonicalBytes(doc);
  const h1 = createHash('sha256').update(bytes).digest('hex');
  const h2 = createHash('sha256').update(h1).digest('hex');
  const hash = createHash('sha256').update(h2).digest('hex');
  return { hash, signature: sign(null, bytes, key) };
}
