/**
 * PostgreSQL implementation of UsageStore (table usage_counters, migrations/postgres/0002).
 *
 * In a seal batch's transaction (core/postgres/batch-reads.ts, write-behind.ts) the counters are
 * read with the tenant's lock and head, and the batch's one addition per tenant is written
 * behind, with the batch's other rows just before its COMMIT, instead of a round trip of its
 * own. The totals `add` answers there are the ones this transaction read plus what it added:
 * only seals move a tenant's counters (metering/participant.ts), and they hold the tenant's row
 * lock from its head read to their commit, so no other transaction moves them in between. The
 * upsert itself adds to whatever is stored, so the counters stay exact either way.
 */
import { batchReads } from '../core/postgres/batch-reads.ts';
import type { TenantPrefetch } from '../core/postgres/batch-reads.ts';
import type { PgTransaction, Queryable } from '../core/postgres/connect.ts';
import { writeBehind } from '../core/postgres/write-behind.ts';
import type { UsageTotals } from '../evidence/participants.ts';
import type { UsageStore } from './store.ts';

interface CounterRow {
  actions_used: number;
  credits_used: number;
}

const totals = (r: CounterRow | undefined): UsageTotals => ({ actionsUsed: r?.actions_used ?? 0, creditsUsed: r?.credits_used ?? 0 });

const readKey = (tenantId: string) => `usage\n${tenantId}`;

const readUsage = (sql: Queryable, tenantId: string) =>
  sql<CounterRow[]>`SELECT actions_used, credits_used FROM usage_counters WHERE tenant_id = ${tenantId}`;

/** A seal batch reads the tenant's counters with its lock (core/postgres/batch-reads.ts). */
export const prefetchUsage: TenantPrefetch = (sql, tenantId, reads) => {
  const query = readUsage(sql, tenantId);
  query.execute();
  reads.put(readKey(tenantId), Promise.resolve(query).then(([r]) => totals(r)), 'fresh');
};

/**
 * A batch's additions in one statement, one row per tenant (ON CONFLICT DO UPDATE may not touch
 * a row twice in one statement, so additions to one tenant are summed first).
 */
function addAll(sql: PgTransaction, rows: unknown[][]) {
  const byTenant = new Map<string, { actions: number; credits: number; at: string }>();
  for (const [tenantId, actions, credits, at] of rows as [string, number, number, string][]) {
    const t = byTenant.get(tenantId);
    if (t) {
      t.actions += actions;
      t.credits += credits;
      t.at = at;
    } else byTenant.set(tenantId, { actions, credits, at });
  }
  const ids = [...byTenant.keys()];
  const list = [...byTenant.values()];
  return sql`INSERT INTO usage_counters (tenant_id, actions_used, credits_used, updated_at)
    SELECT tenant_id, actions::bigint, credits::bigint, at
      FROM unnest(${sql.array(ids, 25)}::text[], ${sql.array(list.map((t) => String(t.actions)), 25)}::text[],
                  ${sql.array(list.map((t) => String(t.credits)), 25)}::text[], ${sql.array(list.map((t) => t.at), 25)}::text[])
        AS v(tenant_id, actions, credits, at)
    ON CONFLICT (tenant_id) DO UPDATE SET actions_used = usage_counters.actions_used + excluded.actions_used,
      credits_used = usage_counters.credits_used + excluded.credits_used, updated_at = excluded.updated_at`;
}

export function createPostgresUsageStore(sql: Queryable): UsageStore {
  /** In a batch written behind: each tenant's totals as this transaction read and moved them. */
  const known = new Map<string, UsageTotals>();
  return {
    async usage(tenantId) {
      const mine = writeBehind(sql) && known.get(tenantId);
      if (mine) return mine;
      const ahead = batchReads(sql)?.get<UsageTotals>(readKey(tenantId));
      const t = ahead ? await ahead : totals((await readUsage(sql, tenantId))[0]);
      if (writeBehind(sql)) known.set(tenantId, t);
      return t;
    },
    async add(tenantId, actions, credits, at) {
      const behind = writeBehind(sql);
      const read = known.get(tenantId);
      if (read && behind?.add('usage_counters', addAll, [tenantId, actions, credits, at])) {
        const after = { actionsUsed: read.actionsUsed + actions, creditsUsed: read.creditsUsed + credits };
        known.set(tenantId, after);
        return after;
      }
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
