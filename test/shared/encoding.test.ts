/**
 * shared/encoding.ts and shared/hash.ts against published vectors: RFC 4648 §9/§10
 * (base64/base64url), FIPS 180-2 Appendix B (SHA-256), RFC 4231 §4 (HMAC-SHA-256); and
 * against Node's own Buffer/crypto as independent oracles for arbitrary inputs.
 */
import { Buffer } from 'node:buffer';
import { createHash, createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  concatBytes,
  constantTimeEqual,
  constantTimeEqualText,
  fromBase64Url,
  fromHex,
  fromUtf8,
  isSha256Hex,
  toBase64,
  toBase64Url,
  toHex,
  utf8,
} from '../../shared/encoding.ts';
import { SvcError } from '../../shared/errors.ts';
import { hmacSha256, sha256, sha256Hex } from '../../shared/hash.ts';

function expectInvalid(f: () => unknown): void {
  let error: unknown;
  try {
    f();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(SvcError);
  expect((error as SvcError).code).toBe('ENCODING_INVALID');
}

const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

describe('utf8 / fromUtf8', () => {
  it('encodes and decodes 1- to 4-byte sequences', () => {
    const text = 'A\u00e9\u20ac\u{1f600}';
    const bytes = Uint8Array.of(0x41, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80);
    expect(utf8(text)).toEqual(bytes);
    expect(fromUtf8(bytes)).toBe(text);
  });

  it.each([
    ['a stray continuation byte', [0x80]],
    ['0xff', [0x61, 0xff]],
    ['an overlong NUL (C0 80)', [0xc0, 0x80]],
    ['an encoded surrogate (ED A0 80)', [0xed, 0xa0, 0x80]],
    ['a truncated sequence', [0xe2, 0x82]],
    ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
  ])('rejects %s instead of substituting U+FFFD', (_label, bytes) => {
    expectInvalid(() => fromUtf8(Uint8Array.from(bytes)));
  });

  it('keeps a leading BOM, so decoded text always re-encodes to the same bytes', () => {
    const bytes = Uint8Array.of(0xef, 0xbb, 0xbf, 0x7b, 0x7d);
    expect(fromUtf8(bytes)).toBe('\ufeff{}');
    expect(utf8(fromUtf8(bytes))).toEqual(bytes);
  });

  it('round-trips any well-formed string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        expect(fromUtf8(utf8(s))).toBe(s);
      }),
    );
  });
});

describe('hex', () => {
  it('writes every byte value as two lowercase digits', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    const hex = toHex(all);
    expect(hex).toHaveLength(512);
    expect(hex.slice(0, 8)).toBe('00010203');
    expect(hex.slice(-8)).toBe('fcfdfeff');
    expect(hex).toMatch(/^[0-9a-f]*$/);
    expect(fromHex(hex)).toEqual(all);
  });

  it('reads upper and mixed case, and the empty string', () => {
    expect(fromHex('DEADbeef')).toEqual(Uint8Array.of(0xde, 0xad, 0xbe, 0xef));
    expect(fromHex('')).toEqual(new Uint8Array(0));
  });

  it.each(['0', 'abc', 'zz', '0g', '0x00', ' 00', '00 ', '00\n', '-1', '+1', '\u0660\u0661'])('rejects %j', (text) => {
    expectInvalid(() => fromHex(text));
  });

  it('rejects non-strings', () => {
    expectInvalid(() => fromHex(42 as unknown as string));
  });

  it('agrees with Buffer and round-trips arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const hex = toHex(bytes);
        expect(hex).toBe(Buffer.from(bytes).toString('hex'));
        expect(fromHex(hex)).toEqual(bytes);
        expect(fromHex(hex.toUpperCase())).toEqual(bytes);
      }),
    );
  });

  it('isSha256Hex accepts exactly 64 lowercase hex digits', () => {
    const digest = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
    expect(isSha256Hex(digest)).toBe(true);
    for (const bad of [digest.toUpperCase(), digest.slice(1), `${digest}0`, `${digest.slice(1)}g`, 42, null]) {
      expect(isSha256Hex(bad)).toBe(false);
    }
  });
});

// RFC 4648 §10 test vectors. None of them uses the two characters where base64 and base64url
// differ, so the unpadded base64url form is the §10 text without '='.
const RFC4648_SECTION_10: Array<[string, string]> = [
  ['', ''],
  ['f', 'Zg=='],
  ['fo', 'Zm8='],
  ['foo', 'Zm9v'],
  ['foob', 'Zm9vYg=='],
  ['fooba', 'Zm9vYmE='],
  ['foobar', 'Zm9vYmFy'],
];

