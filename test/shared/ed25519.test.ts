/**
 * Ed25519 against RFC 8032 §7.1 and Wycheproof, run through both verification backends and the
 * public entry point, with node:crypto (OpenSSL) as a third opinion.
 */
import { createPublicKey, verify as nodeVerify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  getPublicKey,
  hasWebCryptoEd25519,
  precheckEd25519,
  signEd25519,
  verifyEd25519,
  verifyWithNoble,
  verifyWithWebCrypto,
} from '../../shared/ed25519.ts';
import type { Ed25519Rejection } from '../../shared/ed25519.ts';
import { concatBytes, fromHex, utf8 } from '../../shared/encoding.ts';
import { isSvcError } from '../../shared/errors.ts';
import type { SvcErrorCode } from '../../shared/errors.ts';
import { readVectorJson } from '../helpers/vectors.ts';

interface Rfc8032File {
  vectors: { name: string; secret_key: string; public_key: string; message: string; signature: string }[];
}

interface WycheproofFile {
  numberOfTests: number;
  testGroups: {
    publicKey: { pk: string };
    publicKeyDer: string;
    tests: { tcId: number; comment: string; flags: string[]; msg: string; sig: string; result: 'valid' | 'invalid' | 'acceptable' }[];
  }[];
}

const rfc8032 = readVectorJson<Rfc8032File>('ed25519', 'rfc8032_ed25519.json').vectors;
const wycheproof = readVectorJson<WycheproofFile>('ed25519', 'wycheproof_ed25519_test.json');
const wycheproofCases = wycheproof.testGroups.flatMap((g) =>
  g.tests.map((t) => ({ ...t, pk: g.publicKey.pk, der: g.publicKeyDer, name: `tcId ${t.tcId} ${t.result} [${t.flags.join(',')}] ${t.comment}` })),
);

const L = 2n ** 252n + 27742317777372353535851937790883648493n;
// RFC 8032 §5.1.2 / §5.1.3 encodings are little-endian.
const toNumberLE = (b: Uint8Array): bigint => b.reduceRight((n, byte) => (n << 8n) | BigInt(byte), 0n);
const fromNumberLE = (n: bigint): Uint8Array => Uint8Array.from({ length: 32 }, (_, i) => Number((n >> BigInt(8 * i)) & 0xffn));

function nodeKey(publicKey: Uint8Array): KeyObject {
  // Built by hand (not via keys.ts) so node's answer does not depend on code under test.
  const der = concatBytes(fromHex('302a300506032b6570032100'), publicKey);
  return createPublicKey({ key: Buffer.from(der), format: 'der', type: 'spki' });
}

/** All three of our verifiers, which must always agree. */
async function ours(pk: Uint8Array, msg: Uint8Array, sig: Uint8Array): Promise<{ noble: boolean; webCrypto: boolean; auto: boolean }> {
  return {
    noble: verifyWithNoble(pk, msg, sig),
    webCrypto: await verifyWithWebCrypto(pk, msg, sig),
    auto: await verifyEd25519(pk, msg, sig),
  };
}

const both = (value: boolean) => ({ noble: value, webCrypto: value, auto: value });

function flipBit(bytes: Uint8Array, bit: number): Uint8Array {
  const out = bytes.slice();
  out[bit >> 3]! ^= 1 << (bit & 7);
  return out;
}

async function expectCode(run: () => unknown, code: SvcErrorCode): Promise<void> {
  try {
    await run();
  } catch (e) {
    expect(isSvcError(e, code), String(e)).toBe(true);
    return;
  }
  expect.unreachable(`expected SvcError ${code}`);
}

it('runs on a platform whose WebCrypto has Ed25519 (Node 20+), so both backends are exercised', async () => {
  expect(await hasWebCryptoEd25519()).toBe(true);
});

describe('RFC 8032 §7.1 test vectors', () => {
  it('has the five vectors the README lists', () => {
    expect(rfc8032.map((v) => v.name)).toHaveLength(5);
  });

  for (const v of rfc8032) {
    describe(v.name, () => {
      const seed = fromHex(v.secret_key);
      const pk = fromHex(v.public_key);
      const msg = fromHex(v.message);
      const sig = fromHex(v.signature);

      it('derives the public key and reproduces the signature byte for byte', () => {
        expect(getPublicKey(seed)).toEqual(pk);
        expect(signEd25519(seed, msg)).toEqual(sig);
      });

      it('verifies with both backends and node:crypto', async () => {
        expect(await ours(pk, msg, sig)).toEqual(both(true));
        expect(nodeVerify(null, msg, nodeKey(pk), sig)).toBe(true);
      });

      it('refuses a flipped message bit, signature bit or key bit', async () => {
        // TEST 1 signs the empty message, which has no bit to flip: append one instead.
        const tampered = msg.length > 0 ? flipBit(msg, 0) : Uint8Array.of(0);
        expect(await ours(pk, tampered, sig)).toEqual(both(false));
        for (const bit of [0, 255, 256, 500]) expect(await ours(pk, msg, flipBit(sig, bit))).toEqual(both(false));
        expect(await ours(flipBit(pk, 3), msg, sig)).toEqual(both(false));
      });
    });
  }
});

