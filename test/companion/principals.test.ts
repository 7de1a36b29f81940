/**
 * Principals and capabilities for every credential (companion/account/principals.ts,
 * core/auth.ts, account/people.ts): from the OpenAPI description, every operation that names an
 * x-required-capability refuses a key of a person without it exactly as that person's session
 * (403 capability_missing naming it) and lets a key of a person holding it through; people's
 * deactivation stops their keys and sessions at once, in another process too; keys written
 * without a principal act for the tenant's "Tenant keys" service account.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CAPABILITIES } from '../../companion/core/auth.ts';
import { createTestContext, freshTenantContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { signIn } from './account-helpers.ts';
import type { Session } from './account-helpers.ts';
import { gateBody } from './pack-fixtures.ts';

let ctx: TestContext;
let key: string;
let tenantId: string;
beforeEach(async () => ({ ctx, key, tenantId } = await freshTenantContext()));
afterEach(() => ctx.close());

let people = 0;
/** A member holding exactly `capabilities` (the defaults are set back to exactly these), with a key and a session. */
async function member(owner: Session, capabilities: readonly string[]): Promise<{ id: string; key: string; session: Session }> {
  const added = await owner.request('/account/people', { json: { email: `member${++people}@example.com`, capabilities: [] } });
  expect(added.status, added.text).toBe(201);
  const id = added.body.person.id as string;
  const patched = await owner.request(`/account/people/${id}`, { method: 'PATCH', json: { capabilities } });
  expect(patched.status, patched.text).toBe(200);
  expect(patched.body.person.capabilities).toEqual(CAPABILITIES.filter((c) => capabilities.includes(c)));
  return { id, key: added.body.api_key as string, session: await signIn(ctx, added.body.api_key) };
}

interface Operation {
  method: string;
  path: string;
  capability: string | undefined;
  takesSession: boolean;
  /** Whether a tenant credential (a key or a session) is what authenticates it. */
  takesCredential: boolean;
  url: string;
  json: boolean;
}

const FILL: Record<string, string> = {
  vertical: 'law',
  action_key: 'law:proposed-action:01JD3Q8Z5V7N4M2K6H8G0F1E2D',
  channel: 'webhook',
  target: 'ops',
  dispatch_key: 'dsp_01JD3Q8Z5V7N4M2K6H8G0F1E2D',
  delivery_id: 'dlv_01JD3Q8Z5V7N4M2K6H8G0F1E2D',
  key_id: 'key_01JD3Q8Z5V7N4M2K6H8G0F1E2D',
  person_id: 'per_01JD3Q8Z5V7N4M2K6H8G0F1E2D',
  service_account_id: 'sva_01JD3Q8Z5V7N4M2K6H8G0F1E2D',
  run_key: 'vrun_01JD3Q8Z5V7N4M2K6H8G0F1E2D',
  schema_profile_key: 'nope',
};

function operationsOf(doc: any): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const op = item[method];
      if (!op) continue;
      const security: Record<string, string[]>[] = op.security ?? [];
      const filled = path.replace(/\{(\w+)\}/g, (_m, name: string) => FILL[name] ?? 'x');
      const required = (op.parameters ?? []).filter((p: any) => p.in === 'query' && p.required).map((p: any) => `${p.name}=${p.name === 'policy_pack' ? 'law' : 'x'}`);
      out.push({
        method: method.toUpperCase(),
        path,
        capability: op['x-required-capability'],
        takesSession: security.some((s) => 'ServiceAccountSession' in s),
        takesCredential: security.some((s) => 'BearerAuth' in s || 'ServiceKey' in s || 'ServiceAccountSession' in s) && !security.some((s) => Object.keys(s).length === 0),
        url: required.length > 0 ? `${filled}?${required.join('&')}` : filled,
        json: op.requestBody?.content?.['application/json'] !== undefined,
      });
    }
  }
  return out;
}

/**
 * Operations that act for a credential without a capability of their own: exchanging a key for
 * a session, and the session-only account routes, which check their capability per field or
 * per action inside (account-sessions.test.ts).
 */
