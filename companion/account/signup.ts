/**
 * Sandbox signup (DESIGN.md §6; interface-spec Limits: one sandbox per email, 100 sealed
 * actions). The key is returned once and stored only as a hash.
 */
import { createHash } from 'node:crypto';
import { generateApiKey } from '../core/auth.ts';
import type { NewApiKey } from '../core/auth.ts';
import type { Clock } from '../core/clock.ts';
import { rfc3339 } from '../core/clock.ts';
import { ProblemError } from '../core/errors.ts';
import type { IdFactory } from '../core/ids.ts';
import { UPGRADE_POINTERS } from '../metering/upgrade-pointers.ts';
import { CAPABILITIES } from './people.ts';
import type { NewApiKeyRow, PersonRecord, TenantRecord, TenantStore } from './store.ts';

/** interface-spec "Tenant": sandbox tenants include 100 sealed actions. */
export const SANDBOX_ALLOWANCE = 100;

export const DEFAULT_DISPLAY_NAME = 'Sandbox tenant';

/**
 * What identifies "the same email" for the one-sandbox rule. We need equality, not the
 * address, so only this digest is stored: the database never holds a contact list to leak.
 * The label keeps our digests from matching other systems' plain SHA-256 email hashes.
 * A digest of a guessable input is pseudonymous, not anonymous: someone holding the
 * database can test a candidate address. A keyed hash (HMAC with a local secret) would close
 * that at the cost of one more secret to keep. People (account/people.ts) are stored the same way.
 */
export function emailDigest(normalisedEmail: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(`svc-signup-email/v1\n${normalisedEmail}`, 'utf8').digest());
}

/** Trim and lowercase: "Ada@Example.com " and "ada@example.com" are one person here. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export interface SandboxSignup {
  tenant: TenantRecord;
  apiKey: NewApiKey;
  keyId: string;
}

export interface SignupDeps {
  tenants: TenantStore;
  clock: Clock;
  ids: IdFactory;
}

export async function signUpSandbox(deps: SignupDeps, email: string): Promise<SandboxSignup> {
  const now = rfc3339(deps.clock.now());
  const tenant: TenantRecord = {
    id: deps.ids.next('ten'),
    kind: 'sandbox',
    displayName: DEFAULT_DISPLAY_NAME,
    retainStatutoryMetadata: false,
    createdAt: now,
    updatedAt: now,
  };
  const digest = emailDigest(normaliseEmail(email));
  // The signup email becomes the tenant's owner, holding every capability.
  const owner: PersonRecord = { id: deps.ids.next('per'), tenantId: tenant.id, emailDigest: digest, role: 'owner', capabilities: [...CAPABILITIES], createdAt: now };
  const apiKey = generateApiKey('sandbox');
  const key: NewApiKeyRow = {
    id: deps.ids.next('key'),
    tenantId: tenant.id,
    keyHash: apiKey.hash,
    prefix: apiKey.prefix,
    lastFour: apiKey.lastFour,
    createdAt: now,
    personId: owner.id,
  };
  const outcome = await deps.tenants.createSandboxTenant({ tenant, emailDigest: digest, owner, key });
  if (outcome === 'email_taken') {
    // The spec answers a repeat email with 409 and an upgrade pointer (interface-spec Errors).
    throw ProblemError.conflict('sandbox_exists', 'a sandbox already exists for this email; use its key, or sign in with it and upgrade it to production', UPGRADE_POINTERS);
  }
  return { tenant, apiKey, keyId: key.id };
}
