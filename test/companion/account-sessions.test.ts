/**
 * Account sessions, people and capabilities (interface-spec Authentication 2, Account table;
 * DESIGN.md §6): the svc_session cookie, expiry, logout, CSRF, each capability's 403, PATCH
 * /account/me and the statutory-metadata retention setting taking effect in what is stored.
 */
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshTenantContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { signIn } from './account-helpers.ts';
import { recordBody } from './pack-fixtures.ts';

let ctx: TestContext;
let key: string;
let tenantId: string;
beforeEach(async () => ({ ctx, key, tenantId } = await freshTenantContext()));
afterEach(() => ctx.close());

const ALL = [
  'billing:manage',
  'account:rename',
  'account:retention',
  'people:manage',
  'reviews:decide',
  'policy:manage',
  'integrations:manage',
  'exports:read',
  'gate:submit',
  'records:write',
  'records:read',
  'reviews:delegate',
];

describe('POST /account/session', () => {
  it('sets an HttpOnly, SameSite=Strict cookie (not Secure on loopback http) and answers the person and capabilities', async () => {
    const s = await signIn(ctx, key);
    const setCookie = s.res.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^svc_session=[A-Za-z0-9_-]{43}; /);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).toContain('Path=/');
    expect(setCookie).toContain('Max-Age=28800');
    expect(setCookie).not.toContain('Secure');
    expect(s.res.headers.get('cache-control')).toBe('no-store');
    expect(s.res.body).toEqual({
      person: { id: expect.stringMatching(/^per_/), role: 'owner', capabilities: ALL, created_at: '2025-01-01T00:00:00.000Z' },
      principal: { id: s.res.body.person.id, kind: 'person', display_name: s.res.body.person.id },
      tenant_id: tenantId,
      tenant_kind: 'sandbox',
      capabilities: ALL,
      expires_at: '2025-01-01T08:00:00.000Z',
      csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
  });

  it('marks the cookie Secure when the service listens beyond loopback', async () => {
    const other = await freshTenantContext({ env: { HOST: '0.0.0.0' } });
    try {
      const s = await signIn(other.ctx, other.key);
      expect(s.res.headers.get('set-cookie')).toContain('Secure');
    } finally {
      await other.ctx.close();
    }
  });

  it('stores only digests of the session and CSRF tokens', async () => {
    const s = await signIn(ctx, key);
    const token = s.cookie.slice('svc_session='.length);
    for (const { name: file, bytes } of await ctx.storedBytes()) {
      expect(bytes.includes(Buffer.from(token)), file).toBe(false);
      expect(bytes.includes(Buffer.from(s.csrf)), file).toBe(false);
    }
  });

  it('needs an API key', async () => {
    expect((await ctx.request('/account/session', { method: 'POST' })).status).toBe(401);
  });
});

describe('session lifecycle', () => {
  it('expires after SVC_SESSION_TTL_SECONDS by the service clock', async () => {
    const s = await signIn(ctx, key);
    ctx.clock.advance(8 * 3600_000 - 1);
    expect((await s.request('/account/me')).status).toBe(200);
    ctx.clock.advance(1);
    const res = await s.request('/account/me');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthorized');
  });

  it('honours a configured lifetime', async () => {
    const other = await freshTenantContext({ env: { SVC_SESSION_TTL_SECONDS: '60' } });
    try {
      const s = await signIn(other.ctx, other.key);
      expect(s.res.body.expires_at).toBe('2025-01-01T00:01:00.000Z');
      other.ctx.clock.advance(60_000);
      expect((await s.request('/account/me')).status).toBe(401);
    } finally {
      await other.ctx.close();
    }
  });

  it('logout clears the cookie and the session is refused afterwards, while another session lives on', async () => {
    const s = await signIn(ctx, key);
    const other = await signIn(ctx, key);
    const out = await s.request('/account/logout', { method: 'POST' });
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(/^svc_session=; Max-Age=0;/);
    expect((await s.request('/account/me')).status).toBe(401);
    expect((await s.request('/account/logout', { method: 'POST' })).status).toBe(401);
    expect((await other.request('/account/me')).status).toBe(200);
  });

  it('refuses an unknown cookie and no cookie alike', async () => {
    expect((await ctx.request('/account/me')).status).toBe(401);
    expect((await ctx.request('/account/me', { headers: { cookie: 'svc_session=forged' } })).status).toBe(401);
  });
});

