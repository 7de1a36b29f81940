/** SQLite implementation of UsageStore (table usage_counters, migration 0002). */
import type { Sync } from '../core/async-store.ts';
import type { Db } from '../core/db.ts';
import type { UsageStore } from './store.ts';

export function createSqliteUsageStore(db: Db): Sync<UsageStore> {
  const read = db.prepare<[string], { actions_used: number; credits_used: number }>(
    'SELECT actions_used, credits_used FROM usage_counters WHERE tenant_id = ?',
  );
  const add = db.prepare<[string, number, number, string], { actions_used: number; credits_used: number }>(`INSERT INTO usage_counters (tenant_id, actions_used, credits_used, updated_at)
    VALUES (?, ?, ?, ?)
    ON CONFLICT (tenant_id) DO UPDATE SET actions_used = actions_used + excluded.actions_used,
      credits_used = credits_used + excluded.credits_used, updated_at = excluded.updated_at
    RETURNING actions_used, credits_used`);
  return {
    usage(tenantId) {
      const r = read.get(tenantId);
      return { actionsUsed: r?.actions_used ?? 0, creditsUsed: r?.credits_used ?? 0 };
    },
    add(tenantId, actions, credits, at) {
      const r = add.get(tenantId, actions, credits, at)!;
      return { actionsUsed: r.actions_used, creditsUsed: r.credits_used };
    },
  };
}