describe('Wycheproof ed25519_test.json', () => {
  it('holds the 151 cases (88 valid, 63 invalid, none "acceptable") the README lists', () => {
    const count = (r: string) => wycheproofCases.filter((c) => c.result === r).length;
    expect(wycheproofCases).toHaveLength(wycheproof.numberOfTests);
    expect([wycheproofCases.length, count('valid'), count('invalid'), count('acceptable')]).toEqual([151, 88, 63, 0]);
  });

  // Where a flag pins down the defect, the precheck must be what refuses it (or nothing must).
  const REASON_BY_FLAG: Record<string, Ed25519Rejection | null> = {
    Valid: null,
    Ktv: null,
    TinkOverflow: null,
    SignatureMalleability: 's_out_of_range',
    TruncatedSignature: 'signature_length',
    SignatureWithGarbage: 'signature_length',
    CompressedSignature: 'signature_length',
  };

  for (const c of wycheproofCases) {
    it(c.name, async () => {
      const [pk, msg, sig] = [fromHex(c.pk), fromHex(c.msg), fromHex(c.sig)];
      // "acceptable" would leave the choice to us; our verifier is strict, so it would answer
      // false, and the only requirement left is that the backends agree (the file has none).
      const expected = c.result === 'valid';
      expect(await ours(pk, msg, sig)).toEqual(both(expected));
      if (c.result === 'valid') {
        // Third opinion, independent of our code: OpenSSL via node:crypto on the DER key.
        const key = createPublicKey({ key: Buffer.from(c.der, 'hex'), format: 'der', type: 'spki' });
        expect(nodeVerify(null, msg, key, sig)).toBe(true);
      }
      for (const flag of c.flags) {
        if (flag in REASON_BY_FLAG) expect(precheckEd25519(pk, sig)).toBe(REASON_BY_FLAG[flag]);
      }
    });
  }
});

