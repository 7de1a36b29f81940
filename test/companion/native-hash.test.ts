import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nodeSha256 } from '../../companion/core/native-hash.ts';

describe('native SHA-256 backend', () => {
  it('gives exactly the portable @noble result for any input', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4096 }), (data) => {
        expect(Buffer.from(nodeSha256(data)).equals(Buffer.from(nobleSha256(data)))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
