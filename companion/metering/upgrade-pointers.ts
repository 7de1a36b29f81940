/**
 * Where a refusal that ends in "upgrade" points (problem+json extension members, RFC 9457 §3.2):
 * metering's 402 when the sandbox allowance is used up, and signup's 409 for a repeat email.
 * The upgrade needs an account session, which an API key opens (account/session-routes.ts).
 */
export const UPGRADE_HREF = '/account/billing/upgrade-checkout';

export const UPGRADE_POINTERS = {
  upgrade: { href: UPGRADE_HREF, method: 'POST' },
  sign_in: { href: '/account/session', method: 'POST' },
} as const;