describe('edge cases decided by policy', () => {
  const T8 = ed.Point.fromBytes(fromHex('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a'));
  const torsion = Array.from({ length: 8 }, (_, i) => T8.multiply(BigInt(i), false));
  const test1 = rfc8032[0]!;
  const [seed, pk, goodSig] = [fromHex(test1.secret_key), fromHex(test1.public_key), fromHex(test1.signature)];
  const { scalar: a } = ed.utils.getExtendedPublicKey(seed);

  it('T8 generates the whole torsion subgroup (8 distinct points of small order)', () => {
    expect(T8.multiply(4n, false).is0()).toBe(false);
    expect(T8.clearCofactor().is0()).toBe(true);
    expect(new Set(torsion.map((p) => p.toHex())).size).toBe(8);
  });

  it('refuses every small-order point as public key and as R', () => {
    for (const p of torsion) {
      const enc = p.toBytes();
      expect(p.isSmallOrder()).toBe(true);
      expect(precheckEd25519(enc, goodSig)).toBe('public_key_small_order');
      expect(precheckEd25519(pk, concatBytes(enc, goodSig.subarray(32)))).toBe('r_small_order');
    }
  });

  it('refuses non-canonical encodings (RFC 8032 §5.1.3 steps 1 and 4)', () => {
    const nonCanonical = [
      fromHex('01' + '00'.repeat(30) + '80'), // y = 1 with x_0 = 1 (x = 0)
      fromHex('ec' + 'ff'.repeat(30) + 'ff'), // y = p - 1 with x_0 = 1 (x = 0)
      fromHex('ed' + 'ff'.repeat(30) + '7f'), // y = p
      fromHex('ee' + 'ff'.repeat(30) + '7f'), // y = p + 1
      fromHex('ff'.repeat(32)), // y = 2^255 - 1, x_0 = 1
    ];
    for (const enc of nonCanonical) {
      expect(precheckEd25519(enc, goodSig)).toBe('public_key_non_canonical');
      expect(precheckEd25519(pk, concatBytes(enc, goodSig.subarray(32)))).toBe('r_non_canonical');
    }
  });

  it('refuses the identity-key forgery that OpenSSL accepts for every message', async () => {
    const identity = fromHex('01' + '00'.repeat(31));
    const forgery = concatBytes(identity, new Uint8Array(32)); // R = identity, S = 0
    for (const key of [identity, fromHex('ee' + 'ff'.repeat(30) + '7f') /* identity, non-canonical */]) {
      for (const msg of [utf8('any message'), utf8('another one')]) {
        expect(nodeVerify(null, msg, nodeKey(key), forgery)).toBe(true);
        expect(await ours(key, msg, forgery)).toEqual(both(false));
      }
    }
  });

  it('uses the cofactorless equation: a mixed-order R that cofactored verification accepts is refused', async () => {
    const msg = utf8('mixed-order R');
    const r = toNumberLE(sha512(msg)) % L;
    const R = ed.Point.BASE.multiply(r).add(T8).toBytes();
    const k = toNumberLE(sha512(concatBytes(R, pk, msg))) % L;
    const sig = concatBytes(R, fromNumberLE((r + k * a) % L));
    expect(precheckEd25519(pk, sig)).toBeNull();
    expect(ed.verify(sig, msg, pk, { zip215: false })).toBe(true); // why we do not call noble's verify
    expect(nodeVerify(null, msg, nodeKey(pk), sig)).toBe(false);
    expect(await ours(pk, msg, sig)).toEqual(both(false));
  });

  it('agrees with OpenSSL on a mixed-order public key, accepting exactly when 8 divides k', async () => {
    const A = ed.Point.fromBytes(pk).add(T8).toBytes();
    expect(precheckEd25519(A, goodSig)).toBeNull();
    const seen = new Set<boolean>();
    for (let i = 0; seen.size < 2 || i < 16; i++) {
      const msg = utf8(`mixed-order A ${i}`);
      const r = toNumberLE(sha512(msg)) % L;
      const R = ed.Point.BASE.multiply(r).toBytes();
      const k = toNumberLE(sha512(concatBytes(R, A, msg))) % L;
      const sig = concatBytes(R, fromNumberLE((r + k * a) % L));
      // [S]B - [k]A' = R - [k]T8, which is R exactly when [k]T8 is the identity.
      const expected = k % 8n === 0n;
      seen.add(expected);
      expect(nodeVerify(null, msg, nodeKey(A), sig)).toBe(expected);
      expect(await ours(A, msg, sig)).toEqual(both(expected));
    }
  });
});

describe('hostile and wrong-typed input', () => {
  const v = rfc8032[1]!;
  const [pk, msg, sig] = [fromHex(v.public_key), fromHex(v.message), fromHex(v.signature)];

  it('answers false, never throws, on wrong lengths', async () => {
    const cases: [Uint8Array, Uint8Array][] = [
      [new Uint8Array(0), sig],
      [pk.subarray(0, 31), sig],
      [concatBytes(pk, Uint8Array.of(0)), sig],
      [pk, new Uint8Array(0)],
      [pk, sig.subarray(0, 63)],
      [pk, concatBytes(sig, Uint8Array.of(0))],
      [new Uint8Array(32), new Uint8Array(64)],
      [fromHex('02' + '00'.repeat(31)), sig], // y = 2 is not on the curve
    ];
    for (const [k, s] of cases) expect(await ours(k, msg, s)).toEqual(both(false));
  });

  it('throws SvcError with the argument’s code on wrong types', async () => {
    const bad = [undefined, null, 'ab', [1, 2, 3], new Uint16Array(16), 42] as unknown as Uint8Array[];
    for (const b of bad) {
      for (const verifier of [verifyEd25519, verifyWithWebCrypto, verifyWithNoble]) {
        await expectCode(() => verifier(b, msg, sig), 'KEY_INVALID');
        await expectCode(() => verifier(pk, b, sig), 'ENCODING_INVALID');
        await expectCode(() => verifier(pk, msg, b), 'SIGNATURE_INVALID_ENCODING');
      }
      await expectCode(() => signEd25519(b, msg), 'KEY_INVALID');
      await expectCode(() => getPublicKey(b), 'KEY_INVALID');
    }
    await expectCode(() => signEd25519(new Uint8Array(31), msg), 'KEY_INVALID');
    await expectCode(() => getPublicKey(new Uint8Array(64)), 'KEY_INVALID');
    await expectCode(() => signEd25519(new Uint8Array(32), 'text' as unknown as Uint8Array), 'ENCODING_INVALID');
  });

  it('verifies the bytes as they were at the call, whatever the caller does afterwards', async () => {
    const [k, m, s] = [pk.slice(), msg.slice(), sig.slice()];
    const pending = verifyEd25519(k, m, s);
    k[0]! ^= 1;
    m[0]! ^= 1;
    s[0]! ^= 1;
    expect(await pending).toBe(true);
  });

  it('stays correct past the key cache bound (64 keys) and under concurrent first use', async () => {
    const keys = Array.from({ length: 70 }, (_, i) => {
      const seed = sha512(Uint8Array.of(i)).subarray(0, 32);
      return { pk: getPublicKey(seed), sig: signEd25519(seed, msg) };
    });
    for (let round = 0; round < 2; round++) {
      const results = await Promise.all(keys.flatMap(({ pk: k, sig: s }) => [verifyEd25519(k, msg, s), verifyEd25519(k, msg, s)]));
      expect(results.every(Boolean)).toBe(true);
    }
    expect(await verifyEd25519(keys[0]!.pk, msg, keys[1]!.sig)).toBe(false);
  });
});

