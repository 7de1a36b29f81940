/**
 * The Stripe payment provider through Stripe's official SDK, against a loopback node:http
 * stand-in speaking Stripe's wire format (form-encoded requests, JSON answers): Checkout
 * Sessions, their retrieval at completion, the customer portal, and the webhook signature
 * checked by the SDK's constructEvent (valid, tampered, stale).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshTenantContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { signIn } from './account-helpers.ts';

const SECRET_KEY = 'sk_test_standin0123456789';
const WEBHOOK_SECRET = 'whsec_standin0123456789abcdef';

interface Seen {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Answers like api.stripe.com for the three calls the provider makes. */
function stripeStandIn(state: { tenantId: string; paid: boolean }) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method!, path: req.url!, headers: req.headers, body });
      const reply = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${seen.length}` });
        res.end(JSON.stringify(json));
      };
      if (req.method === 'POST' && req.url === '/v1/checkout/sessions') {
        return reply(200, { id: 'cs_test_a1', object: 'checkout.session', url: 'https://checkout.stripe.com/c/pay/cs_test_a1', status: 'open', payment_status: 'unpaid', client_reference_id: state.tenantId, customer: null });
      }
      if (req.method === 'GET' && req.url === '/v1/checkout/sessions/cs_test_a1') {
        return reply(200, {
          id: 'cs_test_a1',
          object: 'checkout.session',
          status: state.paid ? 'complete' : 'open',
          payment_status: state.paid ? 'paid' : 'unpaid',
          client_reference_id: state.tenantId,
          customer: state.paid ? 'cus_standin1' : null,
        });
      }
      if (req.method === 'POST' && req.url === '/v1/billing_portal/sessions') {
        return reply(200, { id: 'bps_1', object: 'billing_portal.session', url: 'https://billing.stripe.com/p/session/test_1' });
      }
      reply(404, { error: { type: 'invalid_request_error', message: `no stand-in for ${req.method} ${req.url}` } });
    });
  });
  return { server, seen };
}

let ctx: TestContext;
let key: string;
let tenantId: string;
let stand: ReturnType<typeof stripeStandIn>;
const state = { tenantId: '', paid: false };

beforeEach(async () => {
  process.env.SVC_TEST_STRIPE_KEY = SECRET_KEY;
  process.env.SVC_TEST_STRIPE_WHSEC = WEBHOOK_SECRET;
  stand = stripeStandIn(state);
  await new Promise<void>((resolve) => stand.server.listen(0, '127.0.0.1', resolve));
  const port = (stand.server.address() as AddressInfo).port;
  ({ ctx, key, tenantId } = await freshTenantContext({
    env: {
      SVC_BILLING_PROVIDER: 'stripe',
      SVC_STRIPE_SECRET_KEY_REF: 'env://SVC_TEST_STRIPE_KEY',
      SVC_STRIPE_WEBHOOK_SECRET_REF: 'env://SVC_TEST_STRIPE_WHSEC',
      SVC_STRIPE_PRICE_ID: 'price_prod123',
      SVC_STRIPE_API_BASE: `http://127.0.0.1:${port}`,
      SVC_BILLING_RETURN_URL: 'https://console.example.com/account',
    },
  }));
  state.tenantId = tenantId;
  state.paid = false;
});
afterEach(async () => {
  delete process.env.SVC_TEST_STRIPE_KEY;
  delete process.env.SVC_TEST_STRIPE_WHSEC;
  await ctx.close();
  await new Promise((resolve) => stand.server.close(resolve));
});

/** A Stripe event as its webhook delivers it, signed with the SDK's own test helper. */
function checkoutCompleted(overrides: Record<string, unknown> = {}) {
  return JSON.stringify({
    id: 'evt_1',
    object: 'event',
    type: 'checkout.session.completed',
    data: { object: { id: 'cs_test_a1', object: 'checkout.session', status: 'complete', payment_status: 'paid', client_reference_id: tenantId, customer: 'cus_hook1', ...overrides } },
  });
}
const nowSeconds = () => Math.floor(ctx.clock.now().getTime() / 1000);
const signed = (payload: string, timestamp = nowSeconds()) => Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET, timestamp });
const deliver = (payload: string, signature: string) =>
  ctx.request('/account/billing/stripe-webhook', { raw: payload, headers: { 'content-type': 'application/json', 'stripe-signature': signature } });

