/**
 * The Stripe payment provider (SVC_BILLING_PROVIDER=stripe), built on Stripe's official SDK:
 * Checkout Sessions (https://docs.stripe.com/api/checkout/sessions) in subscription mode for
 * the production price, the customer portal (https://docs.stripe.com/api/customer_portal/sessions)
 * and webhook signature verification with the SDK's own `constructEvent`
 * (https://docs.stripe.com/webhooks#verify-events), which checks the HMAC and the timestamp
 * tolerance. The secret key and the webhook secret are secret references resolved at each use,
 * so a rotation needs no restart; SVC_STRIPE_API_BASE points the SDK at another host (a local
 * stand-in speaking Stripe's wire format).
 *
 * These calls go to the operator-configured payment provider, not to a tenant-supplied URL, so
 * they use the SDK's own HTTP client rather than net/outbound-http.ts (which guards tenant URLs).
 */
import { createRequire } from 'node:module';
import type Stripe from 'stripe';
import type { Config } from '../../core/config.ts';
import type { SecretResolver } from '../../core/secret-refs.ts';
import { operatorSecret } from './provider.ts';
import type { PaymentProvider } from './provider.ts';

/**
 * The SDK is loaded on first use: it adds about 10 MB to the resident size of every process,
 * and only a companion billing through Stripe ever calls it.
 */
let sdk: typeof Stripe | undefined;
function stripeSdk(): typeof Stripe {
  sdk ??= createRequire(import.meta.url)('stripe') as typeof Stripe;
  return sdk;
}

/** Stripe's documented default tolerance for a webhook's signed timestamp (5 minutes). */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

export interface StripeCheckoutEvent {
  type: string;
  checkoutRef: string | null;
  customerRef: string | null;
  paid: boolean;
}

export function stripeClient(config: Config, secretKey: string): Stripe {
  const base = config.stripeApiBase === null ? undefined : new URL(config.stripeApiBase);
  const Sdk = stripeSdk();
  return new Sdk(secretKey, {
    maxNetworkRetries: 1,
    telemetry: false,
    timeout: 20_000,
    ...(base
      ? { host: base.hostname.replace(/^\[|\]$/g, ''), port: base.port || (base.protocol === 'https:' ? '443' : '80'), protocol: base.protocol === 'https:' ? 'https' : 'http' }
      : {}),
  });
}

/** A completed Checkout Session counts only when paid (or free) and made for this tenant. */
function paid(session: Stripe.Checkout.Session): boolean {
  return session.status === 'complete' && (session.payment_status === 'paid' || session.payment_status === 'no_payment_required');
}

function customerOf(session: Stripe.Checkout.Session): string | null {
  const c = session.customer;
  return c === null || c === undefined ? null : typeof c === 'string' ? c : c.id;
}

export function createStripeProvider(config: Config, secrets: SecretResolver): PaymentProvider & {
  /** Verifies and reads a webhook; throws the SDK's StripeSignatureVerificationError when it is not Stripe's. */
  parseWebhook(payload: string, signature: string, receivedAtMs: number): Promise<StripeCheckoutEvent>;
  webhookConfigured(): Promise<boolean>;
} {
  const secretKey = () => operatorSecret(secrets, config.stripeSecretKeyRef);
  const webhookSecret = () => operatorSecret(secrets, config.stripeWebhookSecretRef);
  const client = async () => {
    const key = await secretKey();
    if (key === undefined) throw new Error('Stripe secret key is not configured');
    return stripeClient(config, key);
  };
  return {
    name: 'stripe',
    unavailable: async () => ((await secretKey()) === undefined || config.stripePriceId === null ? 'provider_unconfigured' : null),
    async createCheckout({ checkoutId, tenantId, returnUrl }) {
      const session = await (await client()).checkout.sessions.create(
        {
          mode: 'subscription',
          line_items: [{ price: config.stripePriceId! }],
          client_reference_id: tenantId,
          metadata: { checkout_id: checkoutId, tenant_id: tenantId },
          success_url: `${returnUrl}?checkout_id=${checkoutId}`,
          cancel_url: returnUrl,
        },
        // One Checkout Session per checkout, however often the request is retried.
        { idempotencyKey: checkoutId },
      );
      return { providerRef: session.id, url: session.url, completionToken: null };
    },
    async verifyCheckout({ checkout }) {
      const session = await (await client()).checkout.sessions.retrieve(checkout.providerRef);
      if (session.client_reference_id !== checkout.tenantId) return { verified: false, reason: 'the Checkout Session was made for another tenant' };
      if (!paid(session)) return { verified: false, reason: 'the Checkout Session is not paid yet' };
      return { verified: true, customerRef: customerOf(session) };
    },
    async createPortal({ customerRef, returnUrl }) {
      const portal = await (await client()).billingPortal.sessions.create({ customer: customerRef, return_url: returnUrl });
      return { available: true, url: portal.url };
    },
    webhookConfigured: async () => (await webhookSecret()) !== undefined,
    async parseWebhook(payload, signature, receivedAtMs) {
      const secret = await webhookSecret();
      if (secret === undefined) throw new Error('Stripe webhook secret is not configured');
      const event = stripeSdk().webhooks.constructEvent(payload, signature, secret, WEBHOOK_TOLERANCE_SECONDS, undefined, receivedAtMs);
      if (event.type !== 'checkout.session.completed' && event.type !== 'checkout.session.async_payment_succeeded') {
        return { type: event.type, checkoutRef: null, customerRef: null, paid: false };
      }
      const session = event.data.object as Stripe.Checkout.Session;
      return { type: event.type, checkoutRef: session.id, customerRef: customerOf(session), paid: paid(session) };
    },
  };
}