// RFC 4648 §9 illustrations: these do produce '+', which base64url writes as '-'.
const RFC4648_SECTION_9: Array<[string, string]> = [
  ['14fb9c03d97e', 'FPucA9l+'],
  ['14fb9c03d9', 'FPucA9k='],
  ['14fb9c03', 'FPucAw=='],
];

const toUrlAlphabet = (b64: string) => b64.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');

describe('base64url (RFC 4648 §5, unpadded)', () => {
  it.each(RFC4648_SECTION_10)('§10: %j ↔ %s', (input, padded) => {
    const url = toUrlAlphabet(padded);
    expect(toBase64Url(ascii(input))).toBe(url);
    expect(fromBase64Url(url)).toEqual(ascii(input));
  });

  it.each(RFC4648_SECTION_9)('§9: %s ↔ %s', (hex, padded) => {
    const url = toUrlAlphabet(padded);
    expect(toBase64Url(fromHex(hex))).toBe(url);
    expect(fromBase64Url(url)).toEqual(fromHex(hex));
  });

  it('writes what Buffer writes as base64url for every length around the short and long ways, in any order of calls', () => {
    const bytes = Uint8Array.from({ length: 700 }, (_, i) => (i * 151 + 7) & 0xff);
    const lengths = [...Array.from({ length: 200 }, (_, i) => i), 400, 191, 192, 193, 194, 195, 699, 0, 64, 32, 1];
    for (const n of lengths) {
      const input = bytes.subarray(700 - n);
      expect(toBase64Url(input)).toBe(Buffer.from(input).toString('base64url'));
    }
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (input) => {
        expect(toBase64Url(input)).toBe(Buffer.from(input).toString('base64url'));
      }),
      { numRuns: 300 },
    );
  });

  it('uses - and _ for values 62 and 63', () => {
    expect(toBase64Url(Uint8Array.of(0xfb, 0xff, 0xbf))).toBe('-_-_');
    expect(fromBase64Url('-_-_')).toEqual(Uint8Array.of(0xfb, 0xff, 0xbf));
  });

  it.each([
    ['padding', 'Zg=='],
    ['partial padding', 'Zm8='],
    ['a lone pad', '='],
    ['padding inside', 'Zg==Zg'],
    ['the standard alphabet +', 'FPucA9l+'],
    ['the standard alphabet /', 'ab/c'],
    ['whitespace', 'Zm9v Zg'],
    ['a line break', 'Zm9v\nZg'],
    ['a non-ASCII letter', 'Zm9\u00e9'],
    ['an impossible length (4n+1)', 'Zm9vY'],
    ['a single character', 'Z'],
    ['non-zero trailing bits after 1 byte', 'Zh'],
    ['non-zero trailing bits after 2 bytes', 'Zm9'],
  ])('rejects %s: %j', (_label, text) => {
    expectInvalid(() => fromBase64Url(text));
  });

  it('rejects non-strings', () => {
    expectInvalid(() => fromBase64Url(null as unknown as string));
  });

  it('agrees with Buffer and round-trips arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const text = toBase64Url(bytes);
        expect(text).toBe(Buffer.from(bytes).toString('base64url'));
        expect(fromBase64Url(text)).toEqual(bytes);
      }),
    );
  });

  it('accepts only the one encoding of each byte string', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 12 }), (text) => {
        let decoded: Uint8Array | undefined;
        try {
          decoded = fromBase64Url(text);
        } catch (e) {
          expect((e as SvcError).code).toBe('ENCODING_INVALID');
          return;
        }
        expect(toBase64Url(decoded)).toBe(text);
      }),
      { numRuns: 500 },
    );
  });
});

describe('toBase64 (RFC 4648 §4, padded)', () => {
  it.each(RFC4648_SECTION_10)('§10: %j → %s', (input, padded) => {
    expect(toBase64(ascii(input))).toBe(padded);
  });

  it.each(RFC4648_SECTION_9)('§9: %s → %s', (hex, padded) => {
    expect(toBase64(fromHex(hex))).toBe(padded);
  });

  it('agrees with Buffer for arbitrary bytes, including + and /', () => {
    expect(toBase64(Uint8Array.of(0xfb, 0xff, 0xbf))).toBe('+/+/');
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        expect(toBase64(bytes)).toBe(Buffer.from(bytes).toString('base64'));
      }),
    );
  });
});

