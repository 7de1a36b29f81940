/**
 * The upgrade to production on the local payment provider (interface-spec States "Sandbox
 * tenant → production", Account table): sandbox → checkout → complete → svc_live_ key; a
 * production seal verifies with key_status active and is metered in credits; the sandbox
 * history still verifies; the old key answers 401; only the tenant's own checkout completes.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { localCheckoutToken } from '../../companion/account/billing/local-provider.ts';
import { createTestContext, freshTenantContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { signIn } from './account-helpers.ts';
import { recordBody } from './pack-fixtures.ts';

const SECRET_ENV = 'SVC_TEST_BILLING_OPERATOR_SECRET';
const OPERATOR_SECRET = 'operator-secret-for-local-checkouts-0123456789';
const ENV = { SVC_BILLING_LOCAL_SECRET_REF: `env://${SECRET_ENV}` };

let ctx: TestContext;
let key: string;
let tenantId: string;
beforeEach(async () => {
  process.env[SECRET_ENV] = OPERATOR_SECRET;
  ({ ctx, key, tenantId } = await freshTenantContext({ env: ENV }));
});
afterEach(async () => {
  delete process.env[SECRET_ENV];
  await ctx.close();
});

describe('the upgrade on the local provider', () => {
  it('turns the sandbox into a production tenant with a svc_live_ key; history is kept and still verifies', async () => {
    const sandboxSeal = await ctx.request('/v1/record', { json: recordBody(), key });
    expect(sandboxSeal.status).toBe(201);

    const s = await signIn(ctx, key);
    const checkout = await s.request('/account/billing/upgrade-checkout', { method: 'POST' });
    expect(checkout.status).toBe(201);
    expect(checkout.body).toEqual({
      checkout_id: expect.stringMatching(/^chk_/),
      provider: 'local',
      checkout_url: null,
      completion_token: localCheckoutToken(OPERATOR_SECRET, checkout.body.checkout_id, tenantId),
      complete: { href: '/account/billing/complete-upgrade', method: 'POST' },
    });

    const done = await s.request('/account/billing/complete-upgrade', { json: { checkout_id: checkout.body.checkout_id, completion_token: checkout.body.completion_token } });
    expect(done.status, done.text).toBe(200);
    expect(done.headers.get('cache-control')).toBe('no-store');
    expect(done.body).toMatchObject({ tenant_id: tenantId, tenant_kind: 'production', key_prefix: 'svc_live_' });
    const live = done.body.api_key as string;
    expect(live).toMatch(/^svc_live_[0-9A-Za-z]{43}$/);

    // The old sandbox key stops working; the tenant id never changes.
    expect((await ctx.request('/tenant/usage', { key })).status).toBe(401);
    const keys = await ctx.request('/tenant/api-keys', { key: live });
    expect(keys.body).toMatchObject({ tenant_id: tenantId, tenant_kind: 'production' });
    expect(keys.body.keys.map((k: { prefix: string; status: string }) => [k.prefix, k.status])).toEqual([
      ['svc_test_', 'revoked'],
      ['svc_live_', 'active'],
    ]);

    // Production signer from now on, metered in credits.
    const before = (await ctx.request('/tenant/usage', { key: live })).body;
    const prodSeal = await ctx.request('/v1/record', { json: recordBody(), key: live });
    expect(prodSeal.status).toBe(201);
    const verified = await ctx.request('/v1/verify', { json: prodSeal.body.verify_request });
    expect(verified.body).toMatchObject({ verified: true, key_status: 'active' });
    const after = (await ctx.request('/tenant/usage', { key: live })).body;
    expect(after).toMatchObject({ tenant_kind: 'production', cap: null });
    expect(after.credits_used).toBeGreaterThan(before.credits_used);
    expect(after.actions_used).toBe(before.actions_used + 1);

    // The sandbox history is preserved and still verifies as sandbox evidence.
    const old = await ctx.request('/v1/verify', { json: sandboxSeal.body.verify_request });
    expect(old.body).toMatchObject({ verified: true, key_status: 'sandbox' });

    // The session lives on and now sees a production tenant; the same checkout cannot run again.
    expect((await s.request('/account/me')).body).toMatchObject({ tenant_kind: 'production', billing: { provider: 'local', has_customer: false } });
    const again = await s.request('/account/billing/complete-upgrade', { json: { checkout_id: checkout.body.checkout_id, completion_token: checkout.body.completion_token } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('checkout_completed');
    expect((await s.request('/account/billing/upgrade-checkout', { method: 'POST' })).body.code).toBe('already_production');
  });

  it("refuses a forged token, and another tenant's checkout cannot complete this one", async () => {
    const s = await signIn(ctx, key);
    const mine = (await s.request('/account/billing/upgrade-checkout', { method: 'POST' })).body;

    const forged = await s.request('/account/billing/complete-upgrade', { json: { checkout_id: mine.checkout_id, completion_token: 'A'.repeat(43) } });
    expect(forged.status).toBe(409);
    expect(forged.body.code).toBe('checkout_not_verified');
    const missing = await s.request('/account/billing/complete-upgrade', { json: { checkout_id: mine.checkout_id } });
    expect(missing.body.code).toBe('checkout_not_verified');

    const other = await ctx.signup();
    const o = await signIn(ctx, other.apiKey);
    const theirs = (await o.request('/account/billing/upgrade-checkout', { method: 'POST' })).body;
    // Their checkout with their valid token: not found for this tenant.
    const cross = await s.request('/account/billing/complete-upgrade', { json: { checkout_id: theirs.checkout_id, completion_token: theirs.completion_token } });
    expect(cross.status).toBe(404);
    // Our checkout with their token: the token binds their tenant, so it does not verify.
    const swapped = await s.request('/account/billing/complete-upgrade', { json: { checkout_id: mine.checkout_id, completion_token: theirs.completion_token } });
    expect(swapped.body.code).toBe('checkout_not_verified');
    expect((await ctx.store.tenants.getTenant(tenantId))!.kind).toBe('sandbox');
    expect((await ctx.store.tenants.getTenant(other.tenantId))!.kind).toBe('sandbox');
  });

  it('the billing portal gives reasons, never a 500 (a local checkout makes no payment-provider customer)', async () => {
    const s = await signIn(ctx, key);
    expect((await s.request('/account/billing-portal', { method: 'POST' })).body).toEqual({ available: false, url: null, reason: 'sandbox_tenant' });
    const chk = (await s.request('/account/billing/upgrade-checkout', { method: 'POST' })).body;
    await s.request('/account/billing/complete-upgrade', { json: { checkout_id: chk.checkout_id, completion_token: chk.completion_token } });
    expect((await s.request('/account/billing-portal', { method: 'POST' })).body).toEqual({ available: false, url: null, reason: 'no_customer' });
  });

  it('the 402 at the end of the sandbox allowance points at the real upgrade route', async () => {
    await ctx.sql('INSERT INTO usage_counters (tenant_id, actions_used, credits_used, updated_at) VALUES (?, 100, 0, ?) ON CONFLICT (tenant_id) DO UPDATE SET actions_used = 100', tenantId, '2025-01-01T00:00:00.000Z');
    const refused = await ctx.request('/v1/record', { json: recordBody(), key });
    expect(refused.status).toBe(402);
    expect(refused.body.sign_in).toEqual({ href: '/account/session', method: 'POST' });
    const s = await signIn(ctx, key);
    const pointed = await s.request(refused.body.upgrade.href, { method: refused.body.upgrade.method });
    expect(pointed.status).toBe(201);
  });
});

describe('an unconfigured local provider', () => {
  it('answers upgrade-checkout 503 with a reason', async () => {
    const bare = await createTestContext();
    try {
      const { apiKey } = await bare.signup();
      const s = await signIn(bare, apiKey);
      const res = await s.request('/account/billing/upgrade-checkout', { method: 'POST' });
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: 'billing_unavailable', reason: 'provider_unconfigured' });
    } finally {
      await bare.close();
    }
  });
});
