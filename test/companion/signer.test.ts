/** Signers, the production key file, the keyring and the published JWKS (DESIGN.md §3). */
import { createHash, createPrivateKey, createPublicKey, verify } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Keyring } from '../../companion/core/keyring.ts';
import {
  PRODUCTION_KEY_FILE,
  SigningKeyFileError,
  createSandboxSigner,
  loadOrCreateProductionSigner,
  signerFromSeed,
} from '../../companion/core/signer.ts';
import type { Signer } from '../../companion/core/signer.ts';
import { sandboxPublicKey } from '../../shared/keys.ts';
import { readVectorJson } from '../helpers/vectors.ts';
import { createTestContext, makeTempDir } from './helpers.ts';
import { gateBody } from './pack-fixtures.ts';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const dirs: string[] = [];
function tempDir(): string {
  const d = makeTempDir('svc-keys-');
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function verifiesWithOpenSsl(signer: Signer, message: Uint8Array, signature: Uint8Array): boolean {
  const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), signer.publicKey]);
  return verify(null, message, createPublicKey({ key: spki, format: 'der', type: 'spki' }), signature);
}

interface Rfc8032Vector {
  name: string;
  secret_key: string;
  public_key: string;
  message: string;
  signature: string;
}

describe('signerFromSeed', () => {
  const { vectors } = readVectorJson<{ vectors: Rfc8032Vector[] }>('ed25519', 'rfc8032_ed25519.json');
  it.each(vectors.map((v) => [v.name, v] as const))('reproduces RFC 8032 §7.1 %s', (_name, v) => {
    const signer = signerFromSeed(Buffer.from(v.secret_key, 'hex'), false);
    expect(hex(signer.publicKey)).toBe(v.public_key);
    expect(hex(signer.sign(Buffer.from(v.message, 'hex')))).toBe(v.signature);
  });
});

describe('sandbox signer', () => {
  it('is the reproducible dev key: seed = SHA-256("svc-sandbox-dev-key/v1")', () => {
    const seed = createHash('sha256').update('svc-sandbox-dev-key/v1', 'ascii').digest();
    const expected = signerFromSeed(seed, true);
    const sandbox = createSandboxSigner();
    expect(sandbox.devKey).toBe(true);
    expect(hex(sandbox.publicKey)).toBe(hex(expected.publicKey));
    expect(hex(sandbox.publicKey)).toBe(hex(sandboxPublicKey()));
    const msg = new TextEncoder().encode('sandbox');
    expect(verifiesWithOpenSsl(sandbox, msg, sandbox.sign(msg))).toBe(true);
  });

  it('does not reveal private material when serialised', () => {
    expect(JSON.stringify(createSandboxSigner())).toBe(JSON.stringify({ keyId: createSandboxSigner().keyId, devKey: true }));
  });
});

