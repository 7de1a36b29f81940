/**
 * The review-context tables' rows as both engines read them (review_keys, review_contexts;
 * BLOB/bytea arriving as a Buffer), and how they map to the store's records: shared by
 * ./sqlite-store.ts and ./postgres-store.ts, so the two cannot drift apart.
 */
import type { ContextRow, ReviewKeyRow, SubmitterRow } from './store.ts';

export interface SubmitterDbRow {
  tenant_id: string;
  action_key: string;
  principal_id: string | null;
  credential_id: string | null;
}

export const toSubmitter = (r: SubmitterDbRow): SubmitterRow => ({ tenantId: r.tenant_id, actionKey: r.action_key, principalId: r.principal_id, credentialId: r.credential_id });

export interface KeyDbRow {
  id: string;
  tenant_id: string;
  person_id: string;
  public_key: Uint8Array;
  label: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface ContextDbRow {
  tenant_id: string;
  action_key: string;
  review_key_id: string;
  enc: Uint8Array;
  ct: Uint8Array;
  created_at: string;
}

/** A plain Uint8Array copy: a driver's Buffer may be a view into a shared pool. */
const bytes = (b: Uint8Array): Uint8Array => new Uint8Array(b);

export const toKey = (r: KeyDbRow): ReviewKeyRow => ({
  id: r.id,
  tenantId: r.tenant_id,
  personId: r.person_id,
  publicKey: bytes(r.public_key),
  label: r.label,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
});

export const toContext = (r: ContextDbRow): ContextRow => ({
  tenantId: r.tenant_id,
  actionKey: r.action_key,
  reviewKeyId: r.review_key_id,
  enc: bytes(r.enc),
  ct: bytes(r.ct),
  createdAt: r.created_at,
});