describe('the Stripe provider', () => {
  it('creates a Checkout Session with form-encoded parameters, then completes once Stripe says it is paid', async () => {
    const s = await signIn(ctx, key);
    const checkout = await s.request('/account/billing/upgrade-checkout', { method: 'POST' });
    expect(checkout.status, checkout.text).toBe(201);
    expect(checkout.body).toMatchObject({ provider: 'stripe', checkout_url: 'https://checkout.stripe.com/c/pay/cs_test_a1', completion_token: null });

    const create = stand.seen[0]!;
    expect(create.method).toBe('POST');
    expect(create.path).toBe('/v1/checkout/sessions');
    expect(create.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(create.headers.authorization).toBe(`Bearer ${SECRET_KEY}`);
    expect(create.headers['idempotency-key']).toBe(checkout.body.checkout_id);
    const form = new URLSearchParams(create.body);
    expect(Object.fromEntries(form)).toEqual({
      mode: 'subscription',
      'line_items[0][price]': 'price_prod123',
      client_reference_id: tenantId,
      'metadata[checkout_id]': checkout.body.checkout_id,
      'metadata[tenant_id]': tenantId,
      success_url: `https://console.example.com/account?checkout_id=${checkout.body.checkout_id}`,
      cancel_url: 'https://console.example.com/account',
    });

    // Not paid yet: the completion asks Stripe and refuses.
    const early = await s.request('/account/billing/complete-upgrade', { json: { checkout_id: checkout.body.checkout_id } });
    expect(early.status).toBe(409);
    expect(early.body.code).toBe('checkout_not_verified');
    expect(stand.seen[1]).toMatchObject({ method: 'GET', path: '/v1/checkout/sessions/cs_test_a1' });

    state.paid = true;
    const done = await s.request('/account/billing/complete-upgrade', { json: { checkout_id: checkout.body.checkout_id } });
    expect(done.status, done.text).toBe(200);
    expect(done.body.api_key).toMatch(/^svc_live_/);

    // The customer from the paid session opens the portal.
    const portal = await s.request('/account/billing-portal', { method: 'POST' });
    expect(portal.body).toEqual({ available: true, url: 'https://billing.stripe.com/p/session/test_1', reason: null });
    const portalCall = stand.seen.at(-1)!;
    expect(portalCall.path).toBe('/v1/billing_portal/sessions');
    expect(Object.fromEntries(new URLSearchParams(portalCall.body))).toEqual({ customer: 'cus_standin1', return_url: 'https://console.example.com/account' });
  });

  it('a signed checkout.session.completed webhook verifies the checkout without asking Stripe again', async () => {
    const s = await signIn(ctx, key);
    const checkout = (await s.request('/account/billing/upgrade-checkout', { method: 'POST' })).body;
    const payload = checkoutCompleted();
    const res = await deliver(payload, signed(payload));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ received: true });
    const calls = stand.seen.length;
    const done = await s.request('/account/billing/complete-upgrade', { json: { checkout_id: checkout.checkout_id } });
    expect(done.status, done.text).toBe(200);
    expect(stand.seen.length).toBe(calls);
    expect(await ctx.store.account.getTenantBilling(tenantId)).toEqual({ provider: 'stripe', customerRef: 'cus_hook1' });
  });

  it('refuses a tampered or stale webhook with 400 and changes nothing', async () => {
    const s = await signIn(ctx, key);
    const checkout = (await s.request('/account/billing/upgrade-checkout', { method: 'POST' })).body;
    const payload = checkoutCompleted();
    const tampered = await deliver(checkoutCompleted({ customer: 'cus_attacker' }), signed(payload));
    expect(tampered.status).toBe(400);
    expect(tampered.body.code).toBe('webhook_signature_invalid');
    const stale = await deliver(payload, signed(payload, nowSeconds() - 301));
    expect(stale.status).toBe(400);
    const otherSecret = Stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_other', timestamp: nowSeconds() });
    expect((await deliver(payload, otherSecret)).status).toBe(400);
    expect((await ctx.store.account.getCheckout(tenantId, checkout.checkout_id))!.status).toBe('open');
  });

  it('the portal answers sandbox_tenant before the upgrade, and provider_error when Stripe fails, never a 500', async () => {
    const s = await signIn(ctx, key);
    expect((await s.request('/account/billing-portal', { method: 'POST' })).body.reason).toBe('sandbox_tenant');
    // A production tenant whose customer Stripe does not know: the stand-in answers 404.
    await ctx.sql("UPDATE tenants SET kind = 'production' WHERE id = ?", tenantId);
    await ctx.sql("INSERT INTO tenant_billing VALUES (?, 'stripe', 'cus_unknown', 't')", tenantId);
    stand.server.removeAllListeners('request');
    stand.server.on('request', (_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type: 'invalid_request_error', message: 'No such customer' } }));
    });
    const res = await s.request('/account/billing-portal', { method: 'POST' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ available: false, url: null, reason: 'provider_error' });
  });
});