describe('constantTimeEqual', () => {
  it('is true only for the same bytes', () => {
    expect(constantTimeEqual(new Uint8Array(0), new Uint8Array(0))).toBe(true);
    expect(constantTimeEqual(Uint8Array.of(1, 2, 3), Uint8Array.of(1, 2, 3))).toBe(true);
    expect(constantTimeEqual(Uint8Array.of(1, 2, 3), Uint8Array.of(0, 2, 3))).toBe(false);
    expect(constantTimeEqual(Uint8Array.of(1, 2, 3), Uint8Array.of(1, 2, 4))).toBe(false);
    expect(constantTimeEqual(Uint8Array.of(1, 2, 3), Uint8Array.of(1, 2))).toBe(false);
    expect(constantTimeEqual(Uint8Array.of(1, 2), Uint8Array.of(1, 2, 3))).toBe(false);
    expect(constantTimeEqual(Uint8Array.of(0x80), Uint8Array.of(0x00))).toBe(false);
  });

  it('agrees with Buffer.equals on arbitrary pairs', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 8 }), fc.uint8Array({ maxLength: 8 }), (a, b) => {
        expect(constantTimeEqual(a, b)).toBe(Buffer.from(a).equals(Buffer.from(b)));
        expect(constantTimeEqual(a, Uint8Array.from(a))).toBe(true);
      }),
    );
  });

  it('constantTimeEqualText compares strings by their UTF-8 bytes', () => {
    expect(constantTimeEqualText('v0=abc', 'v0=abc')).toBe(true);
    expect(constantTimeEqualText('v0=abc', 'v0=abd')).toBe(false);
    expect(constantTimeEqualText('\u00e9', 'e\u0301')).toBe(false);
  });
});

describe('concatBytes', () => {
  it('joins in order', () => {
    expect(concatBytes()).toEqual(new Uint8Array(0));
    expect(concatBytes(Uint8Array.of(0), new Uint8Array(0), Uint8Array.of(1, 2))).toEqual(Uint8Array.of(0, 1, 2));
  });
});

describe('SHA-256 (FIPS 180-2 Appendix B)', () => {
  it.each([
    ['"abc" (B.1)', 'abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
    ['the 448-bit message (B.2)', 'abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq', '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1'],
    ['one million "a" (B.3)', 'a'.repeat(1_000_000), 'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0'],
    ['the empty string', '', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
  ])('%s', (_label, message, digest) => {
    expect(sha256Hex(message)).toBe(digest);
    expect(sha256Hex(ascii(message))).toBe(digest);
    expect(sha256(message)).toEqual(fromHex(digest));
  });

  it('hashes strings as their UTF-8 bytes, agreeing with node:crypto', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        expect(sha256Hex(s)).toBe(createHash('sha256').update(s, 'utf8').digest('hex'));
      }),
    );
  });
});

describe('HMAC-SHA-256 (RFC 4231 §4)', () => {
  const repeat = (byte: number, n: number) => new Uint8Array(n).fill(byte);
  it.each<[string, Uint8Array | string, Uint8Array | string, string]>([
    ['test case 1', repeat(0x0b, 20), 'Hi There', 'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7'],
    ['test case 2 (key shorter than the output)', 'Jefe', 'what do ya want for nothing?', '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843'],
    ['test case 3', repeat(0xaa, 20), repeat(0xdd, 50), '773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe'],
    ['test case 4', fromHex('0102030405060708090a0b0c0d0e0f10111213141516171819'), repeat(0xcd, 50), '82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b'],
    ['test case 6 (key longer than a block)', repeat(0xaa, 131), 'Test Using Larger Than Block-Size Key - Hash Key First', '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54'],
    [
      'test case 7 (key and data longer than a block)',
      repeat(0xaa, 131),
      'This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.',
      '9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2',
    ],
  ])('%s', (_label, key, data, mac) => {
    expect(toHex(hmacSha256(key, data))).toBe(mac);
    const keyBytes = typeof key === 'string' ? ascii(key) : key;
    const dataBytes = typeof data === 'string' ? ascii(data) : data;
    expect(toHex(hmacSha256(keyBytes, dataBytes))).toBe(mac);
  });

  it('agrees with node:crypto for string keys and messages', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (key, message) => {
        expect(toHex(hmacSha256(key, message))).toBe(createHmac('sha256', key).update(message, 'utf8').digest('hex'));
      }),
    );
  });
});