describe('backends agree on generated input (fast-check)', () => {
  it('sign/verify round trips and any single flipped bit is refused by all, like node:crypto', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.uint8Array({ maxLength: 200 }),
        fc.nat(64 * 8 - 1),
        async (seed, msg, bit) => {
          const pk = getPublicKey(seed);
          const sig = signEd25519(seed, msg);
          expect(await ours(pk, msg, sig)).toEqual(both(true));
          const bad = flipBit(sig, bit);
          expect(await ours(pk, msg, bad)).toEqual(both(false));
          expect(nodeVerify(null, msg, nodeKey(pk), bad)).toBe(false);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('random bytes never throw and the backends agree', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 30, maxLength: 34 }),
        fc.uint8Array({ maxLength: 16 }),
        fc.uint8Array({ minLength: 62, maxLength: 66 }),
        async (pk, msg, sig) => {
          const r = await ours(pk, msg, sig);
          expect(r.noble).toBe(r.webCrypto);
          expect(r.auto).toBe(r.noble);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('without WebCrypto Ed25519 (older browsers)', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.resetModules();
  });

  const v = rfc8032[2]!;
  const [pk, msg, sig] = [fromHex(v.public_key), fromHex(v.message), fromHex(v.signature)];

  it('falls back to noble when importKey throws NotSupportedError', async () => {
    const notSupported = () => Promise.reject(new DOMException('Unrecognized algorithm name', 'NotSupportedError'));
    vi.stubGlobal('crypto', { subtle: { importKey: notSupported, verify: notSupported } });
    vi.resetModules();
    const fresh = await import('../../shared/ed25519.ts');
    expect(await fresh.hasWebCryptoEd25519()).toBe(false);
    expect(await fresh.verifyEd25519(pk, msg, sig)).toBe(true);
    expect(await fresh.verifyEd25519(pk, flipBit(msg, 1), sig)).toBe(false);
    await expect(fresh.verifyWithWebCrypto(pk, msg, sig)).rejects.toMatchObject({ name: 'NotSupportedError' });
  });

  it('falls back to noble when there is no crypto.subtle at all', async () => {
    vi.stubGlobal('crypto', undefined);
    vi.resetModules();
    const fresh = await import('../../shared/ed25519.ts');
    expect(await fresh.hasWebCryptoEd25519()).toBe(false);
    expect(await fresh.verifyEd25519(pk, msg, sig)).toBe(true);
    expect(await fresh.verifyEd25519(pk, msg, flipBit(sig, 7))).toBe(false);
  });

  it('falls back when WebCrypto passes the probe but refuses a later import', async () => {
    const real = globalThis.crypto.subtle;
    let imports = 0;
    vi.stubGlobal('crypto', {
      subtle: {
        importKey: (...args: Parameters<SubtleCrypto['importKey']>) =>
          imports++ === 0 ? real.importKey(...args) : Promise.reject(new DOMException('policy', 'NotSupportedError')),
        verify: (...args: Parameters<SubtleCrypto['verify']>) => real.verify(...args),
      },
    });
    vi.resetModules();
    const fresh = await import('../../shared/ed25519.ts');
    expect(await fresh.hasWebCryptoEd25519()).toBe(true);
    expect(await fresh.verifyEd25519(pk, msg, sig)).toBe(true);
    expect(await fresh.hasWebCryptoEd25519()).toBe(false);
    expect(await fresh.verifyEd25519(pk, msg, flipBit(sig, 9))).toBe(false);
  });
});
