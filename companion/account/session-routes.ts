/**
 * Account routes behind a session (interface-spec Account table, Authentication 2; DESIGN.md §6):
 * sign in and out, account state, people, and billing with the upgrade to production
 * (States "Sandbox tenant → production").
 */
import { setCookie } from 'hono/cookie';
import { generateApiKey } from '../core/auth.ts';
import { rfc3339 } from '../core/clock.ts';
import { ProblemError } from '../core/errors.ts';
import { SESSION_COOKIE } from '../core/openapi.ts';
import { secureCookie } from '../core/public-origin.ts';
import { createRouter, defineRoute, jsonBody, jsonContent, problemContent, z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import { Usage, usageBody } from '../metering/routes.ts';
import { UNAVAILABLE_REASONS, createPaymentProvider } from './billing/provider.ts';
import type { PaymentProvider, UnavailableReason } from './billing/provider.ts';
import { createStripeProvider } from './billing/stripe-provider.ts';
import { CAPABILITIES, capabilitiesOf, newSecretToken, requireCapability } from './people.ts';
import type { SessionContext } from './people.ts';
import type { Principal } from '../core/auth.ts';
import { principalRoutes } from './principal-routes.ts';
import type { NewApiKeyRow, PersonRecord } from './store.ts';

const CapabilitySchema = z.enum(CAPABILITIES);

const Person = z
  .object({
    id: z.string().openapi({ example: 'per_01JD3Q8Z5V7N4M2K6H8G0F1E2D' }),
    role: z.enum(['owner', 'member']),
    capabilities: z.array(CapabilitySchema),
    created_at: z.string(),
  })
  .openapi('Person');

export const PrincipalRef = z
  .object({
    id: z.string().openapi({ example: 'per_01JD3Q8Z5V7N4M2K6H8G0F1E2D', description: 'per_… (a person) or sva_… (a service account)' }),
    kind: z.enum(['person', 'service_account']),
    display_name: z.string(),
  })
  .openapi('PrincipalRef');

const AccountSession = z
  .object({
    person: Person.nullable().openapi({ description: "null when the key belongs to a service account (keys from before the people model belong to the tenant's Tenant keys service account)" }),
    principal: PrincipalRef,
    tenant_id: z.string(),
    tenant_kind: z.enum(['sandbox', 'production']),
    capabilities: z.array(CapabilitySchema),
    expires_at: z.string(),
    csrf_token: z.string().openapi({ description: 'Shown once: send it as X-CSRF-Token on every cookie-authenticated write' }),
  })
  .openapi('AccountSession');

const Account = z
  .object({
    tenant_id: z.string(),
    tenant_kind: z.enum(['sandbox', 'production']),
    display_name: z.string(),
    retain_statutory_metadata: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
    person: Person.nullable(),
    principal: PrincipalRef,
    capabilities: z.array(CapabilitySchema),
    billing: z.object({ provider: z.enum(['local', 'stripe']).nullable(), has_customer: z.boolean() }),
    usage: Usage,
  })
  .openapi('Account');

const AccountPatch = z
  .object({
    display_name: z.string().trim().min(1).max(200).optional(),
    retain_statutory_metadata: z.boolean().optional(),
  })
  .strict()
  .openapi('AccountPatch');

const Link = z.object({ href: z.string(), method: z.literal('POST') });

const UpgradeCheckout = z
  .object({
    checkout_id: z.string(),
    provider: z.enum(['local', 'stripe']),
    checkout_url: z.string().nullable().openapi({ description: "The provider's hosted payment page; null for the local provider" }),
    completion_token: z.string().nullable().openapi({ description: "Local provider only: the operator's signature over this checkout, presented to complete it" }),
    complete: Link,
  })
  .openapi('UpgradeCheckout');

const CompleteUpgradeRequest = z
  .object({
    checkout_id: z.string().min(1).max(64),
    completion_token: z.string().min(1).max(128).optional(),
  })
  .strict()
  .openapi('CompleteUpgradeRequest');

const UpgradeResult = z
  .object({
    tenant_id: z.string(),
    tenant_kind: z.literal('production'),
    api_key: z.string().openapi({ description: 'The new svc_live_ key, shown once; the svc_test_ keys stop working' }),
    api_key_id: z.string(),
    key_prefix: z.literal('svc_live_'),
    key_last_four: z.string(),
    upgraded_at: z.string(),
  })
  .openapi('UpgradeResult');

const BillingPortal = z
  .object({
    available: z.boolean(),
    url: z.string().nullable(),
    reason: z.enum(UNAVAILABLE_REASONS).nullable(),
  })
  .openapi('BillingPortal');

export function principalRef(p: Principal) {
  return { id: p.id, kind: p.kind, display_name: p.displayName };
}

function personBody(p: PersonRecord | null) {
  return p && { id: p.id, role: p.role, capabilities: capabilitiesOf(p), created_at: p.createdAt };
}

/** interface-spec Account: the upgrade needs a person, which sessions of pre-people keys lack. */
function requirePerson(session: SessionContext): PersonRecord {
  if (session.person) return session.person;
  throw ProblemError.conflict(
    'session_predates_people',
    'this session comes from an API key created before people existed; sign in with a key that belongs to a person',
    { reason: 'session_predates_people' },
  );
}

/** RFC 6265bis §4.1.2.5: Secure cookies are only sent over https, which loopback http is not. */
export function listensOnLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function billingUnavailable(reason: UnavailableReason, detail: string): ProblemError {
  return new ProblemError({ status: 503, code: 'billing_unavailable', detail, extra: { reason } });
}

export function accountSessionRoutes(deps: RouteDeps) {
  const router = createRouter();
  const { account, tenants } = deps.store;
  const now = () => rfc3339(deps.clock.now());
  const provider: PaymentProvider = createPaymentProvider(deps.config, deps.secrets);
  const host = deps.config.host.includes(':') ? `[${deps.config.host}]` : deps.config.host; // RFC 3986 §3.2.2
  const returnUrl = deps.config.billingReturnUrl ?? `http://${host}:${deps.config.port}/`;

  const accountState = async (s: SessionContext) => {
    const t = (await tenants.getTenant(s.tenantId))!;
    const billing = await account.getTenantBilling(s.tenantId);
    return {
      tenant_id: t.id,
      tenant_kind: t.kind,
      display_name: t.displayName,
      retain_statutory_metadata: t.retainStatutoryMetadata,
      created_at: t.createdAt,
      updated_at: t.updatedAt,
      person: personBody(s.person),
      principal: principalRef(s.principal),
      capabilities: s.capabilities,
      billing: { provider: billing.provider, has_customer: billing.customerRef !== null },
      usage: await usageBody(deps, t.id, t.kind),
    };
  };

  const signIn = defineRoute({
    method: 'post',
    path: '/account/session',
    operationId: 'createAccountSession',
    tags: ['account'],
    auth: deps.auth.apiKey,
    summary: 'Exchange an API key for an account session (svc_session cookie) and its CSRF token',
    responses: { 201: jsonContent(AccountSession, 'Signed in; Set-Cookie carries the session') },
  });
  router.openapi(signIn, async (c) => {
    const auth = c.var.auth;
    const principal = auth.principal!;
    const person = await account.getKeyPerson(auth.keyId);
    const session = newSecretToken();
    const csrf = newSecretToken();
    const ttl = deps.config.sessionTtlSeconds;
    const createdAt = deps.clock.now();
    const expiresAt = rfc3339(new Date(createdAt.getTime() + ttl * 1000));
    await account.createSession({
      id: deps.ids.next('ses'),
      tokenHash: session.hash,
      csrfHash: csrf.hash,
      tenantId: auth.tenantId,
      personId: person?.id ?? null,
      keyId: auth.keyId,
      createdAt: rfc3339(createdAt),
      expiresAt,
    });
    setCookie(c, SESSION_COOKIE, session.token, { path: '/', httpOnly: true, sameSite: 'Strict', secure: secureCookie(deps.config, c), maxAge: ttl });
    c.header('cache-control', 'no-store');
    return c.json(
      {
        person: personBody(person),
        principal: principalRef(principal),
        tenant_id: auth.tenantId,
        tenant_kind: auth.tenantKind,
        capabilities: principal.capabilities,
        expires_at: expiresAt,
        csrf_token: csrf.token,
      },
      201,
    );
  });

  const logout = defineRoute({
    method: 'post',
    path: '/account/logout',
    operationId: 'submitAccountLogout',
    tags: ['account'],
    auth: deps.auth.session,
    summary: 'End the session: the cookie is cleared and the session refused from now on',
    responses: { 200: jsonContent(z.object({ ended: z.literal(true) }).openapi('AccountLogout'), 'Signed out') },
  });
  router.openapi(logout, async (c) => {
    await account.revokeSession(c.var.session.sessionId, now());
    setCookie(c, SESSION_COOKIE, '', { path: '/', httpOnly: true, sameSite: 'Strict', secure: secureCookie(deps.config, c), maxAge: 0 });
    return c.json({ ended: true as const }, 200);
  });

  const getMe = defineRoute({
    method: 'get',
    path: '/account/me',
    operationId: 'getAccount',
    tags: ['account'],
    auth: deps.auth.session,
    summary: 'Account state, the signed-in person and the usage ledger',
    responses: { 200: jsonContent(Account, 'The account') },
  });
  router.openapi(getMe, async (c) => c.json(await accountState(c.var.session), 200));

  const patchMe = defineRoute({
    method: 'patch',
    path: '/account/me',
    operationId: 'updateAccount',
    tags: ['account'],
    auth: deps.auth.session,
    summary: 'Rename the tenant (account:rename) and/or set metadata retention (account:retention); neither is a no-op read',
    request: { body: jsonBody(AccountPatch) },
    responses: { 200: jsonContent(Account, 'The account after the change') },
  });
  router.openapi(patchMe, async (c) => {
    const body = c.req.valid('json');
    const s = c.var.session;
    // Each field is checked against its own capability before anything is written.
    if (body.display_name !== undefined) requireCapability(s, 'account:rename');
    if (body.retain_statutory_metadata !== undefined) requireCapability(s, 'account:retention');
    if (body.display_name !== undefined || body.retain_statutory_metadata !== undefined) {
      await account.updateTenant(s.tenantId, { displayName: body.display_name, retainStatutoryMetadata: body.retain_statutory_metadata }, now());
    }
    return c.json(await accountState(s), 200);
  });

  const checkout = defineRoute({
    method: 'post',
    path: '/account/billing/upgrade-checkout',
    operationId: 'createUpgradeCheckout',
    tags: ['account'],
    auth: deps.auth.session,
    summary: 'Start the upgrade of the signed-in sandbox tenant to production (billing:manage)',
    responses: {
      201: jsonContent(UpgradeCheckout, 'A checkout; pay it at checkout_url (or present completion_token), then complete it'),
      409: problemContent('session_predates_people or already_production'),
      503: problemContent('billing_unavailable: the payment provider is not configured or failed; `reason` says which'),
    },
  });
  router.openapi(checkout, async (c) => {
    const s = c.var.session;
    const person = requirePerson(s);
    requireCapability(s, 'billing:manage');
    if (s.tenantKind !== 'sandbox') throw ProblemError.conflict('already_production', 'this tenant is already a production tenant');
    const reason = await provider.unavailable();
    if (reason) throw billingUnavailable(reason, `the ${provider.name} billing provider is not configured`);
    const checkoutId = deps.ids.next('chk');
    let start;
    try {
      start = await provider.createCheckout({ checkoutId, tenantId: s.tenantId, returnUrl });
    } catch {
      deps.log.warn('billing checkout failed', { tenant_id: s.tenantId });
      throw billingUnavailable('provider_error', `the ${provider.name} billing provider did not create a checkout; try again`);
    }
    await account.createCheckout({
      id: checkoutId,
      tenantId: s.tenantId,
      personId: person.id,
      provider: provider.name,
      providerRef: start.providerRef,
      status: 'open',
      customerRef: null,
      createdAt: now(),
      completedAt: null,
    });
    c.header('cache-control', 'no-store');
    return c.json(
      {
        checkout_id: checkoutId,
        provider: provider.name,
        checkout_url: start.url,
        completion_token: start.completionToken,
        complete: { href: '/account/billing/complete-upgrade', method: 'POST' as const },
      },
      201,
    );
  });

  const complete = defineRoute({
    method: 'post',
    path: '/account/billing/complete-upgrade',
    operationId: 'submitUpgradeCompletion',
    tags: ['account'],
    auth: deps.auth.session,
    summary: "Complete the tenant's own verified checkout (billing:manage): the tenant becomes production and gets a svc_live_ key, shown once",
    request: { body: jsonBody(CompleteUpgradeRequest) },
    responses: {
      200: jsonContent(UpgradeResult, 'Upgraded; the sandbox keys are revoked and the sandbox history is kept'),
      404: problemContent("No such checkout for this tenant (another tenant's checkout answers the same)"),
      409: problemContent('checkout_not_verified, checkout_completed, already_production or session_predates_people'),
      503: problemContent('billing_unavailable: the payment provider could not be asked'),
    },
  });
  router.openapi(complete, async (c) => {
    const body = c.req.valid('json');
    const s = c.var.session;
    const person = requirePerson(s);
    requireCapability(s, 'billing:manage');
    const chk = await account.getCheckout(s.tenantId, body.checkout_id);
    if (!chk) throw ProblemError.notFound('no such checkout for this tenant');
    if (chk.status === 'completed') throw ProblemError.conflict('checkout_completed', 'this checkout has already completed an upgrade');
    if (s.tenantKind !== 'sandbox') throw ProblemError.conflict('already_production', 'this tenant is already a production tenant');
    let customerRef = chk.customerRef;
    if (chk.status !== 'verified') {
      if (chk.provider !== provider.name) throw ProblemError.conflict('checkout_not_verified', `this checkout was made with the ${chk.provider} provider, which is no longer configured`);
      let check;
      try {
        check = await provider.verifyCheckout({ checkout: chk, proof: body.completion_token });
      } catch {
        throw billingUnavailable('provider_error', `the ${provider.name} billing provider could not confirm the checkout; try again`);
      }
      if (!check.verified) throw ProblemError.conflict('checkout_not_verified', check.reason);
      customerRef = check.customerRef;
    }
    const at = now();
    const apiKey = generateApiKey('production');
    const newKey: NewApiKeyRow = { id: deps.ids.next('key'), tenantId: s.tenantId, keyHash: apiKey.hash, prefix: apiKey.prefix, lastFour: apiKey.lastFour, createdAt: at, personId: person.id };
    const outcome = await account.upgradeToProduction({ tenantId: s.tenantId, checkoutId: chk.id, customerRef, provider: chk.provider, newKey, at });
    if (outcome === 'not_sandbox') throw ProblemError.conflict('already_production', 'this tenant is already a production tenant');
    deps.log.info('tenant upgraded to production', { tenant_id: s.tenantId });
    c.header('cache-control', 'no-store');
    return c.json(
      { tenant_id: s.tenantId, tenant_kind: 'production' as const, api_key: apiKey.key, api_key_id: newKey.id, key_prefix: 'svc_live_' as const, key_last_four: apiKey.lastFour, upgraded_at: at },
      200,
    );
  });

  const portal = defineRoute({
    method: 'post',
    path: '/account/billing-portal',
    operationId: 'createBillingPortalSession',
    tags: ['account'],
    auth: deps.auth.session,
    summary: "Hand a production tenant to the payment provider's hosted portal (billing:manage), or say why not",
    responses: { 200: jsonContent(BillingPortal, 'The portal URL, or available:false with the reason') },
  });
  router.openapi(portal, async (c) => {
    const s = c.var.session;
    requireCapability(s, 'billing:manage');
    const unavailable = (reason: UnavailableReason) => c.json({ available: false, url: null, reason }, 200);
    if (s.tenantKind === 'sandbox') return unavailable('sandbox_tenant');
    const configured = await provider.unavailable();
    if (configured) return unavailable(configured);
    const billing = await account.getTenantBilling(s.tenantId);
    if (billing.customerRef === null || billing.provider !== provider.name) return unavailable(billing.customerRef === null ? 'no_customer' : 'provider_unconfigured');
    try {
      const result = await provider.createPortal({ customerRef: billing.customerRef, returnUrl });
      return result.available ? c.json({ available: true, url: result.url, reason: null }, 200) : unavailable(result.reason);
    } catch {
      return unavailable('provider_error');
    }
  });

  // People, service accounts, keys and the audit list (people:manage): ./principal-routes.ts.
  router.route('/', principalRoutes(deps));

  if (deps.config.billingProvider === 'stripe') {
    const stripe = createStripeProvider(deps.config, deps.secrets);
    const webhook = defineRoute({
      method: 'post',
      path: '/account/billing/stripe-webhook',
      operationId: 'submitStripeWebhook',
      tags: ['account'],
      auth: 'public',
      summary: "Stripe's event webhook: a paid Checkout Session marks its checkout verified (signature checked with the SDK)",
      request: { headers: z.object({ 'stripe-signature': z.string().max(2048) }) },
      responses: {
        200: jsonContent(z.object({ received: z.literal(true) }).openapi('WebhookReceipt'), 'Accepted'),
        400: problemContent('webhook_signature_invalid: not signed by Stripe with the configured secret, or too old'),
        503: problemContent('billing_unavailable: no webhook secret is configured'),
      },
    });
    router.openapi(webhook, async (c) => {
      if (!(await stripe.webhookConfigured())) throw billingUnavailable('provider_unconfigured', 'no Stripe webhook secret is configured');
      const payload = await c.req.text();
      let event;
      try {
        event = await stripe.parseWebhook(payload, c.req.valid('header')['stripe-signature'], deps.clock.now().getTime());
      } catch {
        throw new ProblemError({ status: 400, code: 'webhook_signature_invalid', detail: 'the Stripe-Signature header does not verify for this payload' });
      }
      if (event.paid && event.checkoutRef !== null) {
        const chk = await account.findCheckoutByProviderRef('stripe', event.checkoutRef);
        if (chk) await account.markCheckoutVerified(chk.id, event.customerRef);
      }
      return c.json({ received: true as const }, 200);
    });
  }
  return router;
}
