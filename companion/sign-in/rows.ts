/** The sign-in tables' rows as both engines read them (./store.ts), shared so they cannot drift. */
import type { DeviceAuthorizationRecord, DeviceStatus, DeviceTokenRecord, IdentityProviderRecord, OidcLoginRow } from './store.ts';

export interface IdentityProviderRow {
  tenant_id: string;
  issuer: string;
  client_id: string;
  client_secret_ref: string | null;
  created_at: string;
  updated_at: string;
}

export interface OidcLoginDbRow {
  state_sha256: Buffer;
  tenant_id: string;
  nonce: string;
  code_verifier: string;
  created_at: string;
  expires_at: string;
}

export interface DeviceRow {
  id: string;
  device_code_sha256: Buffer;
  user_code: string;
  client_id: string;
  scope: string;
  status: DeviceStatus;
  tenant_id: string | null;
  person_id: string | null;
  granted_scope: string | null;
  key_id: string | null;
  poll_interval: number | string;
  last_polled_at: string | null;
  created_at: string;
  expires_at: string;
  decided_at: string | null;
}

export interface DeviceTokenRow {
  key_id: string;
  client_id: string;
  granted_scope: string | null;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  status: 'active' | 'revoked';
  revoked_at: string | null;
}

export function identityProviderFromRow(row: IdentityProviderRow, domains: string[]): IdentityProviderRecord {
  return {
    tenantId: row.tenant_id,
    issuer: row.issuer,
    clientId: row.client_id,
    clientSecretRef: row.client_secret_ref,
    emailDomains: [...domains].sort(),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function loginFromRow(row: OidcLoginDbRow): OidcLoginRow {
  return {
    stateHash: new Uint8Array(row.state_sha256),
    tenantId: row.tenant_id,
    nonce: row.nonce,
    codeVerifier: row.code_verifier,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

export function deviceFromRow(row: DeviceRow): DeviceAuthorizationRecord {
  return {
    id: row.id,
    deviceCodeHash: new Uint8Array(row.device_code_sha256),
    userCode: row.user_code,
    clientId: row.client_id,
    scope: JSON.parse(row.scope) as string[],
    status: row.status,
    tenantId: row.tenant_id,
    personId: row.person_id,
    grantedScope: row.granted_scope === null ? null : (JSON.parse(row.granted_scope) as string[]),
    keyId: row.key_id,
    pollInterval: Number(row.poll_interval),
    lastPolledAt: row.last_polled_at,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    decidedAt: row.decided_at,
  };
}

export function deviceTokenFromRow(row: DeviceTokenRow): DeviceTokenRecord {
  return {
    keyId: row.key_id,
    clientId: row.client_id,
    capabilities: row.granted_scope === null ? [] : (JSON.parse(row.granted_scope) as string[]),
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    status: row.status,
    revokedAt: row.revoked_at,
  };
}
