/**
 * /evidence-packets/* (interface-spec "Evidence packets", "Batch seal request"): the proof
 * kit, seal verification, and bundles checked with stock tools (tar, unzip, sha256sum,
 * openssl), never only by our own verifier.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BUNDLE_FILE_NAMES, verifyBundle } from '../../shared/bundle.ts';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import { failedChecks } from '../../shared/verify.ts';
import { createTestContext, makeTempDir } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { recordBody } from './pack-fixtures.ts';

let ctx: TestContext;
const dirs: string[] = [];
afterEach(async () => {
  await ctx?.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function production() {
  ctx = await createTestContext({ env: { SVC_WEBHOOK_ALLOW_LOOPBACK: '1' } });
  const key = ctx.productionTenant().apiKey;
  // Subscribed to every event, so any event these calls caused would show as a delivery row
  // (the outbox enqueues for subscribers only; the workers are not started, nothing is sent).
  const put = await ctx.request('/tenant/integrations/webhook/audit', {
    method: 'PUT',
    key,
    json: { enabled: true, config: { url: 'http://127.0.0.1:9/hook', events: ['record.sealed', 'receipt.anchored', 'verify.failed', 'meter.threshold'] } },
  });
  expect(put.status).toBeLessThan(300);
  return key;
}
const sealRecords = async (key: string, n: number): Promise<any[]> => {
  const res = await ctx.request('/v1/record/batch', { json: Array.from({ length: n }, () => recordBody()), key });
  expect(res.status).toBe(201);
  return res.body.results ?? res.body;
};
const counts = async () =>
  (await ctx.sql('SELECT (SELECT count(*) FROM sealed_records) AS records, (SELECT CAST(coalesce(sum(actions_used), 0) AS INTEGER) FROM usage_counters) AS used, (SELECT count(*) FROM webhook_deliveries) AS events'))[0];
const fromB64 = (s: string) => Buffer.from(s, 'base64');
const keyPem = (kid: string) => {
  const jwk = ctx.deps.keyring.jwks().keys.find((k) => k.kid === kid)!;
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' }).export({ type: 'spki', format: 'pem' }) as string;
};

/**
 * Stock-tool checks of extracted bundle folders: one sha256sum over every payload.json (each
 * must equal the packet_hash its attestation commits to), then openssl per bundle.
 */
function checkWithStockTools(root: string, folders: string[]): void {
  const sums = execFileSync('sha256sum', folders.map((f) => path.join(f, 'payload.json')), { cwd: root, encoding: 'utf8' }).trim().split('\n');
  expect(sums).toHaveLength(folders.length);
  folders.forEach((f, i) => {
    const attestation = JSON.parse(fs.readFileSync(path.join(root, f, 'attestation.json'), 'utf8'));
    expect(sums[i]!.slice(0, 64), f).toBe(attestation.packet_hash);
    openssl(path.join(root, f), attestation.key_id);
  });
}

function openssl(dir: string, kid: string): void {
  fs.writeFileSync(path.join(dir, 'key.pem'), keyPem(kid));
  const ossl = spawnSync('openssl', ['pkeyutl', '-verify', '-pubin', '-inkey', 'key.pem', '-rawin', '-in', 'attestation.json', '-sigfile', 'attestation.sig'], { cwd: dir, encoding: 'utf8' });
  expect(ossl.status, ossl.stdout + ossl.stderr).toBe(0);
}

describe('proof kit', () => {
  it('is public and names the stock commands for seals, bundles, inclusion and consistency', async () => {
    ctx = await createTestContext();
    const res = await ctx.request('/evidence-packets/proof-kit');
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body.bundles.commands)).toContain('openssl pkeyutl -verify');
    expect(res.body.epochs.cadence_seconds).toBe(3600);
    expect(res.body.inclusion_proof.steps).toHaveLength(6);
  });
});

