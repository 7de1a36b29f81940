/**
 * The control plane, demo and deployment maps (interface-spec "Control plane, demo and
 * deployment"; Authentication 4): every map answers 200 without a credential (its body checked
 * against its declared schema by the harness), its content follows the running configuration,
 * no secret value reaches any map, and the demo fixtures are bodies the service accepts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { canonicalBytes } from '../../shared/canonical-json.ts';
import { sha256Hex } from '../../shared/hash.ts';
import { failed } from '../../companion/ops/readiness.ts';
import { createTestContext, makeTempDir } from './helpers.ts';
import type { TestContext } from './helpers.ts';

/** The spec's list, but /deployment/signer-plan (signer custody serves it). */
const MAP_PATHS = [
  '/product-map',
  '/vertical-packs',
  '/pack-registry',
  '/catalog-map',
  '/corpus-map',
  '/integration-recipes',
  '/workflow-map',
  '/demo-fixtures',
  '/website-demo-export',
  ...[
    'image-plan',
    'hosting-plan',
    'domain-plan',
    'environment-plan',
    'cta-bridge-plan',
    'website-cta-inventory',
    'proxy-plan',
    'tenant-console-plan',
    'database-plan',
    'secret-plan',
    'worker-plan',
    'operations-plan',
    'signup-plan',
    'readiness',
  ].map((p) => `/deployment/${p}`),
];

const contexts: TestContext[] = [];
const savedEnv: Record<string, string | undefined> = {};

async function context(env: Record<string, string> = {}): Promise<TestContext> {
  const ctx = await createTestContext({ env });
  contexts.push(ctx);
  return ctx;
}

function setProcessEnv(name: string, value: string): void {
  if (!(name in savedEnv)) savedEnv[name] = process.env[name];
  process.env[name] = value;
}

afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.close()));
  for (const [name, value] of Object.entries(savedEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
    delete savedEnv[name];
  }
});

/** Every path the OpenAPI document tags control-plane (so maps added later are covered too). */
async function mapPaths(ctx: TestContext): Promise<string[]> {
  const doc = (await ctx.request('/openapi.json')).body;
  return Object.entries(doc.paths as Record<string, any>)
    .filter(([, item]) => item.get?.tags?.includes('control-plane'))
    .map(([p]) => p);
}

async function allMaps(ctx: TestContext): Promise<Record<string, any>> {
  const out: Record<string, any> = {};
  for (const p of await mapPaths(ctx)) {
    const res = await ctx.request(p);
    expect(res.status, p).toBe(200);
    out[p] = res.body;
  }
  return out;
}

