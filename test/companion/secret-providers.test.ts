/**
 * Secret references beyond the environment (core/secret-refs.ts, core/secrets/): grants for
 * every tenant ("*") and each tenant's own namespace, which no grant can hand to another;
 * aws-sm:// through the AWS SDK's Secrets Manager client and vault:// through Vault's KV v2
 * HTTP API, each against a loopback stand-in speaking its wire format
 * (secret-manager-stand-ins.ts); schemes without a provider refused when configured; grants
 * and the reference map re-read on SIGHUP by the real process, a bad file keeping the last.
 */
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../companion/core/config.ts';
import { SecretResolver } from '../../companion/core/secret-refs.ts';
import { cleanupCompanions, start, tempDataDir } from '../helpers/companion-process.ts';
import { freshTenantContext, makeTempDir } from './helpers.ts';
import { recordBody } from './pack-fixtures.ts';
import { secretsManagerStandIn, sigV4Valid, vaultStandIn } from './secret-manager-stand-ins.ts';
import type { StandIn } from './secret-manager-stand-ins.ts';
import { startReceiver } from './webhook-receiver.ts';

const AWS_ENV = {
  AWS_ACCESS_KEY_ID: 'AKIDSTANDIN0000000001',
  AWS_SECRET_ACCESS_KEY: 'stand-in-secret-access-key',
  // The SDK's chain must never try the instance metadata address: credentials come from above.
  AWS_EC2_METADATA_DISABLED: 'true',
};
const VAULT_TOKEN = 'hvs.stand-in-token';
const saved: Record<string, string | undefined> = {};
const dirs: string[] = [];

beforeAll(() => {
  for (const [k, v] of Object.entries({ ...AWS_ENV, SVC_TEST_VAULT_TOKEN: VAULT_TOKEN })) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
});
afterAll(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});
afterEach(() => {
  cleanupCompanions();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tempFile(name: string, content: unknown): string {
  const dir = makeTempDir('svc-secrets-');
  dirs.push(dir);
  const file = path.join(dir, name);
  fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content), { mode: 0o600 });
  return file;
}

