/** SQLite implementation of IntegrationStore (migration 0006); statements are prepared once. */
import type { Sync } from '../core/async-store.ts';
import type { Db } from '../core/db.ts';
import { toRow } from './rows.ts';
import type { DbRow } from './rows.ts';
import type { IntegrationStore } from './store.ts';

export function createSqliteIntegrationStore(db: Db): Sync<IntegrationStore> {
  const find = db.prepare<[string, string, string], DbRow>('SELECT * FROM tenant_integrations WHERE tenant_id = ? AND channel = ? AND target = ?');
  const list = db.prepare<[string], DbRow>('SELECT * FROM tenant_integrations WHERE tenant_id = ? ORDER BY channel, target');
  const save = db.prepare(`INSERT INTO tenant_integrations (tenant_id, channel, target, enabled, config, secret_ref, created_at, updated_at)
    VALUES (@tenantId, @channel, @target, @enabled, @config, @secretRef, @at, @at)
    ON CONFLICT (tenant_id, channel, target) DO UPDATE SET enabled = excluded.enabled, config = excluded.config,
      secret_ref = excluded.secret_ref, updated_at = excluded.updated_at,
      disabled_at = CASE WHEN excluded.enabled = 1 THEN NULL ELSE disabled_at END,
      disabled_reason = CASE WHEN excluded.enabled = 1 THEN NULL ELSE disabled_reason END,
      consecutive_failures = CASE WHEN excluded.enabled = 1 THEN 0 ELSE consecutive_failures END,
      failing_since = CASE WHEN excluded.enabled = 1 THEN NULL ELSE failing_since END`);
  const success = db.prepare(`UPDATE tenant_integrations SET consecutive_failures = 0, failing_since = NULL
    WHERE tenant_id = ? AND channel = ? AND target = ? AND consecutive_failures > 0`);
  const failure = db.prepare<{ tenantId: string; channel: string; target: string; at: string }, { consecutive_failures: number; failing_since: string }>(
    `UPDATE tenant_integrations SET consecutive_failures = consecutive_failures + 1, failing_since = coalesce(failing_since, @at)
     WHERE tenant_id = @tenantId AND channel = @channel AND target = @target RETURNING consecutive_failures, failing_since`,
  );
  const disable = db.prepare(`UPDATE tenant_integrations SET disabled_at = ?, disabled_reason = ?
    WHERE tenant_id = ? AND channel = ? AND target = ? AND disabled_at IS NULL`);

  return {
    find(tenantId, channel, target) {
      const r = find.get(tenantId, channel, target);
      return r && toRow(r);
    },
    list: (tenantId) => list.all(tenantId).map(toRow),
    save(row) {
      save.run({ ...row, enabled: row.enabled ? 1 : 0 });
    },
    recordSuccess(tenantId, channel, target) {
      success.run(tenantId, channel, target);
    },
    recordFailure(tenantId, channel, target, at) {
      const r = failure.get({ tenantId, channel, target, at });
      return { consecutiveFailures: r?.consecutive_failures ?? 0, failingSince: r?.failing_since ?? at };
    },
    disable(tenantId, channel, target, at, reason) {
      disable.run(at, reason, tenantId, channel, target);
    },
  };
}