describe('production signer', () => {
  it('creates its key file with mode 0600 on first start, in a 0700 directory', () => {
    const dataDir = tempDir();
    const signer = loadOrCreateProductionSigner(dataDir);
    const file = path.join(dataDir, PRODUCTION_KEY_FILE);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(fs.readFileSync(file, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(fs.readdirSync(path.dirname(file))).toEqual(['production-ed25519.pem']); // no temp files left
    expect(signer.devKey).toBe(false);
    const msg = new TextEncoder().encode('production');
    expect(verifiesWithOpenSsl(signer, msg, signer.sign(msg))).toBe(true);
  });

  it('reuses the same key across restarts', () => {
    const dataDir = tempDir();
    const first = loadOrCreateProductionSigner(dataDir);
    const second = loadOrCreateProductionSigner(dataDir);
    expect(second.keyId).toBe(first.keyId);
    expect(hex(second.publicKey)).toBe(hex(first.publicKey));
  });

  it('refuses a key file that group or others can read', () => {
    const dataDir = tempDir();
    loadOrCreateProductionSigner(dataDir);
    const file = path.join(dataDir, PRODUCTION_KEY_FILE);
    for (const mode of [0o644, 0o640, 0o604]) {
      fs.chmodSync(file, mode);
      expect(() => loadOrCreateProductionSigner(dataDir)).toThrow(SigningKeyFileError);
      expect(() => loadOrCreateProductionSigner(dataDir)).toThrow(/chmod 600/);
    }
  });

  it('refuses a key file that is not an Ed25519 PKCS#8 key, without echoing it', () => {
    const dataDir = tempDir();
    const file = path.join(dataDir, PRODUCTION_KEY_FILE);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, 'secret-looking garbage', { mode: 0o600 });
    expect(() => loadOrCreateProductionSigner(dataDir)).toThrow(/not a PKCS#8 PEM private key/);
    try {
      loadOrCreateProductionSigner(dataDir);
    } catch (err) {
      expect(String(err)).not.toContain('garbage');
    }
  });
});

describe('Keyring', () => {
  const sandbox = createSandboxSigner();
  const production = signerFromSeed(new Uint8Array(32).fill(7), false);

  it('signs with the key of the tenant kind, never the other', () => {
    const ring = new Keyring({ sandbox, production });
    expect(ring.signerFor('sandbox')).toBe(sandbox);
    expect(ring.signerFor('production')).toBe(production);
  });

  it('refuses swapped or identical keys', () => {
    expect(() => new Keyring({ sandbox: production, production: sandbox })).toThrow();
    expect(() => new Keyring({ sandbox, production: signerFromSeed(new Uint8Array(32).fill(7), true) })).toThrow(/dev key/);
    const sandboxSeed = createHash('sha256').update('svc-sandbox-dev-key/v1').digest();
    expect(() => new Keyring({ sandbox, production: signerFromSeed(sandboxSeed, false) })).toThrow(/differ/);
  });

  it('publishes an RFC 8037 JWKS: sandbox (dev_key true) and production (active)', () => {
    const { keys } = new Keyring({ sandbox, production }).jwks();
    expect(keys).toEqual([
      { kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', x: Buffer.from(sandbox.publicKey).toString('base64url'), kid: sandbox.keyId, status: 'sandbox', dev_key: true },
      { kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', x: Buffer.from(production.publicKey).toString('base64url'), kid: production.keyId, status: 'active', dev_key: false },
    ]);
  });
});

describe('GET /.well-known/service-keys.json', () => {
  it('is public, cacheable, and never carries the production private key', async () => {
    const ctx = await createTestContext();
    try {
      const res = await ctx.request('/.well-known/service-keys.json');
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=300');
      expect(res.headers.get('etag')).toBeTruthy();
      expect(res.body.keys.map((k: { status: string; dev_key: boolean }) => [k.status, k.dev_key])).toEqual([
        ['sandbox', true],
        ['active', false],
      ]);
      expect(res.body.keys[1].kid).toBe(ctx.deps.keyring.production.keyId);
      for (const k of res.body.keys) expect(k).not.toHaveProperty('d');

      const again = await ctx.request('/.well-known/service-keys.json', { headers: { 'if-none-match': res.headers.get('etag')! } });
      expect(again.status).toBe(304);

      // Sweep every GET route plus a signup: no response may contain the private key.
      const pem = fs.readFileSync(path.join(ctx.dataDir, PRODUCTION_KEY_FILE), 'utf8');
      const pkcs8 = createPrivateKey(pem).export({ format: 'der', type: 'pkcs8' });
      const seed = pkcs8.subarray(16);
      const secrets = [pem.split('\n')[1]!, seed.toString('base64url'), seed.toString('base64'), seed.toString('hex')];
      const { apiKey } = await ctx.signup();
      const gets = [...new Set(ctx.app.routes.filter((r) => r.method === 'GET').map((r) => r.path))];
      expect(gets.length).toBeGreaterThan(2);
      for (const p of gets) {
        const r = await ctx.request(p.replace(/:(\w+)/g, 'x'), { key: apiKey });
        let all = r.text;
        r.headers.forEach((value, name) => (all += `\n${name}: ${value}`));
        for (const s of secrets) expect(all, p).not.toContain(s);
      }
    } finally {
      await ctx.close();
    }
  });
});

describe('moving the production key to another custody', () => {
  it('keeps publishing the earlier key as retired, so what it signed still verifies', async () => {
    const dataDir = tempDir();
    const first = await createTestContext({ dataDir });
    const { apiKey } = first.productionTenant();
    const sealed = await first.request('/v1/gate', { method: 'POST', key: apiKey, json: gateBody('law') });
    expect(sealed.status).toBe(201);
    const oldKeyId = first.deps.keyring.production.keyId;
    await first.close();

    // A new key in place of the old one, as when SVC_SIGNER moves to a token or a KMS key.
    fs.rmSync(path.join(dataDir, PRODUCTION_KEY_FILE));
    const second = await createTestContext({ dataDir });
    try {
      expect(second.deps.keyring.production.keyId).not.toBe(oldKeyId);
      const jwks = (await second.request('/.well-known/service-keys.json')).body;
      expect(jwks.keys.map((k: { kid: string; status: string }) => [k.kid, k.status])).toEqual([
        [second.deps.keyring.sandbox.keyId, 'sandbox'],
        [second.deps.keyring.production.keyId, 'active'],
        [oldKeyId, 'retired'],
      ]);
      const verified = await second.request('/v1/verify', { method: 'POST', json: sealed.body.verify_request });
      expect(verified.body).toMatchObject({ verified: true, key_status: 'retired', failed_checks: [] });
      // The retired key never signs again: new production seals use the active one.
      const fresh = await second.request('/v1/gate', { method: 'POST', key: apiKey, json: gateBody('law') });
      expect(fresh.body.verify_request.seal.key_id).toBe(second.deps.keyring.production.keyId);
    } finally {
      await second.close();
    }
  });
});
