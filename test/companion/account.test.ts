/** Signup, key listing and API key authentication (interface-spec Authentication 1 and 6). */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';

let ctx: TestContext;
beforeEach(async () => {
  ctx = await createTestContext();
});
afterEach(async () => {
  await ctx.close();
});

const KEY_PATTERN = /^svc_test_[0-9A-Za-z]{43}$/;

describe('POST /signup/checkout', () => {
  it('creates a sandbox tenant and shows its key once', async () => {
    const res = await ctx.request('/signup/checkout', { json: { email: 'ada@example.com' } });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toMatchObject({ tenant_kind: 'sandbox', key_prefix: 'svc_test_', sandbox_allowance: 100 });
    expect(res.body.tenant_id).toMatch(/^ten_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(res.body.api_key).toMatch(KEY_PATTERN);
    expect(res.body.key_last_four).toBe(res.body.api_key.slice(-4));
  });

  it('allows one sandbox per email: a repeat (after normalising) answers 409 with an upgrade pointer', async () => {
    await ctx.signup('ada@example.com');
    const res = await ctx.request('/signup/checkout', { json: { email: '  ADA@Example.COM ' } });
    expect(res.status).toBe(409);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.body.code).toBe('sandbox_exists');
    expect(res.body.upgrade).toEqual({ href: '/account/billing/upgrade-checkout', method: 'POST' });
    expect(res.text).not.toMatch(/svc_test_/);
  });

  it('rejects an invalid email with 422', async () => {
    const res = await ctx.request('/signup/checkout', { json: { email: 'not-an-email' } });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ in: 'body', path: '/email' })]);
  });

  it('never stores the key or the email: the raw values appear nowhere in the database', async () => {
    const email = 'grace.hopper@example.com';
    const { apiKey, tenantId } = await ctx.signup(email);
    const stored = await ctx.storedBytes();
    // What is stored is searched: the new tenant is found there.
    expect(stored.some(({ bytes }) => bytes.includes(Buffer.from(tenantId)))).toBe(true);
    for (const { name, bytes } of stored) {
      expect(bytes.includes(Buffer.from(apiKey)), name).toBe(false);
      expect(bytes.includes(Buffer.from(apiKey.slice('svc_test_'.length))), name).toBe(false);
      expect(bytes.includes(Buffer.from(email)), name).toBe(false);
    }
    const [row] = await ctx.sql('SELECT * FROM api_keys');
    expect(Object.keys(row!).sort()).toEqual([
      'capabilities',
      'created_at',
      'expires_at',
      'id',
      'key_sha256',
      'label',
      'last_four',
      'last_used_at',
      'person_id',
      'prefix',
      'revoked_at',
      'service_account_id',
      'status',
      'tenant_id',
    ]);
  });
});

describe('GET /tenant/api-keys', () => {
  it('lists the tenant keys with prefix and last four only, via either header', async () => {
    const { apiKey, tenantId } = await ctx.signup();
    const viaServiceKey = await ctx.request('/tenant/api-keys', { key: apiKey });
    const viaBearer = await ctx.request('/tenant/api-keys', { headers: { authorization: `Bearer ${apiKey}` } });
    const viaLowercaseScheme = await ctx.request('/tenant/api-keys', { headers: { authorization: `bearer ${apiKey}` } });
    for (const res of [viaServiceKey, viaBearer, viaLowercaseScheme]) {
      expect(res.status).toBe(200);
      expect(res.body.tenant_id).toBe(tenantId);
      expect(res.body.keys).toHaveLength(1);
      expect(res.body.keys[0]).toEqual({
        id: expect.stringMatching(/^key_/),
        prefix: 'svc_test_',
        last_four: apiKey.slice(-4),
        status: 'active',
        created_at: '2025-01-01T00:00:00.000Z',
        revoked_at: null,
      });
      expect(res.text).not.toContain(apiKey);
      expect(res.text).not.toMatch(/hash|sha256|[0-9a-f]{64}/i);
    }
  });

  it('shows each tenant only its own keys: the tenant comes from the credential', async () => {
    const a = await ctx.signup();
    const b = await ctx.signup();
    const res = await ctx.request(`/tenant/api-keys`, { key: a.apiKey, headers: { 'x-tenant-id': b.tenantId } });
    expect(res.body.tenant_id).toBe(a.tenantId);
    expect(res.body.keys.map((k: { last_four: string }) => k.last_four)).toEqual([a.apiKey.slice(-4)]);
  });
});

describe('API key authentication', () => {
  it('answers 401 with a Bearer challenge when no credential is sent', async () => {
    const res = await ctx.request('/tenant/api-keys');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthorized');
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="svc"');
  });

  it('answers the same 401 for malformed, unknown and revoked keys', async () => {
    const { apiKey, tenantId } = await ctx.signup();
    const unknown = `svc_test_${'A'.repeat(43)}`;
    // Used first, so the store has resolved (and cached) it: revocation must still take effect at once.
    expect((await ctx.request('/tenant/api-keys', { key: apiKey })).status).toBe(200);
    const id = (await ctx.store.tenants.listApiKeys(tenantId))[0]!.id;
    expect(await ctx.store.tenants.revokeApiKey(tenantId, id, '2025-01-02T00:00:00.000Z')).toBe(true);
    expect(await ctx.store.tenants.revokeApiKey(tenantId, id, '2025-01-02T00:00:00.000Z')).toBe(false);
    const bodies: string[] = [];
    for (const key of ['nonsense', unknown, apiKey, `${apiKey}x`]) {
      const res = await ctx.request('/tenant/api-keys', { key });
      expect(res.status, key).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="svc", error="invalid_token"');
      const { request_id: _ignored, ...rest } = res.body;
      bodies.push(JSON.stringify(rest));
    }
    expect(new Set(bodies).size).toBe(1);
  });

  it('refuses two different credentials in one request', async () => {
    const a = await ctx.signup();
    const b = await ctx.signup();
    const res = await ctx.request('/tenant/api-keys', { key: a.apiKey, headers: { authorization: `Bearer ${b.apiKey}` } });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthorized');
  });

  it('refuses a sandbox key once its tenant is production (keys never cross tenant kinds)', async () => {
    const { apiKey, tenantId } = await ctx.signup();
    await ctx.sql("UPDATE tenants SET kind = 'production' WHERE id = ?", tenantId);
    const res = await ctx.request('/tenant/api-keys', { key: apiKey });
    expect(res.status).toBe(401);
  });

  it('checks authentication before validating input', async () => {
    const res = await ctx.request('/tenant/api-keys?unknown=1');
    expect(res.status).toBe(401);
  });
});
