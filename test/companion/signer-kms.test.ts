/**
 * SVC_SIGNER=aws-kms through the official SDK against a loopback stand-in of the AWS KMS API
 * (kms-stand-in.ts): GetPublicKey at startup, one Sign per seal with ED25519_SHA_512 over the
 * RAW message, SigV4-signed; a KMS error or a KMS that never answers refuses the seal with 503
 * and stores nothing, and the next seal signs again.
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { keyId } from '../../shared/keys.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { expectSealRefused, sealProductionAndVerify } from './signer-fixtures.ts';

const KEY_ID = 'alias/svc-receipts';
const CREDENTIALS = {
  AWS_ACCESS_KEY_ID: 'AKIDSTANDIN0000000000',
  AWS_SECRET_ACCESS_KEY: 'stand-in-secret-key',
  AWS_EC2_METADATA_DISABLED: 'true',
  // The SDK's notice about its future Node versions, once per client thread: noise here.
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};
const saved = Object.fromEntries(Object.keys(CREDENTIALS).map((k) => [k, process.env[k]]));

let standIn: ChildProcess;
let endpoint: string;
let standInPublicKey: Uint8Array;

function ask<T>(message: object, answers: (m: any) => m is T): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (m: unknown) => {
      if (!answers(m)) return;
      standIn.off('message', onMessage);
      resolve(m);
    };
    standIn.on('message', onMessage);
    standIn.send(message);
  });
}
const setMode = (mode: 'ok' | 'error' | 'hang') => ask({ mode }, (m): m is { mode: string } => m?.mode === mode);
const takeRequests = async () => (await ask({ requests: true }, (m): m is { requests: any[] } => Array.isArray(m?.requests))).requests;

beforeAll(async () => {
  // The SDK's default credential chain reads these; the client thread inherits them.
  Object.assign(process.env, CREDENTIALS);
  standIn = fork(path.join(REPO_ROOT, 'test/companion/kms-stand-in.ts'), { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = await new Promise<{ port: number; publicKey: string }>((resolve) => standIn.once('message', (m) => resolve(m as { port: number; publicKey: string })));
  endpoint = `http://127.0.0.1:${ready.port}`;
  standInPublicKey = new Uint8Array(Buffer.from(ready.publicKey, 'base64'));
});
afterAll(() => {
  standIn.disconnect();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

const contexts: TestContext[] = [];
afterEach(async () => {
  await setMode('ok');
  for (const c of contexts.splice(0)) await c.close();
  await takeRequests(); // each test sees only its own requests
});

async function start(overrides: Record<string, string> = {}): Promise<TestContext> {
  const ctx = await createTestContext({
    env: { SVC_SIGNER: 'aws-kms', SVC_KMS_KEY_ID: KEY_ID, SVC_KMS_REGION: 'us-east-1', SVC_KMS_ENDPOINT: endpoint, ...overrides },
  });
  contexts.push(ctx);
  return ctx;
}

describe('SVC_SIGNER=aws-kms (loopback KMS stand-in)', () => {
  it('publishes the KMS key and signs production seals that verify online and offline, with the documented requests', async () => {
    const ctx = await start();
    expect(ctx.deps.keyring.production.keyId).toBe(keyId(standInPublicKey));
    const startup = await takeRequests();
    // GetPublicKey, then the startup probe's Sign.
    expect(startup.map((r) => r.target)).toEqual(['TrentService.GetPublicKey', 'TrentService.Sign']);
    expect(startup[0].body).toEqual({ KeyId: KEY_ID });

    expect(await sealProductionAndVerify(ctx)).toBe(keyId(standInPublicKey));
    const [sign] = await takeRequests();
    expect(sign.target).toBe('TrentService.Sign');
    expect(sign.contentType).toBe('application/x-amz-json-1.1');
    expect(sign.body).toMatchObject({ KeyId: KEY_ID, SigningAlgorithm: 'ED25519_SHA_512', MessageType: 'RAW' });
    // The attestation bytes, not a digest: RAW means KMS hashes inside Ed25519 (RFC 8032).
    expect(Buffer.from(sign.body.Message, 'base64').toString('utf8')).toMatch(/^\{"action_key":/);
    // SigV4 (AWS Signature Version 4) for the kms service in the configured region.
    expect(sign.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDSTANDIN0000000000\/\d{8}\/us-east-1\/kms\/aws4_request, SignedHeaders=[a-z0-9;-]*x-amz-target[a-z0-9;-]*, Signature=[0-9a-f]{64}$/,
    );

    const plan = await ctx.request('/deployment/signer-plan');
    expect(plan.body.production_custody_managed).toBe(true);
    expect(plan.body.signers).toContainEqual(
      expect.objectContaining({
        role: 'production',
        kind: 'aws-kms',
        managed: true,
        non_exportable: true,
        key_id: keyId(standInPublicKey),
        locators: { key_id: KEY_ID, key_arn: 'arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab', region: 'us-east-1', endpoint },
      }),
    );
    expect(plan.text).not.toContain(CREDENTIALS.AWS_SECRET_ACCESS_KEY);
    expect(plan.text).not.toContain(CREDENTIALS.AWS_ACCESS_KEY_ID);
  });

  it('refuses the seal with 503 and stores nothing when KMS answers an error, then signs again', async () => {
    const ctx = await start();
    await setMode('error');
    await expectSealRefused(ctx);
    expect((await ctx.request('/readyz')).status).toBe(503);
    await setMode('ok');
    await sealProductionAndVerify(ctx);
  });

  it('refuses the seal with 503 and stores nothing when KMS does not answer in SVC_KMS_TIMEOUT_MS, then signs again', async () => {
    const ctx = await start({ SVC_KMS_TIMEOUT_MS: '500' });
    await setMode('hang');
    await expectSealRefused(ctx);
    await setMode('ok');
    await sealProductionAndVerify(ctx);
  });

  it('probes the KMS key for readiness at most once a minute while it passes, and at once after a failure', async () => {
    const ctx = await start();
    await takeRequests();
    const signs = async () => (await takeRequests()).filter((r) => r.target === 'TrentService.Sign').length;
    expect((await ctx.request('/readyz')).status).toBe(200);
    expect((await ctx.request('/readyz')).status).toBe(200);
    expect(await signs()).toBe(1);
    ctx.clock.advance(60_000);
    expect((await ctx.request('/readyz')).status).toBe(200);
    expect(await signs()).toBe(1);
    // A failure is never remembered: the next probe asks KMS again.
    ctx.clock.advance(60_000);
    await setMode('error');
    expect((await ctx.request('/readyz')).status).toBe(503);
    await setMode('ok');
    expect((await ctx.request('/readyz')).status).toBe(200);
    expect(await signs()).toBe(2);
  });

  it('refuses to start when KMS refuses GetPublicKey', async () => {
    await expect(start({ SVC_KMS_KEY_ID: 'alias/missing' })).rejects.toThrow(/AWS KMS GetPublicKey for alias\/missing failed: NotFoundException \(HTTP 400\)/);
  });
});