describe('CSRF', () => {
  it('refuses a cookie-authenticated write without the token, with a wrong one, or with another session\'s', async () => {
    const s = await signIn(ctx, key);
    const other = await signIn(ctx, key);
    const patch = (headers: Record<string, string>) => ctx.request('/account/me', { method: 'PATCH', json: { display_name: 'Acme' }, headers: { cookie: s.cookie, ...headers } });
    for (const headers of [{}, { 'x-csrf-token': 'x'.repeat(43) }, { 'x-csrf-token': other.csrf }] as Record<string, string>[]) {
      const res = await patch(headers);
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('csrf_token_invalid');
    }
    expect((await ctx.request('/account/logout', { method: 'POST', headers: { cookie: s.cookie } })).status).toBe(403);
    expect((await patch({ 'x-csrf-token': s.csrf })).status).toBe(200);
  });
});

describe('GET and PATCH /account/me', () => {
  it('shows the account with the same usage ledger as GET /tenant/usage', async () => {
    await ctx.request('/v1/record', { json: recordBody(), key });
    const s = await signIn(ctx, key);
    const me = await s.request('/account/me');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ tenant_id: tenantId, tenant_kind: 'sandbox', display_name: 'Sandbox tenant', retain_statutory_metadata: false, billing: { provider: null, has_customer: false } });
    const usage = await ctx.request('/tenant/usage', { key });
    expect(me.body.usage).toEqual(usage.body);
    expect(me.body.usage.actions_used).toBe(1);
  });

  it('renames and sets retention; neither field is a no-op read', async () => {
    const s = await signIn(ctx, key);
    ctx.clock.advance(1000);
    const res = await s.request('/account/me', { method: 'PATCH', json: { display_name: '  Acme Corp ', retain_statutory_metadata: true } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ display_name: 'Acme Corp', retain_statutory_metadata: true, updated_at: '2025-01-01T00:00:01.000Z' });
    ctx.clock.advance(1000);
    const noop = await s.request('/account/me', { method: 'PATCH', json: {} });
    expect(noop.status).toBe(200);
    expect(noop.body).toEqual(res.body);
  });

  it('answers 422 listing every invalid field', async () => {
    const s = await signIn(ctx, key);
    const res = await s.request('/account/me', { method: 'PATCH', json: { display_name: '', retain_statutory_metadata: 'yes', colour: 'red' } });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['/colour', '/display_name', '/retain_statutory_metadata']);
  });
});