describe('seal bundles', () => {
  it('bundles a posted packet statelessly; refuses a tampered or foreign packet with 422', async () => {
    const key = await production();
    const [sealed] = await sealRecords(key, 1);
    const before = await counts();
    const res = await ctx.request('/evidence-packets/seal-bundle', { json: sealed.verify_request, key });
    expect(res.status).toBe(200);
    const files = Object.fromEntries(res.body.records[0].files.map((f: any) => [f.name, fromB64(f.content_base64)]));
    expect(Object.keys(files).sort()).toEqual([...BUNDLE_FILE_NAMES].sort());
    expect(failedChecks(await verifyBundle(files, trustedKeySet(ctx.deps.keyring.jwks())))).toEqual([]);

    const tampered = { ...sealed.verify_request, decision: 'allow', status: 'tampered' };
    const bad = await ctx.request('/evidence-packets/seal-bundle', { json: tampered, key });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ code: 'seal_not_verified', failed_checks: ['packet_hash'] });
    const other = ctx.productionTenant().apiKey;
    expect((await ctx.request('/evidence-packets/seal-bundle', { json: sealed.verify_request, key: other })).status).toBe(422);
    expect(await counts()).toEqual(before); // nothing stored, nothing metered, no event
  });

  it('verify-seal takes a packet or a bundle, and names the check a tampered file fails', async () => {
    const key = await production();
    const [sealed] = await sealRecords(key, 1);
    expect((await ctx.request('/evidence-packets/verify-seal', { json: sealed.verify_request, key })).body).toMatchObject({ verified: true, failed_checks: [] });
    const pkg = (await ctx.request('/evidence-packets/seal-bundle', { json: sealed.verify_request, key })).body;
    const files: Record<string, string> = Object.fromEntries(pkg.records[0].files.map((f: any) => [f.name, f.content_base64]));
    expect((await ctx.request('/evidence-packets/verify-seal', { json: { files }, key })).body).toMatchObject({ verified: true, action_key: sealed.action_key });
    const flip = (b64: string, at: number) => {
      const b = fromB64(b64);
      b[at]! ^= 1;
      return b.toString('base64');
    };
    const expectations: [string, string][] = [
      ['payload.json', 'packet_hash'],
      ['attestation.sig', 'signature'],
    ];
    for (const [file, check] of expectations) {
      const res = await ctx.request('/evidence-packets/verify-seal', { json: { files: { ...files, [file]: flip(files[file]!, 20) } }, key });
      expect(res.body.verified, file).toBe(false);
      expect(res.body.failed_checks, file).toContain(check);
    }
    // Each failed authenticated verification is a verify.failed event (interface-spec Events).
    const failedEvents = await ctx.sql<{ body: string }>("SELECT body FROM webhook_deliveries WHERE event = 'verify.failed' ORDER BY id");
    expect(failedEvents).toHaveLength(2);
    expect(JSON.parse(failedEvents[1]!.body)).toMatchObject({ action_key: sealed.action_key, vertical: 'eu-ai-act', failed_checks: ['signature'] });
    // An edited attestation or recipe fails too, with the check that catches it named.
    const att = JSON.parse(fromB64(files['attestation.json']!).toString());
    const edited = Buffer.from(JSON.stringify({ ...att, decision: 'tampered' }, Object.keys(att).sort())).toString('base64');
    expect((await ctx.request('/evidence-packets/verify-seal', { json: { files: { ...files, 'attestation.json': edited } }, key })).body.failed_checks).toEqual(
      expect.arrayContaining(['signature']),
    );
    const recipe = JSON.parse(fromB64(files['verify.json']!).toString());
    const editedRecipe = Buffer.from(JSON.stringify({ ...recipe, trust: 'trust me' }, Object.keys(recipe).sort())).toString('base64');
    expect((await ctx.request('/evidence-packets/verify-seal', { json: { files: { ...files, 'verify.json': editedRecipe } }, key })).body.failed_checks).toContain('canonical_form');
  });

  it('batch: a bare array is 422; any unknown key fails the whole call with 404 listing every missing key', async () => {
    const key = await production();
    const sealed = await sealRecords(key, 2);
    const keys = sealed.map((s) => s.action_key);
    const bare = await ctx.request('/evidence-packets/seal-bundle/batch', { json: keys, key });
    expect(bare.status).toBe(422);
    const missing = ['law:proposed-action:01AAAAAAAAAAAAAAAAAAAAAAAA', 'eu-ai-act:output_marked:nope'];
    const res = await ctx.request('/evidence-packets/seal-bundle/batch', { json: { action_keys: [keys[0], ...missing, keys[1]] }, key });
    expect(res.status).toBe(404);
    expect(res.body.missing_action_keys).toEqual(missing);
    // Another tenant's keys are missing for this tenant, exactly like unknown ones.
    const other = ctx.productionTenant().apiKey;
    expect((await ctx.request('/evidence-packets/seal-bundle/batch', { json: { action_keys: keys }, key: other })).body.missing_action_keys).toEqual(keys);
    expect((await ctx.request('/evidence-packets/seal-bundle/batch', { json: { action_keys: [] }, key })).status).toBe(422);
  });

  it('batch of 100 as a tar: sha256sum -c, and every bundle verified by sha256sum and openssl; the zip holds the same files', async () => {
    const key = await production();
    const sealed = await sealRecords(key, 100);
    const before = await counts();
    const res = await ctx.app.request('/evidence-packets/seal-bundle/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/x-tar', 'x-service-key': key },
      body: JSON.stringify({ action_keys: sealed.map((s) => s.action_key) }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-tar');
    const dir = makeTempDir('svc-batch-');
    dirs.push(dir);
    fs.writeFileSync(path.join(dir, 'p.tar'), Buffer.from(await res.arrayBuffer()));
    execFileSync('tar', ['-xf', 'p.tar'], { cwd: dir });
    execFileSync('sha256sum', ['--quiet', '-c', 'SHA256SUMS'], { cwd: dir });
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'MANIFEST.json'), 'utf8'));
    expect(manifest.records).toHaveLength(100);
    expect(manifest.files).toHaveLength(400);
    checkWithStockTools(dir, manifest.records.map((r: { path: string }) => r.path));
    // MANIFEST.json lists the same hashes sha256sum -c just checked.
    const sums = fs.readFileSync(path.join(dir, 'SHA256SUMS'), 'utf8');
    expect(manifest.files.map((f: { path: string; sha256: string }) => `${f.sha256}  ${f.path}\n`).join('')).toBe(sums);
    expect(await counts()).toEqual(before);

    const zip = await ctx.app.request('/evidence-packets/seal-bundle/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/zip', 'x-service-key': key },
      body: JSON.stringify({ action_keys: sealed.slice(0, 5).map((s) => s.action_key) }),
    });
    expect(zip.headers.get('content-type')).toBe('application/zip');
    const zdir = makeTempDir('svc-batch-zip-');
    dirs.push(zdir);
    fs.writeFileSync(path.join(zdir, 'p.zip'), Buffer.from(await zip.arrayBuffer()));
    execFileSync('unzip', ['-q', 'p.zip'], { cwd: zdir });
    execFileSync('sha256sum', ['--quiet', '-c', 'SHA256SUMS'], { cwd: zdir });
    checkWithStockTools(zdir, JSON.parse(fs.readFileSync(path.join(zdir, 'MANIFEST.json'), 'utf8')).records.map((r: { path: string }) => r.path));
  }, 120_000);
});
