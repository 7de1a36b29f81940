/** PostgreSQL implementation of UsageStore (table usage_counters, migrations/postgres/0002). */
import type { Queryable } from '../core/postgres/connect.ts';
import type { UsageTotals } from '../evidence/participants.ts';
import type { UsageStore } from './store.ts';

interface CounterRow {
  actions_used: number;
  credits_used: number;
}

const totals = (r: CounterRow | undefined): UsageTotals => ({ actionsUsed: r?.actions_used ?? 0, creditsUsed: r?.credits_used ?? 0 });

export function createPostgresUsageStore(sql: Queryable): UsageStore {
  return {
    async usage(tenantId) {
      const [r] = await sql<CounterRow[]>`SELECT actions_used, credits_used FROM usage_counters WHERE tenant_id = ${tenantId}`;
      return totals(r);
    },
    async add(tenantId, actions, credits, at) {
      // One statement: concurrent seals of one tenant on different companions add exactly.
      const [r] = await sql<CounterRow[]>`INSERT INTO usage_counters (tenant_id, actions_used, credits_used, updated_at)
        VALUES (${tenantId}, ${actions}, ${credits}, ${at})
        ON CONFLICT (tenant_id) DO UPDATE SET actions_used = usage_counters.actions_used + excluded.actions_used,
          credits_used = usage_counters.credits_used + excluded.credits_used, updated_at = excluded.updated_at
        RETURNING actions_used, credits_used`;
      return totals(r);
    },
  };
}
