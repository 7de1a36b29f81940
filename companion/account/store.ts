/**
 * What the account capability needs from storage, independent of the engine. The SQLite
 * implementation is ./sqlite-store.ts; another engine implements this same interface.
 * Every read that returns tenant data takes the tenant id from the authenticated credential
 * (interface-spec Authentication 6).
 */
import type { ApiKeyLookup, ApiKeyPrefix, TenantKind } from '../core/auth.ts';

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
}

export interface NewSandboxTenant {
  tenant: TenantRecord;
  /** Digest of the normalised signup email (account/signup.ts emailDigest). */
  emailDigest: Uint8Array;
  key: NewApiKeyRow;
}

export interface TenantStore extends ApiKeyLookup {
  /**
   * Creates the tenant, its one-sandbox-per-email marker and its first key atomically.
   * 'email_taken' (and nothing written) when that email already has a sandbox.
   */
  createSandboxTenant(input: NewSandboxTenant): 'created' | 'email_taken';
  getTenant(tenantId: string): TenantRecord | undefined;
  addApiKey(key: NewApiKeyRow): void;
  /** Revokes one of the tenant's keys at once; false when the tenant has no such active key. */
  revokeApiKey(tenantId: string, keyId: string, revokedAt: string): boolean;
  /** The tenant's keys, oldest first. */
  listApiKeys(tenantId: string): ApiKeyRecord[];
}
