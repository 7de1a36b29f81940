/**
 * Key material: the sandbox key re-derived with node:crypto, RFC 8037 / RFC 7638 published
 * values, PEM accepted by node:crypto and OpenSSL, strict JWK/JWKS parsing.
 */
import { execFileSync } from 'node:child_process';
import { createHash, createPrivateKey, createPublicKey, sign as nodeSign, verify as nodeVerify } from 'node:crypto';
import type { JsonWebKey, KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { getPublicKey, signEd25519 } from '../../shared/ed25519.ts';
import { fromBase64Url, fromHex, toBase64Url, utf8 } from '../../shared/encoding.ts';
import { isSvcError } from '../../shared/errors.ts';
import type { SvcError, SvcErrorCode } from '../../shared/errors.ts';
import type { ServiceJwk } from '../../shared/types.ts';
import {
  RFC8410_ED25519_SPKI_PREFIX,
  SANDBOX_KEY_SEED_LABEL,
  findKey,
  jwkToPublicKey,
  keyId,
  parseJwks,
  publicKeyToJwk,
  publicKeyToSpkiPem,
  sandboxJwk,
  sandboxPublicKey,
  sandboxSeed,
  spkiPemToPublicKey,
} from '../../shared/keys.ts';
import { readVectorJson } from '../helpers/vectors.ts';

// RFC 8037 Appendix A.1 (private and public JWK) and A.3 (its RFC 7638 thumbprint).
const RFC8037_D = 'nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A';
const RFC8037_X = '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo';
const RFC8037_THUMBPRINT = 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k';

// RFC 8410 §7: PKCS#8 OneAsymmetricKey prefix for an Ed25519 seed (CurvePrivateKey).
const PKCS8_ED25519_PREFIX = fromHex('302e020100300506032b657004220420');

const rfc8032 = readVectorJson<{ vectors: { name: string; secret_key: string; public_key: string }[] }>('ed25519', 'rfc8032_ed25519.json').vectors;
const wycheproof = readVectorJson<{ testGroups: { publicKey: { pk: string }; publicKeyDer: string }[] }>('ed25519', 'wycheproof_ed25519_test.json');

/** node:crypto's own public key for a seed, through a PKCS#8 document it parses itself. */
function nodePublicKeyFromSeed(seed: Uint8Array): Uint8Array {
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  return fromBase64Url(createPublicKey(privateKey).export({ format: 'jwk' }).x!);
}

/** node:crypto reading our whole published JWK, extra members included. */
function nodeKeyFromJwk(jwk: ServiceJwk): KeyObject {
  return createPublicKey({ key: jwk as unknown as JsonWebKey, format: 'jwk' });
}

function thrown(run: () => unknown): SvcError {
  try {
    run();
  } catch (e) {
    if (isSvcError(e)) return e;
    throw e;
  }
  return expect.unreachable('expected an SvcError') as never;
}

function expectCode(run: () => unknown, code: SvcErrorCode): void {
  expect(thrown(run).code).toBe(code);
}

const productionSeed = fromHex('4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb');
const productionKey = getPublicKey(productionSeed);

describe('sandbox dev key (DESIGN.md §3)', () => {
  it('has the seed SHA-256("svc-sandbox-dev-key/v1"), recomputed with node:crypto', () => {
    expect(SANDBOX_KEY_SEED_LABEL).toBe('svc-sandbox-dev-key/v1');
    const expected = createHash('sha256').update(Buffer.from('svc-sandbox-dev-key/v1', 'ascii')).digest();
    expect(sandboxSeed()).toEqual(new Uint8Array(expected));
  });

  it('has the public key node:crypto derives from that seed', () => {
    expect(sandboxPublicKey()).toEqual(nodePublicKeyFromSeed(sandboxSeed()));
  });

  it('publishes as a sandbox JWK with dev_key true, and signs what node:crypto verifies', () => {
    const jwk = sandboxJwk();
    expect(jwk).toEqual({
      kty: 'OKP',
      crv: 'Ed25519',
      x: toBase64Url(sandboxPublicKey()),
      kid: keyId(sandboxPublicKey()),
      alg: 'EdDSA',
      use: 'sig',
      status: 'sandbox',
      dev_key: true,
    });
    const msg = utf8('{"format":"svc.attestation/v2"}');
    const sig = signEd25519(sandboxSeed(), msg);
    expect(nodeVerify(null, msg, nodeKeyFromJwk(jwk), sig)).toBe(true);
  });

  it('hands out copies, so a caller cannot corrupt the key for others', () => {
    sandboxPublicKey().fill(0);
    sandboxSeed().fill(0);
    expect(sandboxPublicKey()).toEqual(nodePublicKeyFromSeed(sandboxSeed()));
  });
});

describe('RFC 8037 Appendix A', () => {
  it('A.1: the public key of d is x, and d/x are RFC 8032 §7.1 TEST 1', () => {
    const seed = fromBase64Url(RFC8037_D);
    expect(getPublicKey(seed)).toEqual(fromBase64Url(RFC8037_X));
    expect(seed).toEqual(fromHex(rfc8032[0]!.secret_key));
    expect(fromBase64Url(RFC8037_X)).toEqual(fromHex(rfc8032[0]!.public_key));
  });

  it('A.3: keyId is the published RFC 7638 thumbprint', () => {
    expect(keyId(fromBase64Url(RFC8037_X))).toBe(RFC8037_THUMBPRINT);
  });

  it('A.1: the public JWK parses; the private JWK is refused for its d member', () => {
    expect(jwkToPublicKey({ kty: 'OKP', crv: 'Ed25519', x: RFC8037_X })).toEqual(fromBase64Url(RFC8037_X));
    const e = thrown(() => jwkToPublicKey({ kty: 'OKP', crv: 'Ed25519', d: RFC8037_D, x: RFC8037_X }));
    expect(e.code).toBe('KEY_INVALID');
    expect(e.details).toEqual({ issues: [{ path: 'd', message: expect.any(String) }] });
    expect(e.message).not.toContain(RFC8037_D); // private material never reaches an error
  });
});

describe('JWK (RFC 8037 §2)', () => {
  it('round-trips, and node:crypto imports our JWK as the same key', () => {
    const jwk = publicKeyToJwk(productionKey, { status: 'active', dev_key: false });
    expect(jwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', status: 'active', dev_key: false });
    expect(jwk.kid).toBe(keyId(productionKey));
    expect(jwkToPublicKey(jwk)).toEqual(productionKey);
    const exported = nodeKeyFromJwk(jwk).export({ format: 'jwk' });
    expect(exported).toEqual({ kty: 'OKP', crv: 'Ed25519', x: jwk.x });
  });

  it('refuses metadata that mixes sandbox and production', () => {
    expectCode(() => publicKeyToJwk(productionKey, { status: 'active', dev_key: true }), 'KEY_INVALID');
    expectCode(() => publicKeyToJwk(productionKey, { status: 'sandbox', dev_key: false }), 'KEY_INVALID');
    expectCode(() => publicKeyToJwk(productionKey, { status: 'expired' as 'active', dev_key: false }), 'KEY_INVALID');
  });

  const x = toBase64Url(productionKey);
  const malformed: [string, unknown, string][] = [
    ['not an object', 'OKP', ''],
    ['an array', [x], ''],
    ['kty EC', { kty: 'EC', crv: 'Ed25519', x }, 'kty'],
    ['crv X25519', { kty: 'OKP', crv: 'X25519', x }, 'crv'],
    ['crv missing', { kty: 'OKP', x }, 'crv'],
    ['alg ES256', { kty: 'OKP', crv: 'Ed25519', x, alg: 'ES256' }, 'alg'],
    ['use enc', { kty: 'OKP', crv: 'Ed25519', x, use: 'enc' }, 'use'],
    ['kid a number', { kty: 'OKP', crv: 'Ed25519', x, kid: 7 }, 'kid'],
    ['x missing', { kty: 'OKP', crv: 'Ed25519' }, 'x'],
    ['x padded', { kty: 'OKP', crv: 'Ed25519', x: `${x}=` }, 'x'],
    ['x standard base64', { kty: 'OKP', crv: 'Ed25519', x: x.replace(/-/g, '+').replace(/_/g, '/') + (/[-_]/.test(x) ? '' : '+') }, 'x'],
    ['x 31 bytes', { kty: 'OKP', crv: 'Ed25519', x: toBase64Url(productionKey.subarray(1)) }, 'x'],
    ['x 33 bytes', { kty: 'OKP', crv: 'Ed25519', x: toBase64Url(new Uint8Array(33)) }, 'x'],
    ['x non-canonical (y = p + 1)', { kty: 'OKP', crv: 'Ed25519', x: toBase64Url(fromHex('ee' + 'ff'.repeat(30) + '7f')) }, 'x'],
    ['x small order (identity)', { kty: 'OKP', crv: 'Ed25519', x: toBase64Url(fromHex('01' + '00'.repeat(31))) }, 'x'],
    ['x not on the curve', { kty: 'OKP', crv: 'Ed25519', x: toBase64Url(fromHex('02' + '00'.repeat(31))) }, 'x'],
    ['d present, even empty', { kty: 'OKP', crv: 'Ed25519', x, d: '' }, 'd'],
  ];
  for (const [name, jwk, field] of malformed) {
    it(`refuses a JWK with ${name}`, () => {
      const e = thrown(() => jwkToPublicKey(jwk));
      expect(e.code).toBe('KEY_INVALID');
      expect((e.details!.issues as { path: string }[]).map((i) => i.path)).toEqual([field]);
    });
  }

  it('ignores members it does not know (RFC 7517 §4)', () => {
    expect(jwkToPublicKey({ kty: 'OKP', crv: 'Ed25519', x, key_ops: ['verify'], x5t: 'abc' })).toEqual(productionKey);
  });
});

describe('SubjectPublicKeyInfo PEM (RFC 8410 §4)', () => {
  it('the fixed 12-byte prefix is what Wycheproof ships as publicKeyDer for every key', () => {
    for (const g of wycheproof.testGroups) {
      expect(g.publicKeyDer).toBe(Buffer.from(RFC8410_ED25519_SPKI_PREFIX).toString('hex') + g.publicKey.pk);
    }
  });

  it('is exactly what node:crypto exports, and node:crypto imports it', () => {
    const pem = publicKeyToSpkiPem(productionKey);
    const nodeKey = createPublicKey(pem);
    expect(pem).toBe(nodeKey.export({ type: 'spki', format: 'pem' }));
    expect(fromBase64Url(nodeKey.export({ format: 'jwk' }).x!)).toEqual(productionKey);
    expect(spkiPemToPublicKey(pem)).toEqual(productionKey);
  });

  it('verifies a signature with node:crypto and with `openssl pkeyutl -verify -rawin`', () => {
    const pem = publicKeyToSpkiPem(sandboxPublicKey());
    const message = utf8('{"action_key":"law:x","format":"svc.attestation/v2"}');
    const signature = signEd25519(sandboxSeed(), message);
    expect(nodeVerify(null, message, createPublicKey(pem), signature)).toBe(true);

    // openssl is a test requirement (.ci/run installs it): stock tools must verify our keys.
    expect(execFileSync('openssl', ['version'], { encoding: 'utf8' })).toMatch(/^OpenSSL 3\./);
    const dir = mkdtempSync(path.join(tmpdir(), 'svc-keys-'));
    try {
      writeFileSync(path.join(dir, 'key.pem'), pem);
      writeFileSync(path.join(dir, 'attestation.json'), message);
      writeFileSync(path.join(dir, 'attestation.sig'), signature);
      const args = ['pkeyutl', '-verify', '-pubin', '-inkey', 'key.pem', '-rawin', '-in', 'attestation.json', '-sigfile', 'attestation.sig'];
      expect(execFileSync('openssl', args, { cwd: dir, encoding: 'utf8' })).toContain('Signature Verified Successfully');
      writeFileSync(path.join(dir, 'attestation.json'), utf8('{"action_key":"law:y","format":"svc.attestation/v2"}'));
      expect(() => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' })).toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads a CRLF PEM, and refuses anything looser or different', () => {
    const pem = publicKeyToSpkiPem(productionKey);
    expect(spkiPemToPublicKey(pem.replace(/\n/g, '\r\n'))).toEqual(productionKey);
    expect(spkiPemToPublicKey(pem.trimEnd())).toEqual(productionKey);
    const [begin, body, end] = pem.trimEnd().split('\n') as [string, string, string];
    const x25519 = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: toBase64Url(new Uint8Array(32).fill(9)) }, format: 'jwk' });
    const bad = [
      pem.replace('PUBLIC KEY', 'PRIVATE KEY'),
      ` ${pem}`,
      `${pem}\n`,
      `${pem}garbage`,
      [begin, body.slice(0, 30), body.slice(30), end].join('\n'), // short line before the last
      [begin, ` ${body}`, end].join('\n'),
      [begin, end].join('\n'),
      [begin, body.replace(/=*$/, ''), end].join('\n'), // padding dropped
      x25519.export({ type: 'spki', format: 'pem' }) as string, // right shape, wrong OID
      publicKeyToSpkiPem(productionKey).replace(body, Buffer.concat([Buffer.from(RFC8410_ED25519_SPKI_PREFIX), Buffer.alloc(33)]).toString('base64')),
      [begin, Buffer.concat([Buffer.from(RFC8410_ED25519_SPKI_PREFIX), fromHex('01' + '00'.repeat(31))]).toString('base64'), end].join('\n'), // identity
      42,
    ];
    for (const b of bad) expectCode(() => spkiPemToPublicKey(b as string), 'KEY_INVALID');
  });
});

describe('parseJwks and findKey', () => {
  const production = publicKeyToJwk(productionKey, { status: 'active', dev_key: false });
  const retired = publicKeyToJwk(fromHex(rfc8032[2]!.public_key), { status: 'retired', dev_key: false });

  it('accepts a well-formed set and returns fresh objects holding only ServiceJwk members', () => {
    const input = { keys: [sandboxJwk(), { ...production, note: 'rotated 2026-11' }, retired] };
    const jwks = parseJwks(input);
    expect(jwks).toEqual({ keys: [sandboxJwk(), production, retired] });
    expect(jwks.keys[1]).not.toBe(input.keys[1]);
    expect(findKey(jwks, production.kid)).toEqual(production);
    expect(findKey(jwks, sandboxJwk().kid)?.status).toBe('sandbox');
    expect(findKey(jwks, 'no-such-kid')).toBeUndefined();
  });

  it('leaves kid-versus-thumbprint to the verifier (reported there as key_identity)', () => {
    expect(parseJwks({ keys: [{ ...production, kid: 'not-a-thumbprint' }] }).keys[0]!.kid).toBe('not-a-thumbprint');
  });

  it('collects every failing index and field, then throws once', () => {
    const { kid: _kid, ...noKid } = retired;
    const input = {
      keys: [
        sandboxJwk(), // fine
        { ...production, crv: 'Ed448', status: 'expired' },
        { ...retired, x: 'AAAA', d: RFC8037_D },
        { ...publicKeyToJwk(fromHex(rfc8032[3]!.public_key), { status: 'active', dev_key: false }), dev_key: true }, // active yet a dev key
        { ...sandboxJwk(), kid: production.kid }, // duplicate of keys[1]'s kid
        noKid,
        null,
      ],
    };
    const e = thrown(() => parseJwks(input));
    expect(e.code).toBe('KEY_INVALID');
    expect((e.details!.issues as { path: string }[]).map((i) => i.path)).toEqual([
      'keys[1].crv',
      'keys[1].status',
      'keys[2].d',
      'keys[2].x',
      'keys[3].dev_key',
      'keys[4].kid',
      'keys[5].kid',
      'keys[6]',
    ]);
    expect(e.message).not.toContain(RFC8037_D);
  });

  it('refuses a non-object and a set without a keys array', () => {
    for (const bad of [null, [], 'keys', { keys: {} }, {}]) expectCode(() => parseJwks(bad), 'KEY_INVALID');
  });
});

describe('node:crypto signs, we check its keys', () => {
  it('a key node:crypto generates round-trips through our JWK, PEM and thumbprint forms', () => {
    const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, productionSeed]), format: 'der', type: 'pkcs8' });
    const nodePem = createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }) as string;
    const pk = spkiPemToPublicKey(nodePem);
    expect(pk).toEqual(productionKey);
    const sig = nodeSign(null, utf8('hello'), privateKey);
    expect(sig).toEqual(Buffer.from(signEd25519(productionSeed, utf8('hello'))));
  });
});