describe('control-plane maps', () => {
  it('every map answers 200 with no credential, and the OpenAPI document declares each as public', async () => {
    const ctx = await context();
    const maps = await allMaps(ctx);
    expect(Object.keys(maps)).toEqual(expect.arrayContaining(MAP_PATHS));
    const doc = (await ctx.request('/openapi.json')).body;
    for (const p of Object.keys(maps)) expect(doc.paths[p].get.security, p).toEqual([]);
  });

  it('the product map lists every operation of the OpenAPI document under its capability', async () => {
    const ctx = await context();
    const doc = (await ctx.request('/openapi.json')).body;
    const map = (await ctx.request('/product-map')).body;
    const documented = Object.values(doc.paths as Record<string, Record<string, unknown>>).reduce((n, item) => n + Object.keys(item).length, 0);
    expect(map.totals.endpoints).toBe(documented);
    const listed = map.capabilities.flatMap((c: any) => c.endpoints.map((e: any) => `${e.method} ${e.path}`));
    expect(listed).toContain('POST /v1/gate');
    expect(listed).toContain('GET /product-map');
    const gate = map.capabilities.find((c: any) => c.name === 'gate').endpoints.find((e: any) => e.path === '/v1/gate');
    expect(gate.auth).toBe('api_key');
    expect(map.packs.gate).toEqual(['law', 'defense', 'medicine', 'education', 'us-regulatory']);
  });

  it('pack maps carry the digests GET /v1/packs publishes, and the registry digest is recomputable', async () => {
    const ctx = await context();
    const published = (await ctx.request('/v1/packs')).body.packs as { name: string; manifest_digest: string }[];
    const digests = Object.fromEntries(published.map((p) => [p.name, p.manifest_digest]));
    const vertical = (await ctx.request('/vertical-packs')).body;
    for (const p of [...vertical.gate_packs, ...vertical.record_packs]) expect(p.manifest_digest).toBe(digests[p.name]);
    const registry = (await ctx.request('/pack-registry')).body;
    expect(registry.registry_digest).toBe(sha256Hex(canonicalBytes(registry.packs.map((p: any) => ({ name: p.name, manifest_digest: p.manifest_digest })))));
    const catalog = (await ctx.request('/catalog-map')).body;
    expect(catalog.atoms.find((a: any) => a.ref === 'pack:defense').packs).toEqual(['defense']);
    const corpus = (await ctx.request('/corpus-map')).body;
    expect(corpus.citations.length).toBeGreaterThan(0);
  });

  it('content follows the configuration: two differently configured services give different maps', async () => {
    const grantTenant = 'ten_01JCONTROLPLANE000000000';
    const a = await context();
    const b = await context({
      HOST: '0.0.0.0',
      PORT: '9123',
      SVC_EPOCH_SECONDS: '7',
      SVC_REVIEW_TIMEOUT_SECONDS: '600',
      SVC_MAX_BODY_BYTES: '4096',
      SVC_LOG_LEVEL: 'warn',
      SVC_METRICS_TOKEN: 'metrics-token-0123456789abcdef',
      SVC_SECRET_GRANTS: JSON.stringify({ [grantTenant]: ['env://CP_HOOK_KEY', 'secret://team/hook', 'aws-sm://arn-1'] }),
      // A provider for aws-sm:// (nothing here resolves, so nothing is sent to this address).
      SVC_AWS_SM_REGION: 'us-east-1',
      SVC_AWS_SM_ENDPOINT: 'http://127.0.0.1:9',
      SVC_BILLING_PROVIDER: 'stripe',
      SVC_STRIPE_SECRET_KEY_REF: 'env://CP_STRIPE_KEY',
      SVC_STRIPE_PRICE_ID: 'price_cp0123',
    });
    const [ma, mb] = [await allMaps(a), await allMaps(b)];

    expect(ma['/deployment/signup-plan'].billing).toMatchObject({ provider: 'local', configured: false });
    expect(mb['/deployment/signup-plan'].billing).toMatchObject({ provider: 'stripe', configured: true });
    expect(ma['/workflow-map'].anchoring.epoch_seconds).toBe(3600);
    expect(mb['/workflow-map'].anchoring.epoch_seconds).toBe(7);
    expect(mb['/workflow-map'].review.window_seconds).toBe(600);
    expect(mb['/deployment/proxy-plan'].max_body_bytes).toBe(4096);
    expect(mb['/deployment/hosting-plan'].listen).toEqual({ host: '0.0.0.0', port: 9123, loopback_only: false });
    expect(mb['/deployment/hosting-plan'].base_url).toBe('http://127.0.0.1:9123');
    expect(ma['/deployment/hosting-plan'].listen.loopback_only).toBe(true);
    expect(mb['/deployment/domain-plan'].tls_required).toBe(true);
    expect(ma['/deployment/domain-plan'].tls_required).toBe(false);
    expect(mb['/website-demo-export'].base_url).toBe('http://127.0.0.1:9123');
    expect(ma['/deployment/operations-plan'].metrics_protected).toBe(false);
    expect(mb['/deployment/operations-plan'].metrics_protected).toBe(true);
    expect(mb['/deployment/operations-plan'].logging.level).toBe('warn');
    expect(ma['/deployment/secret-plan'].grants).toEqual({ tenants: 0, references: 0 });
    expect(mb['/deployment/secret-plan'].grants).toEqual({ tenants: 1, references: 3 });
    expect(mb['/deployment/secret-plan'].metrics_token).toBe('set');
    const schemes = Object.fromEntries(mb['/deployment/secret-plan'].schemes.map((s: any) => [s.scheme, s]));
    expect(schemes['env://']).toMatchObject({ resolvable: true, granted_references: 1 });
    expect(schemes['aws-sm://']).toMatchObject({ resolvable: true, granted_references: 1 });
    expect(schemes['gcp-sm://']).toMatchObject({ resolvable: false, granted_references: 0 });
    expect(Object.fromEntries(ma['/deployment/secret-plan'].schemes.map((s: any) => [s.scheme, s.resolvable]))['aws-sm://']).toBe(false);

    // The data directory differs, so does the database file the plan reports.
    expect(ma['/deployment/database-plan'].data_dir).not.toBe(mb['/deployment/database-plan'].data_dir);
    expect(ma['/deployment/database-plan'].data_dir).toContain(path.basename(a.dataDir));
    expect(ma['/deployment/database-plan']).toMatchObject({ engine: 'sqlite', file: 'companion.db', pragmas: { journal_mode: 'wal', synchronous: 'FULL', foreign_keys: true } });
    expect(ma['/deployment/database-plan'].migrations.current).toBe(true);

    const setting = (maps: Record<string, any>, env: string) => maps['/deployment/environment-plan'].settings.find((s: any) => s.env === env);
    expect(setting(ma, 'SVC_EPOCH_SECONDS').value).toBe(3600);
    expect(setting(mb, 'SVC_EPOCH_SECONDS').value).toBe(7);
    expect(setting(ma, 'SVC_METRICS_TOKEN')).toMatchObject({ sensitive: true, value: 'unset' });
    expect(setting(mb, 'SVC_METRICS_TOKEN')).toMatchObject({ sensitive: true, value: 'set' });
    expect(setting(mb, 'SVC_SECRET_GRANTS').value).toBe('1 tenant(s), 3 reference(s)');
  });

  it('no secret value appears in any map', async () => {
    const token = 'metrics-token-SECRET-0123456789';
    const hookValue = 'hook-secret-value-SECRET-42';
    const mapValue = 'map-secret-value-SECRET-43';
    const grantTenant = 'ten_01JSECRETGRANTTENANT0000';
    setProcessEnv('CP_SECRET_HOOK_NAME', hookValue);
    const dir = makeTempDir('svc-cp-secrets-');
    const mapFile = path.join(dir, 'refs.json');
    fs.writeFileSync(mapFile, JSON.stringify({ 'secret://team/private-hook': mapValue }), { mode: 0o600 });
    try {
      const ctx = await context({
        SVC_METRICS_TOKEN: token,
        SVC_SECRET_GRANTS: JSON.stringify({ [grantTenant]: ['env://CP_SECRET_HOOK_NAME', 'secret://team/private-hook'] }),
        SVC_SECRET_REF_MAP_FILE: mapFile,
      });
      const bodies = JSON.stringify(await allMaps(ctx));
      for (const secret of [token, hookValue, mapValue, 'CP_SECRET_HOOK_NAME', 'private-hook', grantTenant]) {
        expect(bodies, secret).not.toContain(secret);
      }
      // The production key file is located, never read out.
      const pem = fs.readFileSync(path.join(ctx.dataDir, 'keys', 'production-ed25519.pem'), 'utf8');
      const base64 = pem.split('\n').filter((l) => l && !l.startsWith('-----')).join('');
      expect(bodies).not.toContain(base64);
      const plan = (await ctx.request('/deployment/secret-plan')).body;
      expect(plan.reference_map_file).toEqual({ set: true, readable: true });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('every demo fixture is accepted by the endpoint it names, with a fresh sandbox key', async () => {
    const ctx = await context();
    const { apiKey } = await ctx.signup();
    const { fixtures } = (await ctx.request('/demo-fixtures')).body;
    const atoms = new Set((await ctx.request('/catalog-map')).body.atoms.map((a: any) => a.ref));
    expect(fixtures.map((f: any) => f.pack)).toEqual(['law', 'defense', 'medicine', 'education', 'us-regulatory', 'eu-ai-act', 'ca-sb942']);
    for (const f of fixtures) {
      const res = await ctx.request(f.path, { json: f.body, key: apiKey });
      expect(res.status, `${f.id}: ${res.text}`).toBeLessThan(300);
      expect(res.body.action_key, f.id).toMatch(new RegExp(`^${f.pack}:`));
      // The catalog map lists every atom a real decision carries.
      for (const ref of res.body.catalog_refs ?? []) expect(atoms.has(ref), ref).toBe(true);
    }
    const site = (await ctx.request('/website-demo-export')).body;
    expect(site.steps.map((s: any) => s.id)).toEqual(fixtures.map((f: any) => f.id));
    expect(site.signup.served).toBe(true);
    expect(site.fixtures_digest).toBe(sha256Hex(canonicalBytes(fixtures)));
  });

  it('readiness runs the /readyz registry: a failing check answers 200 ready:false with its detail and remedy', async () => {
    const ctx = await context();
    const ready = (await ctx.request('/deployment/readiness')).body;
    expect(ready.ready).toBe(true);
    expect(ready.checks.map((c: any) => c.name)).toEqual(ctx.deps.readiness.names());
    expect(ready.checks.map((c: any) => c.name)).toEqual(expect.arrayContaining(['database_writable', 'migrations_current', 'signer_usable', 'workers_alive']));
    expect(ready.checks.every((c: any) => c.when_failing.length > 0)).toBe(true);

    ctx.deps.readiness.register('disk_space', () => failed('below 1 GiB free'));
    const res = await ctx.request('/deployment/readiness');
    expect(res.status).toBe(200);
    expect(res.body.ready).toBe(false);
    expect(res.body.checks.find((c: any) => c.name === 'disk_space')).toMatchObject({ ok: false, detail: 'below 1 GiB free' });
    expect((await ctx.request('/readyz')).status).toBe(503);
    const ops = (await ctx.request('/deployment/operations-plan')).body;
    expect(ops.readiness_checks).toContain('disk_space');
  });

  it('the worker plan reports the registered workers with their intervals and liveness', async () => {
    const ctx = await context({ SVC_EPOCH_SECONDS: '8' });
    const before = (await ctx.request('/deployment/worker-plan')).body;
    expect(before.lifecycle).toBe('new');
    expect(before.workers.map((w: any) => w.name)).toEqual(ctx.deps.workers.status().map((w) => w.name));
    expect(before.workers.find((w: any) => w.name === 'epochs').interval_ms).toBe(1000);
    await ctx.deps.lifecycle.start();
    const after = (await ctx.request('/deployment/worker-plan')).body;
    expect(after.lifecycle).toBe('started');
    expect(after.workers.find((w: any) => w.name === 'review-expiry')).toMatchObject({ running: true, last_round_failed: false });
  });

  it('integration recipes and the workflow map follow the registered channels', async () => {
    const ctx = await context();
    const recipes = (await ctx.request('/integration-recipes')).body;
    const channels: string[] = recipes.channels.map((c: any) => c.channel);
    expect(channels).toContain('webhook');
    expect(recipes.channels.find((c: any) => c.channel === 'webhook').config_schema.properties.url).toBeDefined();
    expect(recipes.event_kinds).toContain('record.sealed');
    const workflow = (await ctx.request('/workflow-map')).body;
    const routes = workflow.review_routes as { route: string; channel: string; channel_registered: boolean }[];
    expect(routes.length).toBeGreaterThan(0);
    for (const r of routes) expect(r.channel_registered, r.route).toBe(channels.includes(r.channel));
    expect(workflow.steps.find((s: any) => s.path === '/v1/gate').served).toBe(true);
  });
});
