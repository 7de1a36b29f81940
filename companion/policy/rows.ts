/**
 * The policy table's rows as both engines read them (policy_versions; bigint arriving as a
 * number on PostgreSQL), and how they map to the store's records: shared by ./sqlite-store.ts
 * and ./postgres-store.ts, so the two cannot drift apart.
 */
import type { PolicyVersionRow } from './store.ts';

export interface VersionDbRow {
  tenant_id: string;
  policy_pack: string;
  version: number;
  digest: string;
  previous_digest: string | null;
  document: string;
  actor: string;
  created_at: string;
  action_key: string;
}

export const toRow = (r: VersionDbRow): PolicyVersionRow => ({
  tenantId: r.tenant_id,
  policyPack: r.policy_pack,
  version: r.version,
  digest: r.digest,
  previousDigest: r.previous_digest,
  document: r.document,
  actor: r.actor,
  createdAt: r.created_at,
  actionKey: r.action_key,
});
