import { hmac } from '@noble/hashes/hmac.js';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { installNativeSha256, nodeHmacSha256, nodeSha256, nodeSha256Hex } from '../../companion/core/native-hash.ts';
import { sha256Hex, useHmacSha256, useSha256 } from '../../shared/hash.ts';

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

describe('native SHA-256 as hex (shared/hash.ts sha256Hex once installed)', () => {
  /** Any UTF-16 string, lone surrogates included (UTF-8 writes each as U+FFFD, as TextEncoder does). */
  const text = fc.oneof(
    fc.string({ unit: 'binary' }),
    fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 64 }).map((units) => String.fromCharCode(...units)),
  );

  it('gives the hex of the portable @noble digest of the bytes, or of the text as UTF-8', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4096 }), text, (data, value) => {
        expect(nodeSha256Hex(data)).toBe(Buffer.from(nobleSha256(data)).toString('hex'));
        expect(nodeSha256Hex(value)).toBe(Buffer.from(nobleSha256(new TextEncoder().encode(value))).toString('hex'));
      }),
      { numRuns: 300 },
    );
  });

  it('sha256Hex takes the installed hex function when there is one, else the hex of the digest', () => {
    try {
      useSha256(nobleSha256, () => 'from the hex function');
      expect(sha256Hex('abc')).toBe('from the hex function');
      useSha256(nobleSha256);
      expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    } finally {
      useSha256(nobleSha256);
    }
  });

  it('is what sha256Hex uses once installed, with the same answers as before', () => {
    const inputs = ['', 'abc', '“quoted” \ud800', new Uint8Array([0, 1, 2, 255])];
    const portable = inputs.map((i) => sha256Hex(i));
    installNativeSha256();
    try {
      expect(inputs.map((i) => sha256Hex(i))).toEqual(portable);
      expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    } finally {
      useSha256(nobleSha256);
      useHmacSha256((key, message) => hmac(nobleSha256, key, message));
    }
  });
});
