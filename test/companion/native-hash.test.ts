import { hmac } from '@noble/hashes/hmac.js';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nodeHmacSha256, nodeSha256 } from '../../companion/core/native-hash.ts';

describe('native SHA-256 backends', () => {
  it('SHA-256 gives exactly the portable @noble result for any input', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4096 }), (data) => {
        expect(Buffer.from(nodeSha256(data)).equals(Buffer.from(nobleSha256(data)))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('HMAC-SHA256 gives exactly the portable @noble result for any key and message (keys longer than a block included)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.uint8Array({ maxLength: 4096 }), (key, message) => {
        expect(Buffer.from(nodeHmacSha256(key, message)).equals(Buffer.from(hmac(nobleSha256, key, message)))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