describe('people and capabilities', () => {
  async function addPerson(capabilities: string[]) {
    const owner = await signIn(ctx, key);
    const res = await owner.request('/account/people', { json: { email: `p${capabilities.length}.${Math.random()}@example.com`, capabilities } });
    expect(res.status, res.text).toBe(201);
    return { res, session: await signIn(ctx, res.body.api_key) };
  }

  it('the owner adds a person with chosen capabilities and a key of the tenant kind', async () => {
    const { res, session } = await addPerson(['account:rename']);
    // gate:submit, records:write and records:read come with every person (core/auth.ts DEFAULT_CAPABILITIES).
    const held = ['account:rename', 'gate:submit', 'records:write', 'records:read'];
    expect(res.body).toMatchObject({ person: { role: 'member', capabilities: held, status: 'active' }, key_prefix: 'svc_test_', receipt: { action_key: expect.stringMatching(/^account:admin:/) } });
    expect(session.res.body).toMatchObject({ tenant_id: tenantId, capabilities: held, person: { id: res.body.person.id } });
  });

  it('adding the same email twice answers 409', async () => {
    const owner = await signIn(ctx, key);
    const json = { email: 'twice@example.com', capabilities: [] };
    expect((await owner.request('/account/people', { json })).status).toBe(201);
    const again = await owner.request('/account/people', { json: { ...json, email: ' TWICE@example.com' } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('person_exists');
  });

  it('each capability missing answers 403 naming it', async () => {
    const { session } = await addPerson([]);
    const cases: [string, Parameters<typeof session.request>[1], string][] = [
      ['/account/me', { method: 'PATCH', json: { display_name: 'x' } }, 'account:rename'],
      ['/account/me', { method: 'PATCH', json: { retain_statutory_metadata: true } }, 'account:retention'],
      ['/account/people', { json: { email: 'q@example.com', capabilities: [] } }, 'people:manage'],
      ['/account/billing/upgrade-checkout', { method: 'POST' }, 'billing:manage'],
      ['/account/billing/complete-upgrade', { json: { checkout_id: 'chk_x' } }, 'billing:manage'],
      ['/account/billing-portal', { method: 'POST' }, 'billing:manage'],
    ];
    for (const [path, options, capability] of cases) {
      const res = await session.request(path, options);
      expect(res.status, `${path} ${res.text}`).toBe(403);
      expect(res.body).toMatchObject({ code: 'capability_missing', capability });
    }
    // A read needs no capability; a no-op PATCH neither.
    expect((await session.request('/account/me')).status).toBe(200);
    expect((await session.request('/account/me', { method: 'PATCH', json: {} })).status).toBe(200);
  });

  it('one capability allows its field only', async () => {
    const { session } = await addPerson(['account:retention']);
    expect((await session.request('/account/me', { method: 'PATCH', json: { retain_statutory_metadata: true } })).status).toBe(200);
    const both = await session.request('/account/me', { method: 'PATCH', json: { retain_statutory_metadata: false, display_name: 'x' } });
    expect(both.body).toMatchObject({ code: 'capability_missing', capability: 'account:rename' });
    // Nothing of the refused request was written.
    expect(await ctx.store.tenants.getTenant(tenantId)).toMatchObject({ retainStatutoryMetadata: true, displayName: 'Sandbox tenant' });
  });

  it("a key from before the people model signs in with person null as the tenant's Tenant keys service account; its upgrade answers 409 with a reason", async () => {
    const legacy = ctx.productionTenant(); // written without a person, as rows before migration 0012 are
    const s = await signIn(ctx, legacy.apiKey);
    expect(s.res.body).toMatchObject({ person: null, principal: { kind: 'service_account', display_name: 'Tenant keys' }, tenant_kind: 'production' });
    expect(s.res.body.capabilities).not.toContain('billing:manage');
    const res = await s.request('/account/billing/upgrade-checkout', { method: 'POST' });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'session_predates_people', reason: 'session_predates_people' });
  });
});

describe('statutory metadata retention takes effect in what is stored', () => {
  const VALUES = { model: 'model-WOMBAT-417', model_version: 'v-QUOKKA-58' };
  const stored = async (value: string) => (await ctx.storedBytes()).some(({ bytes }) => bytes.includes(Buffer.from(value)));

  it('keeps the values only while retention is on; otherwise only their digest (the default)', async () => {
    const s = await signIn(ctx, key);
    const off = await ctx.request('/v1/record', { json: recordBody({ metadata: VALUES }), key });
    expect(off.body.payload_retention.metadata_values_retained).toBe(false);
    expect(off.body.evidence_packet.seal.attestation.context.metadata_sha256).toMatch(/^[0-9a-f]{64}$/);
    // Each value's own digest is sealed, so one value can be shown to match without the others.
    const jcsDigest = (v: string) => createHash('sha256').update(JSON.stringify(v)).digest('hex');
    expect(off.body.evidence_packet.seal.attestation.context.metadata_value_sha256).toEqual({ model: jcsDigest(VALUES.model), model_version: jcsDigest(VALUES.model_version) });
    expect((await stored(VALUES.model)) || (await stored(VALUES.model_version))).toBe(false);

    await s.request('/account/me', { method: 'PATCH', json: { retain_statutory_metadata: true } });
    const on = await ctx.request('/v1/record', { json: recordBody({ metadata: VALUES }), key });
    expect(on.body.payload_retention.metadata_values_retained).toBe(true);
    expect((await stored(VALUES.model)) && (await stored(VALUES.model_version))).toBe(true);

    await s.request('/account/me', { method: 'PATCH', json: { retain_statutory_metadata: false } });
    const later = { model: 'model-NUMBAT-9', model_version: 'v-DINGO-3' };
    const off2 = await ctx.request('/v1/record', { json: recordBody({ metadata: later }), key });
    expect(off2.body.payload_retention.metadata_values_retained).toBe(false);
    expect((await stored(later.model)) || (await stored(later.model_version))).toBe(false);
  });
});