const NO_CAPABILITY = new Set([
  'POST /account/session',
  'POST /account/logout',
  'GET /account/me',
  'PATCH /account/me',
  'POST /account/billing/upgrade-checkout',
  'POST /account/billing/complete-upgrade',
  'POST /account/billing-portal',
  // A person's own device sign-ins (RFC 8628): the token approved is narrowed to what the
  // person holds, so approving, listing and revoking need nothing beyond being that person.
  'GET /account/device-authorizations/{user_code}',
  'POST /account/device-authorizations/{user_code}/approve',
  'POST /account/device-authorizations/{user_code}/deny',
  'GET /account/device-tokens',
  'POST /account/device-tokens/{key_id}/revoke',
]);

describe('capabilities from the OpenAPI description', () => {
  it('every operation that takes a tenant key names the capability it requires', async () => {
    const ops = operationsOf((await ctx.request('/openapi.json')).body);
    const missing = ops.filter((o) => o.takesCredential && o.capability === undefined && !NO_CAPABILITY.has(`${o.method} ${o.path}`));
    expect(missing.map((o) => `${o.method} ${o.path}`)).toEqual([]);
    for (const o of ops) if (o.capability !== undefined) expect(CAPABILITIES, `${o.method} ${o.path}`).toContain(o.capability);
    // The gate and the record endpoints, as interface-spec Authentication 1 names them.
    const named = (m: string, p: string) => ops.find((o) => o.method === m && o.path === p)?.capability;
    expect(named('POST', '/v1/gate')).toBe('gate:submit');
    const proposed = ops.filter((o) => o.method === 'POST' && o.path.endsWith('/proposed-action'));
    expect(proposed.length).toBeGreaterThan(0);
    for (const o of proposed) expect(o.capability, o.path).toBe('gate:submit');
    expect(named('POST', '/v1/record')).toBe('records:write');
    expect(named('POST', '/v1/record/batch')).toBe('records:write');
    expect(named('POST', '/tenant/integrations/webhook/{target}/replay')).toBe('integrations:manage');
    expect(named('POST', '/routing/outbox/process')).toBe('integrations:manage');
  });

  it('refuses a key of a person without the capability exactly as their session, and lets a key with it through', async () => {
    const owner = await signIn(ctx, key);
    const ops = operationsOf((await ctx.request('/openapi.json')).body).filter((o) => o.capability !== undefined);
    const needed = [...new Set(ops.map((o) => o.capability!))];
    expect(needed.length).toBeGreaterThan(5);
    const without = new Map<string, Awaited<ReturnType<typeof member>>>();
    const holding = new Map<string, Awaited<ReturnType<typeof member>>>();
    for (const cap of needed) {
      without.set(cap, await member(owner, CAPABILITIES.filter((c) => c !== cap)));
      holding.set(cap, await member(owner, [cap]));
    }
    const body = (o: Operation) => (o.json ? { json: {} } : {});
    for (const o of ops) {
      const label = `${o.method} ${o.path}`;
      const cap = o.capability!;
      const viaKey = await ctx.request(o.url, { method: o.method, key: without.get(cap)!.key, ...body(o) });
      expect(viaKey.status, `${label} key without ${cap}: ${viaKey.text}`).toBe(403);
      expect(viaKey.body, label).toMatchObject({ code: 'capability_missing', capability: cap });
      if (o.takesSession) {
        const viaSession = await without.get(cap)!.session.request(o.url, { method: o.method, ...body(o) });
        expect(viaSession.status, `${label} session`).toBe(403);
        expect({ code: viaSession.body.code, capability: viaSession.body.capability, detail: viaSession.body.detail }).toEqual({
          code: viaKey.body.code,
          capability: viaKey.body.capability,
          detail: viaKey.body.detail,
        });
      }
      const allowed = await ctx.request(o.url, { method: o.method, key: holding.get(cap)!.key, ...body(o) });
      expect([401, 403], `${label} key with ${cap}: ${allowed.status} ${allowed.text}`).not.toContain(allowed.status);
      expect(allowed.status, label).toBeLessThan(500);
    }
  });
});

