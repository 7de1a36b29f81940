/**
 * PostgreSQL implementation of IntegrationStore (table tenant_integrations,
 * migrations/postgres/0006). The statements are the SQLite store's: the flag `enabled` is a
 * bigint 0/1 read back as a boolean, the upsert clears a service-side disable when saved enabled.
 *
 * Concurrency: every read-modify-write is one conditional statement, so companions sending
 * through the same target at once need no lock. recordFailure increments in its UPDATE and
 * returns the count it wrote (a concurrent failure waits for the row, then adds to the committed
 * count: the streak is exact); recordSuccess and disable change only a row that still needs it
 * (streak above zero, not yet disabled), so the first disable's time and reason stand.
 */
import type { Queryable } from '../core/postgres/connect.ts';
import { toRow } from './rows.ts';
import type { DbRow } from './rows.ts';
import type { IntegrationStore } from './store.ts';

export function createPostgresIntegrationStore(sql: Queryable): IntegrationStore {
  return {
    async find(tenantId, channel, target) {
      const [r] = await sql<DbRow[]>`SELECT * FROM tenant_integrations WHERE tenant_id = ${tenantId} AND channel = ${channel} AND target = ${target}`;
      return r && toRow(r);
    },
    async list(tenantId) {
      const rows = await sql<DbRow[]>`SELECT * FROM tenant_integrations WHERE tenant_id = ${tenantId} ORDER BY channel, target`;
      return rows.map(toRow);
    },
    async save(row) {
      // The existing row's columns are qualified with the table's name (PostgreSQL's upsert
      // sees both it and `excluded`).
      await sql`INSERT INTO tenant_integrations (tenant_id, channel, target, enabled, config, secret_ref, created_at, updated_at)
        VALUES (${row.tenantId}, ${row.channel}, ${row.target}, ${row.enabled ? 1 : 0}, ${row.config}, ${row.secretRef}, ${row.at}, ${row.at})
        ON CONFLICT (tenant_id, channel, target) DO UPDATE SET enabled = excluded.enabled, config = excluded.config,
          secret_ref = excluded.secret_ref, updated_at = excluded.updated_at,
          disabled_at = CASE WHEN excluded.enabled = 1 THEN NULL ELSE tenant_integrations.disabled_at END,
          disabled_reason = CASE WHEN excluded.enabled = 1 THEN NULL ELSE tenant_integrations.disabled_reason END,
          consecutive_failures = CASE WHEN excluded.enabled = 1 THEN 0 ELSE tenant_integrations.consecutive_failures END,
          failing_since = CASE WHEN excluded.enabled = 1 THEN NULL ELSE tenant_integrations.failing_since END`;
    },
    async recordSuccess(tenantId, channel, target) {
      await sql`UPDATE tenant_integrations SET consecutive_failures = 0, failing_since = NULL
        WHERE tenant_id = ${tenantId} AND channel = ${channel} AND target = ${target} AND consecutive_failures > 0`;
    },
    async recordFailure(tenantId, channel, target, at) {
      const [r] = await sql<{ consecutive_failures: number; failing_since: string }[]>`UPDATE tenant_integrations
        SET consecutive_failures = consecutive_failures + 1, failing_since = coalesce(failing_since, ${at})
        WHERE tenant_id = ${tenantId} AND channel = ${channel} AND target = ${target} RETURNING consecutive_failures, failing_since`;
      return { consecutiveFailures: r?.consecutive_failures ?? 0, failingSince: r?.failing_since ?? at };
    },
    async disable(tenantId, channel, target, at, reason) {
      await sql`UPDATE tenant_integrations SET disabled_at = ${at}, disabled_reason = ${reason}
        WHERE tenant_id = ${tenantId} AND channel = ${channel} AND target = ${target} AND disabled_at IS NULL`;
    },
  };
}