describe('grants', () => {
  const env = { SVC_SECRET_TEAM_SHARED: 'shared-value', SVC_SECRET_TENANTS_TEN_A_HOOK: 'folded-env-value' };

  it('"*" grants its references to every tenant; an entry grants to its tenant only', async () => {
    const r = new SecretResolver({ grants: { '*': ['secret://team/shared'], ten_a: ['env://ONLY_A'] }, env: { ...env, ONLY_A: 'a-value' } });
    for (const t of ['ten_a', 'ten_b', 'ten_anyone']) expect(await r.resolve(t, 'secret://team/shared')).toEqual({ ok: true, value: 'shared-value', provider: 'secret' });
    expect(await r.resolve('ten_a', 'env://ONLY_A')).toMatchObject({ ok: true, value: 'a-value' });
    expect(await r.resolve('ten_b', 'env://ONLY_A')).toEqual({ ok: false, provider: 'env', error: 'not_granted' });
    // "*" is a key of the table, never a tenant that could be asked for.
    expect(r.isGranted('*', 'secret://team/shared')).toBe(false);
  });

  it("a tenant's namespace is its own without a grant, and no other tenant's, however the path is spelled", async () => {
    const map = tempFile('refs.json', { 'secret://tenants/ten_a/hook': 'a-hook', 'secret://tenants/ten_b/hook': 'b-hook' });
    const r = new SecretResolver({ grants: {}, refMapFile: map, env });
    expect(await r.resolve('ten_a', 'secret://tenants/ten_a/hook')).toEqual({ ok: true, value: 'a-hook', provider: 'secret' });
    expect(await r.resolve('ten_b', 'secret://tenants/ten_b/hook')).toMatchObject({ ok: true, value: 'b-hook' });
    expect(r.isGranted('ten_a', 'secret://tenants/ten_a/nested/hook')).toBe(true);
    for (const ref of ['secret://tenants/ten_b/hook', 'secret://tenants/ten_a/../ten_b/hook', 'secret://tenants/ten_a/./hook', 'secret://Tenants/ten_a/hook', 'secret://TENANTS/ten_a/hook', 'secret://tenants/ten_a//hook', 'secret://tenants/ten_a', 'secret://tenants/ten_a/']) {
      expect(r.isGranted('ten_a', ref), ref).toBe(false);
    }
    expect(await r.resolve('ten_a', 'secret://tenants/ten_b/hook')).toEqual({ ok: false, provider: 'secret', error: 'not_granted' });
    // A namespaced reference resolves from the map only: the deterministic variable folds
    // case and punctuation, where two tenants' paths could meet.
    expect(await r.resolve('ten_a', 'secret://tenants/ten_a/HOOK')).toEqual({ ok: false, provider: 'secret', error: 'not_found' });
  });

  it('no grant table can hand a namespaced reference to another tenant: "*" and foreign entries are refused at start', () => {
    const load = (grants: unknown) => () => loadConfig({ SVC_SECRET_GRANTS: JSON.stringify(grants) }, [], '/srv');
    expect(load({ '*': ['secret://tenants/ten_a/hook'] })).toThrow(/SVC_SECRET_GRANTS\["\*"\] grants 1 reference\(s\) in another tenant's namespace/);
    expect(load({ ten_b: ['secret://tenants/ten_a/hook'] })).toThrow(/SVC_SECRET_GRANTS\["ten_b"\] grants 1 reference\(s\) in another tenant's namespace/);
    expect(load({ ten_b: ['secret://Tenants/ten_a/hook'] })).toThrow(/another tenant's namespace/);
    expect(load({ ten_a: ['secret://tenants/ten_a/hook', 'env://X'] })).not.toThrow();
    // And the resolver itself never grants across, whatever table it is handed.
    const r = new SecretResolver({ grants: { '*': ['secret://tenants/ten_a/hook'], ten_b: ['secret://tenants/ten_a/hook'] }, env: {} });
    expect(r.isGranted('ten_b', 'secret://tenants/ten_a/hook')).toBe(false);
    expect(r.isGranted('ten_a', 'secret://tenants/ten_a/hook')).toBe(true);
  });

  it('refuses, at start, granted schemes this service cannot resolve, naming the entry and never the reference', () => {
    let err: unknown;
    try {
      loadConfig({ SVC_SECRET_GRANTS: JSON.stringify({ ten_a: ['gcp-sm://projects/p/secrets/private-name', 'azure-kv://v/k', 'aws-sm://prod/x'] }) }, [], '/srv');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems;
    expect(problems).toEqual([
      'SVC_SECRET_GRANTS["ten_a"] grants gcp-sm:// references this service cannot resolve (this build has no gcp-sm:// provider)',
      'SVC_SECRET_GRANTS["ten_a"] grants azure-kv:// references this service cannot resolve (this build has no azure-kv:// provider)',
      'SVC_SECRET_GRANTS["ten_a"] grants aws-sm:// references this service cannot resolve (aws-sm:// needs SVC_AWS_SM_REGION)',
    ]);
    expect(problems.join('\n')).not.toContain('private-name');
    expect(() => loadConfig({ SVC_SECRET_GRANTS: JSON.stringify({ ten_a: ['aws-sm://prod/x'] }), SVC_AWS_SM_REGION: 'us-east-1' }, [], '/srv')).not.toThrow();
  });
});

describe('aws-sm:// through AWS Secrets Manager', () => {
  let sm: StandIn;
  beforeAll(async () => {
    sm = await secretsManagerStandIn({ 'prod/hook': 'aws-hook-value', 'prod/json': JSON.stringify({ token: 'json-field-value', n: 1 }) });
  });
  afterAll(() => sm.close());
  const resolver = (extra: Partial<ConstructorParameters<typeof SecretResolver>[0]> = {}) =>
    new SecretResolver({ grants: { '*': ['aws-sm://prod/hook', 'aws-sm://prod/json#token', 'aws-sm://prod/json#n', 'aws-sm://prod/missing'] }, awsSmRegion: 'us-east-1', awsSmEndpoint: sm.url, ...extra });

  it('resolves through GetSecretValue, signed with SigV4 by the SDK, posted to the configured endpoint', async () => {
    const r = resolver({ cacheMs: 0 });
    sm.requests.length = 0;
    expect(await r.resolve('ten_a', 'aws-sm://prod/hook')).toEqual({ ok: true, value: 'aws-hook-value', provider: 'aws-sm' });
    expect(sm.requests).toHaveLength(1);
    const req = sm.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/');
    expect(req.headers['x-amz-target']).toBe('secretsmanager.GetSecretValue');
    expect(req.headers['content-type']).toBe('application/x-amz-json-1.1');
    expect(JSON.parse(req.body)).toEqual({ SecretId: 'prod/hook' });
    expect(sigV4Valid(req, AWS_ENV.AWS_SECRET_ACCESS_KEY)).toEqual({ valid: true, accessKeyId: AWS_ENV.AWS_ACCESS_KEY_ID, region: 'us-east-1', service: 'secretsmanager' });
    // The same check fails for any other key: it really verifies the signature.
    expect(sigV4Valid(req, 'another-secret-key').valid).toBe(false);
    r.close();
  });

  it('picks a #field of a JSON SecretString; a missing secret or field is not_found', async () => {
    const r = resolver({ cacheMs: 0 });
    expect(await r.resolve('ten_a', 'aws-sm://prod/json#token')).toMatchObject({ ok: true, value: 'json-field-value' });
    expect(await r.resolve('ten_a', 'aws-sm://prod/json#n')).toEqual({ ok: false, provider: 'aws-sm', error: 'not_found' });
    expect(await r.resolve('ten_a', 'aws-sm://prod/missing')).toEqual({ ok: false, provider: 'aws-sm', error: 'not_found' });
    r.close();
  });

  it('reuses a fetched value for the cache time, and a reload fetches afresh', async () => {
    let now = 1_000_000;
    const r = resolver({ cacheMs: 60_000, now: () => now });
    sm.requests.length = 0;
    await r.resolve('ten_a', 'aws-sm://prod/hook');
    await r.resolve('ten_b', 'aws-sm://prod/hook');
    expect(sm.requests).toHaveLength(1);
    now += 60_001;
    await r.resolve('ten_a', 'aws-sm://prod/hook');
    expect(sm.requests).toHaveLength(2);
    expect(r.reload().ok).toBe(true);
    await r.resolve('ten_a', 'aws-sm://prod/hook');
    expect(sm.requests).toHaveLength(3);
    r.close();
  });

  it('a secret manager that does not answer is provider_error after the timeout, not a hung send', async () => {
    const silent = await secretsManagerStandIn({});
    silent.hang();
    const r = new SecretResolver({ grants: { '*': ['aws-sm://prod/hook'] }, awsSmRegion: 'us-east-1', awsSmEndpoint: silent.url, timeoutMs: 200 });
    expect(await r.resolve('ten_a', 'aws-sm://prod/hook')).toEqual({ ok: false, provider: 'aws-sm', error: 'provider_error' });
    r.close();
    await silent.close();
  });
});

describe('vault:// through Vault KV v2', () => {
  let vault: StandIn;
  beforeAll(async () => {
    vault = await vaultStandIn({ 'secret/team/hook': { key: 'vault-hook-value', other: 'x' }, 'kv-prod/a b': { key: 'spaced' } }, VAULT_TOKEN);
  });
  afterAll(() => vault.close());
  const resolver = (extra: Partial<ConstructorParameters<typeof SecretResolver>[0]> = {}) =>
    new SecretResolver({ grants: { '*': ['vault://secret/team/hook#key', 'vault://secret/team/hook#nope', 'vault://secret/team/gone#key'] }, vaultAddr: vault.url, vaultTokenRef: 'env://SVC_TEST_VAULT_TOKEN', cacheMs: 0, ...extra });

  it('reads GET /v1/{mount}/data/{path} with X-Vault-Token (and X-Vault-Namespace), and answers the field', async () => {
    const r = resolver({ vaultNamespace: 'team/ops' });
    vault.requests.length = 0;
    expect(await r.resolve('ten_a', 'vault://secret/team/hook#key')).toEqual({ ok: true, value: 'vault-hook-value', provider: 'vault' });
    expect(vault.requests).toHaveLength(1);
    expect(vault.requests[0]).toMatchObject({ method: 'GET', url: '/v1/secret/data/team/hook' });
    expect(vault.requests[0]!.headers['x-vault-token']).toBe(VAULT_TOKEN);
    expect(vault.requests[0]!.headers['x-vault-namespace']).toBe('team/ops');
    expect(await r.resolve('ten_a', 'vault://secret/team/hook#nope')).toEqual({ ok: false, provider: 'vault', error: 'not_found' });
    expect(await r.resolve('ten_a', 'vault://secret/team/gone#key')).toEqual({ ok: false, provider: 'vault', error: 'not_found' });
  });

  it('a refused token is provider_error; an unresolvable token reference asks nothing', async () => {
    process.env.SVC_TEST_VAULT_WRONG = 'hvs.wrong';
    try {
      expect(await resolver({ vaultTokenRef: 'env://SVC_TEST_VAULT_WRONG' }).resolve('ten_a', 'vault://secret/team/hook#key')).toEqual({ ok: false, provider: 'vault', error: 'provider_error' });
    } finally {
      delete process.env.SVC_TEST_VAULT_WRONG;
    }
    vault.requests.length = 0;
    expect(await resolver({ vaultTokenRef: 'env://SVC_TEST_VAULT_UNSET' }).resolve('ten_a', 'vault://secret/team/hook#key')).toEqual({ ok: false, provider: 'vault', error: 'provider_error' });
    expect(vault.requests).toHaveLength(0);
  });

  it('a vault:// reference needs its #field', () => {
    const r = resolver();
    expect(r.refusal('ten_a', 'vault://secret/team/hook')).toBe('not_a_reference');
    expect(r.refusal('ten_a', 'vault://secret#key')).toBe('not_a_reference');
  });
});

describe('tenant routes on secret managers', () => {
  it('a webhook target keyed by aws-sm:// or vault:// is ready and its deliveries are signed with the fetched value', async () => {
    const sm = await secretsManagerStandIn({ 'prod/hook': 'aws-signing-key' });
    const vault = await vaultStandIn({ 'secret/hooks/ops': { key: 'vault-signing-key' } }, VAULT_TOKEN);
    const rx = { aws: await startReceiver(), vault: await startReceiver() };
    const grantsFile = tempFile('grants.json', {});
    const { ctx, key, tenantId } = await freshTenantContext({
      env: {
        SVC_WEBHOOK_ALLOW_LOOPBACK: '1',
        SVC_SECRET_GRANTS_FILE: grantsFile,
        SVC_AWS_SM_REGION: 'us-east-1',
        SVC_AWS_SM_ENDPOINT: sm.url,
        SVC_VAULT_ADDR: vault.url,
        SVC_VAULT_TOKEN_REF: 'env://SVC_TEST_VAULT_TOKEN',
      },
    });
    try {
      fs.writeFileSync(grantsFile, JSON.stringify({ [tenantId]: ['aws-sm://prod/hook'], '*': ['vault://secret/hooks/ops#key'] }));
      expect(ctx.deps.secrets.reload()).toMatchObject({ ok: true, grantTenants: 2, grantReferences: 2 });
      for (const [target, ref, value] of [['aws', 'aws-sm://prod/hook', 'aws-signing-key'], ['vault', 'vault://secret/hooks/ops#key', 'vault-signing-key']] as const) {
        const put = await ctx.request(`/tenant/integrations/webhook/${target}`, { method: 'PUT', key, json: { enabled: true, config: { url: rx[target].url, events: ['record.sealed'] }, secret_ref: ref } });
        expect(put.status, put.text).toBe(201);
        expect(put.body.readiness.state).toBe('ready');
        expect(put.text).not.toContain(value);
      }
      await ctx.request('/v1/record', { json: recordBody(), key });
      await ctx.deps.webhooks.worker.tick();
      for (const [target, value] of [['aws', 'aws-signing-key'], ['vault', 'vault-signing-key']] as const) {
        expect(rx[target].received).toHaveLength(1);
        const req = rx[target].received[0]!;
        const t = String(req.headers['x-service-timestamp']);
        const mac = createHmac('sha256', value).update(Buffer.concat([Buffer.from(`${t}.${String(req.headers['x-service-id'])}.`), req.raw])).digest('hex');
        expect(req.headers['x-service-signature']).toBe(`t=${t},v1=${mac}`);
      }
      // Secret values are never stored.
      for (const f of await ctx.storedBytes()) for (const v of ['aws-signing-key', 'vault-signing-key']) expect(f.bytes.includes(Buffer.from(v)), `${f.name} ${v}`).toBe(false);
    } finally {
      await ctx.close();
      await rx.aws.close();
      await rx.vault.close();
      await sm.close();
      await vault.close();
    }
  });
});

describe('SIGHUP, on the real process', () => {
  it('re-reads the grants file and the reference map without a restart; a bad file keeps the previous ones', async () => {
    const grantsFile = tempFile('grants.json', {});
    const mapFile = tempFile('refs.json', { 'secret://team/other': 'map-value-1' });
    const svc = await start(tempDataDir(), { SVC_WEBHOOK_ALLOW_LOOPBACK: '1', SVC_SECRET_GRANTS_FILE: grantsFile, SVC_SECRET_REF_MAP_FILE: mapFile });
    const call = async (p: string, init: { method?: string; key?: string; json?: unknown } = {}) => {
      const res = await fetch(`${svc.url}${p}`, {
        method: init.method ?? (init.json === undefined ? 'GET' : 'POST'),
        headers: { 'content-type': 'application/json', ...(init.key ? { 'x-service-key': init.key } : {}) },
        ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const signup = async (email: string) => (await call('/signup/checkout', { json: { email } })).body as { api_key: string; tenant_id: string };
    const a = await signup('a@example.com');
    const b = await signup('b@example.com');
    const put = (key: string, target: string, ref: string) =>
      call(`/tenant/integrations/webhook/${target}`, { method: 'PUT', key, json: { enabled: true, config: { url: 'http://127.0.0.1:9/hook', events: [] }, secret_ref: ref } });
    const reloads = () => svc.stdout().split('\n').filter((l) => l.includes('"secrets reload')).length;

    // The tenant's own namespace needs no grant; another tenant's namespace is never granted.
    expect((await put(a.api_key, 'own', `secret://tenants/${a.tenant_id}/hook`)).status).toBe(201);
    const foreign = await put(b.api_key, 'foreign', `secret://tenants/${a.tenant_id}/hook`);
    expect(foreign.status).toBe(422);
    expect(foreign.body.errors).toEqual([expect.objectContaining({ path: '/secret_ref', code: 'secret_ref_not_granted' })]);

    const before = await put(a.api_key, 'team', 'secret://team/hook');
    expect(before.status).toBe(422);
    expect(before.body.errors[0].code).toBe('secret_ref_not_granted');

    fs.writeFileSync(grantsFile, JSON.stringify({ '*': ['secret://team/hook'] }));
    // The map gains the value only now, so "ready" below shows it was re-read too.
    fs.writeFileSync(mapFile, JSON.stringify({ 'secret://team/hook': 'map-value-2' }));
    svc.child.kill('SIGHUP');
    await svc.waitForLog(/"secrets reloaded"[^\n]*"tenants":1/);
    expect(reloads()).toBe(1);
    for (const key of [a.api_key, b.api_key]) {
      const after = await put(key, 'team', 'secret://team/hook');
      expect(after.status).toBe(201);
      expect(after.body.readiness.state).toBe('ready');
    }

    // A file that cannot be used: one error line naming the setting; the last grants stay.
    fs.writeFileSync(grantsFile, '{"ten_x": "not a list"');
    svc.child.kill('SIGHUP');
    await svc.waitForLog(/"secrets reload failed[^\n]*SVC_SECRET_GRANTS_FILE/);
    const failed = svc.stdout().split('\n').filter((l) => l.includes('secrets reload failed'));
    expect(failed).toHaveLength(1);
    expect(JSON.parse(failed[0]!)).toMatchObject({ level: 'error' });
    expect((await put(b.api_key, 'team2', 'secret://team/hook')).status).toBe(201);
    expect(svc.child.exitCode).toBeNull();
    expect(svc.stdout() + svc.stderr()).not.toContain('map-value');
  });
});
