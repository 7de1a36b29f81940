/**
 * The integrations table's rows as both engines read them (tenant_integrations; the flag
 * `enabled` a 0/1 number on both, bigint arriving as a number on PostgreSQL), and how they map
 * to the store's records: shared by ./sqlite-store.ts and ./postgres-store.ts, so the two
 * cannot drift apart.
 */
import type { IntegrationRow } from './store.ts';

export interface DbRow {
  tenant_id: string;
  channel: string;
  target: string;
  enabled: number;
  config: string;
  secret_ref: string | null;
  created_at: string;
  updated_at: string;
  consecutive_failures: number;
  failing_since: string | null;
  disabled_at: string | null;
  disabled_reason: string | null;
}

export const toRow = (r: DbRow): IntegrationRow => ({
  tenantId: r.tenant_id,
  channel: r.channel,
  target: r.target,
  enabled: r.enabled === 1,
  config: r.config,
  secretRef: r.secret_ref,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  consecutiveFailures: r.consecutive_failures,
  failingSince: r.failing_since,
  disabledAt: r.disabled_at,
  disabledReason: r.disabled_reason,
});
