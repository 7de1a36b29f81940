/**
 * The payment-provider interface behind the upgrade to production (interface-spec Account
 * table, States "Sandbox tenant → production"). SVC_BILLING_PROVIDER picks one:
 * local-provider.ts (self-hosting and tests) or stripe-provider.ts (Stripe's official SDK).
 * Secrets come only from secret references resolved at use time (core/secret-refs.ts).
 */
import type { Config } from '../../core/config.ts';
import type { SecretResolver } from '../../core/secret-refs.ts';
import type { BillingProviderName, CheckoutRecord } from '../store.ts';
import { createLocalProvider } from './local-provider.ts';
import { createStripeProvider } from './stripe-provider.ts';

/** Why billing cannot be used right now; answered to the caller, never a 500. */
export const UNAVAILABLE_REASONS = ['provider_unconfigured', 'provider_error', 'provider_has_no_portal', 'sandbox_tenant', 'no_customer'] as const;
export type UnavailableReason = (typeof UNAVAILABLE_REASONS)[number];

export interface CheckoutStart {
  /** The provider's id of the checkout. */
  providerRef: string;
  /** Where the person pays (a hosted page), or null when no page is involved. */
  url: string | null;
  /** The local provider's operator signature, presented again to complete; null otherwise. */
  completionToken: string | null;
}

export type CheckoutCheck = { verified: true; customerRef: string | null } | { verified: false; reason: string };

export type PortalResult = { available: true; url: string } | { available: false; reason: UnavailableReason };

export interface PaymentProvider {
  readonly name: BillingProviderName;
  /** null when the provider can be used; otherwise why not (its secrets may live in a secret manager). */
  unavailable(): Promise<UnavailableReason | null>;
  createCheckout(input: { checkoutId: string; tenantId: string; returnUrl: string }): Promise<CheckoutStart>;
  /** Whether this checkout was paid for this tenant; `proof` is what the caller presented. */
  verifyCheckout(input: { checkout: CheckoutRecord; proof: string | undefined }): Promise<CheckoutCheck>;
  createPortal(input: { customerRef: string; returnUrl: string }): Promise<PortalResult>;
}

export function createPaymentProvider(config: Config, secrets: SecretResolver): PaymentProvider {
  return config.billingProvider === 'stripe' ? createStripeProvider(config, secrets) : createLocalProvider(config, secrets);
}

/** A configured secret reference's value, or undefined when unset or unresolvable. */
export async function operatorSecret(secrets: SecretResolver, ref: string | null): Promise<string | undefined> {
  if (ref === null) return undefined;
  const r = await secrets.resolveOperator(ref);
  return r.ok ? r.value : undefined;
}
