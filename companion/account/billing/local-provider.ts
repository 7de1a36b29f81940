/**
 * The local payment provider (SVC_BILLING_PROVIDER=local, the default): for self-hosting and
 * tests, where the operator is the one who approves an upgrade and no payment network is
 * involved. A checkout is "paid" when it carries the operator's signature: HMAC-SHA256
 * (RFC 2104) over the checkout id and the tenant id, keyed by the operator secret named by
 * SVC_BILLING_LOCAL_SECRET_REF. Binding the tenant id means a checkout (or its token) issued
 * to one tenant can never complete another; the check is constant-time.
 *
 * Everything happens inside this service on this machine: upgrade-checkout returns the token
 * and complete-upgrade checks it, with no outbound traffic. Without the secret the provider is
 * unavailable (provider_unconfigured), so an operator opts in to free upgrades explicitly.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Config } from '../../core/config.ts';
import type { SecretResolver } from '../../core/secret-refs.ts';
import { operatorSecret } from './provider.ts';
import type { PaymentProvider } from './provider.ts';

const LABEL = 'svc-local-checkout/v1';

export function localCheckoutToken(secret: string, checkoutId: string, tenantId: string): string {
  return createHmac('sha256', secret).update(`${LABEL}\n${checkoutId}\n${tenantId}`, 'utf8').digest('base64url');
}

export function createLocalProvider(config: Config, secrets: SecretResolver): PaymentProvider {
  const secret = () => operatorSecret(secrets, config.billingLocalSecretRef);
  return {
    name: 'local',
    unavailable: async () => ((await secret()) === undefined ? 'provider_unconfigured' : null),
    async createCheckout({ checkoutId, tenantId }) {
      const key = await secret();
      if (key === undefined) throw new Error('local billing provider is not configured');
      return { providerRef: checkoutId, url: null, completionToken: localCheckoutToken(key, checkoutId, tenantId) };
    },
    async verifyCheckout({ checkout, proof }) {
      const key = await secret();
      if (key === undefined) return { verified: false, reason: 'the local billing provider is not configured' };
      if (proof === undefined) return { verified: false, reason: 'completion_token is required by the local billing provider' };
      const expected = Buffer.from(localCheckoutToken(key, checkout.id, checkout.tenantId));
      const given = Buffer.from(proof);
      const ok = given.length === expected.length && timingSafeEqual(given, expected);
      return ok ? { verified: true, customerRef: null } : { verified: false, reason: 'the completion_token does not match this checkout' };
    },
    async createPortal() {
      return { available: false, reason: 'provider_has_no_portal' };
    },
  };
}
