/**
 * Name-based UUIDs (RFC 9562 §5.5, version 5: SHA-1 of namespace ‖ name). OSCAL accepts
 * version 4 or 5 UUIDs; deriving them from what they identify keeps a document a pure function
 * of the evidence, so the same evidence always exports to the same bytes and digest.
 * SHA-1 here is an identifier scheme the RFC fixes, not a security primitive.
 */
import { createHash } from 'node:crypto';

/** RFC 9562 Appendix A: the URL namespace. */
const NAMESPACE_URL = '6ba7b811-9dad-11d1-80b4-00c04fd430c8';

export function uuidV5(name: string, namespace: string = NAMESPACE_URL): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  const hash = createHash('sha1').update(ns).update(name, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50; // version 5
  hash[8] = (hash[8]! & 0x3f) | 0x80; // variant 10 (RFC 9562 §4.1)
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