describe('a key narrower than its principal', () => {
  it('does at most what its own subset allows, and a session opened with it no more', async () => {
    const owner = await signIn(ctx, key);
    const minted = await owner.request('/account/api-keys', { json: { label: 'read only', capabilities: ['records:read'] } });
    expect(minted.status, minted.text).toBe(201);
    expect(minted.body.key).toMatchObject({ label: 'read only', capabilities: ['records:read'], capability_subset: ['records:read'], status: 'active' });
    const narrow = minted.body.api_key as string;
    expect((await ctx.request('/active-manifest', { key: narrow })).status).toBe(200);
    const gate = await ctx.request('/v1/gate', { json: gateBody('law'), key: narrow });
    expect(gate.status).toBe(403);
    expect(gate.body).toMatchObject({ code: 'capability_missing', capability: 'gate:submit' });
    const s = await signIn(ctx, narrow);
    expect(s.res.body.capabilities).toEqual(['records:read']);
    expect((await s.request('/tenant/policy?policy_pack=law', { method: 'PUT', json: { version: 'v2' } })).body).toMatchObject({ capability: 'policy:manage' });
  });
});

describe('deactivation', () => {
  it("stops the person's key and session on the next request, in another process too, and reactivation restores them", async () => {
    const other = await createTestContext({ dataDir: ctx.dataDir });
    try {
      const owner = await signIn(ctx, key);
      const m = await member(owner, ['records:read', 'gate:submit']);
      // The other process resolves (and caches) the key first.
      expect((await other.request('/active-manifest', { key: m.key })).status).toBe(200);
      expect((await m.session.request('/active-manifest')).status).toBe(200);
      const off = await owner.request(`/account/people/${m.id}`, { method: 'PATCH', json: { status: 'deactivated' } });
      expect(off.status, off.text).toBe(200);
      expect(off.body.person.status).toBe('deactivated');
      expect((await other.request('/active-manifest', { key: m.key })).status).toBe(401);
      expect((await ctx.request('/v1/gate', { json: gateBody('law'), key: m.key })).status).toBe(401);
      expect((await m.session.request('/active-manifest')).status).toBe(401);
      expect((await ctx.request('/account/session', { method: 'POST', key: m.key })).status).toBe(401);
      const on = await owner.request(`/account/people/${m.id}`, { method: 'PATCH', json: { status: 'active' } });
      expect(on.status).toBe(200);
      expect((await other.request('/active-manifest', { key: m.key })).status).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('stops a service account’s keys the same way', async () => {
    const owner = await signIn(ctx, key);
    const sa = await owner.request('/account/service-accounts', { json: { name: 'CI pipeline' } });
    expect(sa.status, sa.text).toBe(201);
    expect(sa.body.service_account).toMatchObject({ kind: 'service_account', name: 'CI pipeline', status: 'active', capabilities: ['gate:submit', 'records:write', 'records:read'] });
    const saId = sa.body.service_account.id as string;
    const minted = await owner.request('/account/api-keys', { json: { principal_id: saId, label: 'ci' } });
    expect(minted.status, minted.text).toBe(201);
    expect(minted.body.key.principal).toEqual({ id: saId, kind: 'service_account', display_name: 'CI pipeline' });
    const saKey = minted.body.api_key as string;
    expect((await ctx.request('/v1/gate', { json: gateBody('law'), key: saKey })).status).toBe(201);
    expect((await owner.request(`/account/service-accounts/${saId}`, { method: 'PATCH', json: { status: 'deactivated' } })).status).toBe(200);
    expect((await ctx.request('/v1/gate', { json: gateBody('law'), key: saKey })).status).toBe(401);
  });
});

describe('keys written without a principal', () => {
  it("act for the tenant's Tenant keys service account with today's tenant-API capabilities and none of the account ones", async () => {
    const legacy = ctx.productionTenant();
    expect((await ctx.request('/v1/gate', { json: gateBody('law'), key: legacy.apiKey })).status).toBe(201);
    const s = await signIn(ctx, legacy.apiKey);
    expect(s.res.body.person).toBeNull();
    expect(s.res.body.principal).toEqual({ id: `sva_${legacy.tenantId.slice(4)}`, kind: 'service_account', display_name: 'Tenant keys' });
    expect(s.res.body.capabilities).toEqual(['reviews:decide', 'policy:manage', 'integrations:manage', 'exports:read', 'gate:submit', 'records:write', 'records:read', 'reviews:delegate']);
    const add = await ctx.request('/account/people', { json: { email: 'x@example.com', capabilities: [] }, key: legacy.apiKey });
    expect(add.body).toMatchObject({ code: 'capability_missing', capability: 'people:manage' });
    expect(tenantId).not.toBe(legacy.tenantId);
  });
});
