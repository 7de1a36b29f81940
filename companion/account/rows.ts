/**
 * The account tables' rows as both engines read them (tenants, api_keys, people,
 * account_sessions, tenant_billing, billing_checkouts; blobs and bytea arrive as Buffers, bigint
 * columns as numbers), and how they map to the store's records: shared by ./sqlite-store.ts and
 * ./postgres-store.ts, so the two cannot drift apart.
 */
import type { ApiKeyMatch, ApiKeyPrefix, ResolvedApiKey, TenantKind } from '../core/auth.ts';
import { principalFromJoin } from './principals.ts';
import type { PrincipalJoinRow } from './principals.ts';
import type { ApiKeyDetail, ApiKeyRecord, ApiKeyStatus, CheckoutRecord, IdentityRecord, PersonRecord, SessionMatch, TenantBilling, TenantRecord } from './store.ts';

export interface TenantRow {
  id: string;
  kind: TenantKind;
  display_name: string;
  retain_statutory_metadata: number;
  created_at: string;
  updated_at: string;
}

export interface ApiKeyRow {
  id: string;
  tenant_id: string;
  prefix: ApiKeyPrefix;
  last_four: string;
  status: ApiKeyStatus;
  created_at: string;
  revoked_at: string | null;
}

/** An active key joined with its tenant's kind. */
export interface KeyMatchRow {
  id: string;
  tenant_id: string;
  kind: TenantKind;
  key_sha256: Buffer;
}

/** An active key with its tenant's kind, expiry, last use and principal (account/principals.ts). */
export interface ResolvedKeyRow extends PrincipalJoinRow {
  id: string;
  kind: TenantKind;
  key_sha256: Buffer;
  expires_at: string | null;
  last_used_at: string | null;
}

export interface ApiKeyDetailRow extends ApiKeyRow {
  person_id: string | null;
  service_account_id: string | null;
  label: string | null;
  capabilities: string | null;
  expires_at: string | null;
  last_used_at: string | null;
}

export interface PersonRow {
  id: string;
  tenant_id: string;
  email_digest: Buffer;
  role: 'owner' | 'member';
  capabilities: string;
  created_at: string;
}

/** A live session joined with its tenant's kind (its person is read as a PersonRow). */
export interface SessionRow {
  id: string;
  tenant_id: string;
  kind: TenantKind;
  person_id: string | null;
  token_sha256: Buffer;
  csrf_sha256: Buffer;
  expires_at: string;
}

export interface BillingRow {
  provider: CheckoutRecord['provider'];
  customer_ref: string | null;
}

export interface CheckoutRow {
  id: string;
  tenant_id: string;
  person_id: string;
  provider: CheckoutRecord['provider'];
  provider_ref: string;
  status: CheckoutRecord['status'];
  customer_ref: string | null;
  created_at: string;
  completed_at: string | null;
}

export function tenantFromRow(row: TenantRow): TenantRecord {
  return {
    id: row.id,
    kind: row.kind,
    displayName: row.display_name,
    retainStatutoryMetadata: row.retain_statutory_metadata === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function keyFromRow(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    prefix: row.prefix,
    lastFour: row.last_four,
    status: row.status,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

export function keyMatchFromRow(row: KeyMatchRow): ApiKeyMatch {
  return { keyId: row.id, tenantId: row.tenant_id, tenantKind: row.kind, keyHash: new Uint8Array(row.key_sha256) };
}

export function resolvedKeyFromRow(row: ResolvedKeyRow): ResolvedApiKey {
  const principal = principalFromJoin(row);
  return {
    keyId: row.id,
    tenantId: row.tenant_id,
    tenantKind: row.kind,
    keyHash: new Uint8Array(row.key_sha256),
    principal: principal && { id: principal.id, kind: principal.kind, displayName: principal.displayName, capabilities: principal.capabilities, status: principal.status },
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
  };
}

export function keyDetailFromRow(row: ApiKeyDetailRow): ApiKeyDetail {
  return {
    ...keyFromRow(row),
    // Every key has one or the other since migrations/0016 (its trigger fills keys written without).
    principalId: row.person_id ?? row.service_account_id ?? '',
    label: row.label,
    capabilities: row.capabilities === null ? null : (JSON.parse(row.capabilities) as string[]),
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
  };
}

export function personFromRow(row: PersonRow): PersonRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    emailDigest: new Uint8Array(row.email_digest),
    role: row.role,
    capabilities: JSON.parse(row.capabilities) as string[],
    createdAt: row.created_at,
  };
}

export function sessionFromRow(row: SessionRow, person: PersonRecord | null): SessionMatch {
  return {
    sessionId: row.id,
    tenantId: row.tenant_id,
    tenantKind: row.kind,
    person,
    tokenHash: new Uint8Array(row.token_sha256),
    csrfHash: new Uint8Array(row.csrf_sha256),
    expiresAt: row.expires_at,
  };
}

/** The tenant's billing row, or none yet (both null). */
export function billingFromRow(row: BillingRow | undefined): TenantBilling {
  return { provider: row?.provider ?? null, customerRef: row?.customer_ref ?? null };
}

export function checkoutFromRow(row: CheckoutRow): CheckoutRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    personId: row.person_id,
    provider: row.provider,
    providerRef: row.provider_ref,
    status: row.status,
    customerRef: row.customer_ref,
    createdAt: row.created_at,
    completedAt: row.completed_at,
  };
}

/** A person_identities row (migrations/0018), as both engines read it. */
export interface IdentityRow {
  id: string;
  tenant_id: string;
  person_id: string;
  provider: string;
  subject: string;
  created_at: string;
}

export function identityFromRow(r: IdentityRow): IdentityRecord {
  return { id: r.id, tenantId: r.tenant_id, personId: r.person_id, provider: r.provider, subject: r.subject, createdAt: r.created_at };
}
