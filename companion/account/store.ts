/**
 * What the account capability needs from storage, independent of the engine. The SQLite
 * implementation is ./sqlite-store.ts; another engine implements this same interface.
 * Every read that returns tenant data takes the tenant id from the authenticated credential
 * (interface-spec Authentication 6).
 */
import type { ApiKeyPrefix, TenantKind, VersionedKeyLookup } from '../core/auth.ts';
import type { PrincipalRecord, PrincipalStatus } from './principals.ts';

export interface TenantRecord {
  id: string;
  kind: TenantKind;
  displayName: string;
  /** Whether declared statutory metadata values are retained (interface-spec "Tenant"). */
  retainStatutoryMetadata: boolean;
  createdAt: string;
  updatedAt: string;
}

export type ApiKeyStatus = 'active' | 'revoked';

/** A key as listings show it: never the secret, never its hash. */
export interface ApiKeyRecord {
  id: string;
  tenantId: string;
  prefix: ApiKeyPrefix;
  lastFour: string;
  status: ApiKeyStatus;
  createdAt: string;
  revokedAt: string | null;
}

export interface NewApiKeyRow {
  id: string;
  tenantId: string;
  /** SHA-256 of the key (core/auth.ts hashApiKey); the key itself is never stored. */
  keyHash: Uint8Array;
  prefix: ApiKeyPrefix;
  lastFour: string;
  createdAt: string;
  /**
   * The person the key acts for (account/people.ts). With neither this nor serviceAccountId, the
   * key joins the tenant's "Tenant keys" service account (migrations/0016).
   */
  personId?: string | null;
  /** The service account the key acts for (account/principals.ts). */
  serviceAccountId?: string | null;
  label?: string | null;
  /** The key's own subset of its principal's capabilities; null or absent: all of the principal's. */
  capabilities?: string[] | null;
  /** RFC 3339 UTC; null or absent: no expiry. */
  expiresAt?: string | null;
}

/** A key as the account API lists it: never the secret, never its hash. */
export interface ApiKeyDetail extends ApiKeyRecord {
  principalId: string;
  label: string | null;
  capabilities: string[] | null;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

export interface NewServiceAccount {
  id: string;
  tenantId: string;
  name: string;
  capabilities: string[];
  createdAt: string;
}

/** A change to a person or service account; absent fields stay as they are. */
export interface PrincipalChange {
  capabilities?: string[];
  status?: PrincipalStatus;
  role?: 'owner' | 'member';
  displayName?: string | null;
}

export type PrincipalChangeOutcome = 'updated' | 'not_found' | 'last_owner';

/** A person's identity on a platform that posts review callbacks (migrations/0018, account/identities.ts). */
export interface IdentityRecord {
  id: string;
  tenantId: string;
  personId: string;
  /** `slack:<team_id>`, `servicenow:<instance>`, … */
  provider: string;
  /** The platform's user id (Slack user.id, ServiceNow sys_user sys_id). */
  subject: string;
  createdAt: string;
}

/** The index row of a sealed admin receipt (migrations/0017). */
export interface AdminReceiptRow {
  actionKey: string;
  tenantId: string;
  action: string;
  actorId: string;
  subjectId: string;
  createdAt: string;
}

export interface NewSandboxTenant {
  tenant: TenantRecord;
  /** Digest of the normalised signup email (account/signup.ts emailDigest). */
  emailDigest: Uint8Array;
  /** The tenant's owner, created with it; `key` belongs to this person. */
  owner: PersonRecord;
  key: NewApiKeyRow;
}

export interface TenantStore extends VersionedKeyLookup {
  /**
   * Creates the tenant, its one-sandbox-per-email marker and its first key atomically.
   * 'email_taken' (and nothing written) when that email already has a sandbox.
   */
  createSandboxTenant(input: NewSandboxTenant): Promise<'created' | 'email_taken'>;
  getTenant(tenantId: string): Promise<TenantRecord | undefined>;
  addApiKey(key: NewApiKeyRow): Promise<void>;
  /** Revokes one of the tenant's keys at once; false when the tenant has no such active key. */
  revokeApiKey(tenantId: string, keyId: string, revokedAt: string): Promise<boolean>;
  /** The tenant's keys, oldest first. */
  listApiKeys(tenantId: string): Promise<ApiKeyRecord[]>;
}

/** A person acting for a tenant, with the capabilities it holds (account/people.ts). */
export interface PersonRecord {
  id: string;
  tenantId: string;
  /** Digest of the normalised email (account/signup.ts emailDigest); the address is never stored. */
  emailDigest: Uint8Array;
  role: 'owner' | 'member';
  capabilities: string[];
  createdAt: string;
  /** Optional, for listings and receipts (migrations/0016); absent: not given. */
  displayName?: string | null;
  email?: string | null;
}

export interface NewSessionRow {
  id: string;
  tokenHash: Uint8Array;
  csrfHash: Uint8Array;
  tenantId: string;
  personId: string | null;
  keyId: string;
  createdAt: string;
  expiresAt: string;
}

/** A live session with what authorisation needs, read fresh on every request. */
export interface SessionMatch {
  sessionId: string;
  tenantId: string;
  tenantKind: TenantKind;
  person: PersonRecord | null;
  tokenHash: Uint8Array;
  csrfHash: Uint8Array;
  expiresAt: string;
}

export type CheckoutStatus = 'open' | 'verified' | 'completed';
export type BillingProviderName = 'local' | 'stripe';

export interface CheckoutRecord {
  id: string;
  tenantId: string;
  personId: string;
  provider: BillingProviderName;
  providerRef: string;
  status: CheckoutStatus;
  customerRef: string | null;
  createdAt: string;
  completedAt: string | null;
}

export interface TenantBilling {
  provider: BillingProviderName | null;
  customerRef: string | null;
}

/** The production tenant an upgrade produces, written in one transaction. */
export interface UpgradeToProduction {
  tenantId: string;
  checkoutId: string;
  customerRef: string | null;
  provider: BillingProviderName;
  newKey: NewApiKeyRow;
  at: string;
}

/** People, sessions and billing checkouts (migrations/0012). */
export interface AccountStore {
  getKeyPerson(keyId: string): Promise<PersonRecord | null>;
  addPerson(person: PersonRecord, key: NewApiKeyRow): Promise<'created' | 'email_taken'>;
  createSession(row: NewSessionRow): Promise<void>;
  /** The unrevoked, unexpired session with this token digest, or undefined. */
  findLiveSession(tokenHash: Uint8Array, now: string): Promise<SessionMatch | undefined>;
  revokeSession(sessionId: string, at: string): Promise<void>;
  updateTenant(tenantId: string, changes: { displayName?: string; retainStatutoryMetadata?: boolean }, at: string): Promise<void>;
  getTenantBilling(tenantId: string): Promise<TenantBilling>;
  createCheckout(row: CheckoutRecord): Promise<void>;
  /** The tenant's own checkout only: another tenant's id answers undefined. */
  getCheckout(tenantId: string, checkoutId: string): Promise<CheckoutRecord | undefined>;
  findCheckoutByProviderRef(provider: BillingProviderName, providerRef: string): Promise<CheckoutRecord | undefined>;
  markCheckoutVerified(checkoutId: string, customerRef: string | null): Promise<void>;
  /**
   * Makes the tenant production, revokes its svc_test_ keys, adds the svc_live_ key and closes
   * the checkout, atomically; 'not_sandbox' (nothing written) when it is already production.
   */
  upgradeToProduction(input: UpgradeToProduction): Promise<'upgraded' | 'not_sandbox'>;

  // Principals (migrations/0016, account/principals.ts).
  /** The session's principal: its person, or the service account of the key it was opened with; capabilities within that key's subset. */
  sessionPrincipal(sessionId: string): Promise<PrincipalRecord | undefined>;
  /** The tenant's own person or service account (capabilities as granted, no key subset). */
  getPrincipal(tenantId: string, principalId: string): Promise<PrincipalRecord | undefined>;
  /** The tenant's people, then its service accounts, each oldest first. */
  listPrincipals(tenantId: string): Promise<PrincipalRecord[]>;
  createServiceAccount(row: NewServiceAccount): Promise<void>;
  /**
   * Changes a person or service account. 'last_owner' (nothing written) when the change would
   * leave the tenant without an active owner; decided atomically against concurrent changes.
   */
  changePrincipal(tenantId: string, principalId: string, change: PrincipalChange, at: string): Promise<PrincipalChangeOutcome>;
  /** The tenant's keys with their principal, label, subset, expiry and last use, oldest first. */
  listKeyDetails(tenantId: string): Promise<ApiKeyDetail[]>;
  getKeyDetail(tenantId: string, keyId: string): Promise<ApiKeyDetail | undefined>;
  /**
   * Adds `next` and ends the old key: expiring at `oldExpiresAt` (the overlap), or revoked at
   * once when that is null. 'not_active' (nothing written) when the old key is not active.
   */
  rotateKey(tenantId: string, oldKeyId: string, next: NewApiKeyRow, oldExpiresAt: string | null, at: string): Promise<'rotated' | 'not_active'>;
  /** Adds a key (the tenant store's addApiKey, reachable inside a seal's transaction). */
  addKey(key: NewApiKeyRow): Promise<void>;
  /** Revokes one of the tenant's active, unexpired keys; false when there is none. */
  revokeKey(tenantId: string, keyId: string, at: string): Promise<boolean>;
  insertAdminReceipt(row: AdminReceiptRow): Promise<void>;

  // Linked identities (migrations/0018, account/identities.ts).
  /** 'taken' (nothing written) when the tenant already links this provider and subject to a person. */
  linkIdentity(row: IdentityRecord): Promise<'linked' | 'taken'>;
  /** The person's linked identities, oldest first. */
  listIdentities(tenantId: string, personId: string): Promise<IdentityRecord[]>;
  /** Removes one of the person's identities; false when the person has no such identity. */
  unlinkIdentity(tenantId: string, personId: string, identityId: string): Promise<boolean>;
  /** The id of the tenant's person with this email digest (account/signup.ts emailDigest), or undefined. */
  findPersonIdByEmailDigest(tenantId: string, emailDigest: Uint8Array): Promise<string | undefined>;
  /** The person a platform user is linked to in this tenant, or undefined. */
  findIdentity(tenantId: string, provider: string, subject: string): Promise<IdentityRecord | undefined>;
  /** The tenant's admin receipts, newest first, those older than `before` (an action key) when given. */
  listAdminReceipts(tenantId: string, before: string | null, limit: number): Promise<AdminReceiptRow[]>;
}

/** This capability's member of every store (core/stores.ts: each owner declares its own). */
declare module '../core/stores.ts' {
  interface Stores {
    /** Tenants and API keys (account capability); also the API key lookup for auth. */
    readonly tenants: TenantStore;
    /** People, account sessions and billing checkouts (account capability). */
    readonly account: AccountStore;
  }
}
