/**
 * PostgreSQL implementation of RoutingStore (migrations/postgres/0009, job_ticks of 0006 and
 * route_send_receipts of 0020):
 * the statements of ./sqlite-store.ts, with these differences.
 *
 * - Every write is one statement whose condition decides it, so companions sharing the database
 *   cannot both win: insert and rememberSignature are INSERT ... ON CONFLICT DO NOTHING (a
 *   concurrent insert of the same key waits for the first to commit, then does nothing);
 *   retarget's ON CONFLICT DO UPDATE ... WHERE and the conditional UPDATEs of markPrepared and
 *   resolve are evaluated on the newest committed version of the row (READ COMMITTED re-checks
 *   a row a concurrent transaction changed), so a dispatch resolved meanwhile stays resolved.
 * - resolve reads the earlier decision with `resolution::jsonb ->> 'decision'` (SQLite:
 *   json_extract); both give NULL for a NULL resolution.
 * - bigint columns (run_at, attempt_count, lease_expires_at, the tick counts, count(*)) come
 *   back as numbers (core/postgres/connect.ts), as SQLite's INTEGER does.
 */
import type { Queryable } from '../core/postgres/connect.ts';
import { PRUNE_EVERY } from './store.ts';
import type { DispatchCounts, DispatchRow, NewDispatch, RoutingStore, TickRow } from './store.ts';

export function createPostgresRoutingStore(sql: Queryable): RoutingStore {
  const values = (row: NewDispatch) =>
    sql`(${row.id}, ${row.tenantId}, ${row.actionKey}, ${row.channel}, ${row.target}, ${row.body}, 'pending', ${row.runAt}, ${row.createdAt})`;

  return {
    async insert(row) {
      const r = await sql`INSERT INTO route_dispatches (id, tenant_id, action_key, channel, target, body, status, run_at, created_at)
        VALUES ${values(row)} ON CONFLICT (tenant_id, action_key) DO NOTHING`;
      return r.count === 1;
    },
    async retarget(row) {
      const r = await sql`INSERT INTO route_dispatches (id, tenant_id, action_key, channel, target, body, status, run_at, created_at)
        VALUES ${values(row)}
        ON CONFLICT (tenant_id, action_key) DO UPDATE SET channel = excluded.channel, target = excluded.target, body = excluded.body,
          status = 'pending', prepared_at = NULL, attempt_count = 0, run_at = excluded.run_at, lease_owner = NULL,
          lease_expires_at = NULL, last_error = NULL, last_attempt_at = NULL, completed_at = NULL
        WHERE route_dispatches.resolved_at IS NULL`;
      return r.count === 1;
    },
    async find(tenantId, key) {
      const [r] = await sql<DispatchRow[]>`SELECT * FROM route_dispatches WHERE tenant_id = ${tenantId} AND id = ${key}`;
      return r;
    },
    async findByAction(tenantId, actionKey) {
      const [r] = await sql<DispatchRow[]>`SELECT * FROM route_dispatches WHERE tenant_id = ${tenantId} AND action_key = ${actionKey}`;
      return r;
    },
    // Newest first: ids are dsp_<ULID>, so id order is creation order.
    async list({ tenantId, deadOnly, limit, offset }) {
      const rows = await sql<DispatchRow[]>`SELECT * FROM route_dispatches WHERE tenant_id = ${tenantId} ${deadOnly ? sql`AND status = 'dead'` : sql``}
        ORDER BY id DESC LIMIT ${limit} OFFSET ${offset}`;
      return [...rows];
    },
    async unprepared(tenantId, limit) {
      const rows = await sql<{ id: string }[]>`SELECT id FROM route_dispatches
        WHERE tenant_id = ${tenantId} AND status = 'pending' AND prepared_at IS NULL AND resolved_at IS NULL ORDER BY id LIMIT ${limit}`;
      return rows.map((r) => r.id);
    },
    async markPrepared(tenantId, key, at) {
      const r = await sql`UPDATE route_dispatches SET prepared_at = ${at}
        WHERE tenant_id = ${tenantId} AND id = ${key} AND status = 'pending' AND prepared_at IS NULL`;
      return r.count === 1;
    },
    async resolve(tenantId, actionKey, at, resolution) {
      const r = await sql`UPDATE route_dispatches SET resolved_at = ${at}, resolution = ${JSON.stringify(resolution)}
        WHERE tenant_id = ${tenantId} AND action_key = ${actionKey} AND (resolved_at IS NULL OR resolution::jsonb ->> 'decision' = 'escalated')`;
      return r.count === 1;
    },
    async countByTarget(tenantId, channel, target) {
      const rows = await sql<{ state: keyof DispatchCounts; n: number }[]>`SELECT
          CASE WHEN resolved_at IS NOT NULL THEN 'resolved' WHEN status = 'pending' AND prepared_at IS NOT NULL THEN 'prepared' ELSE status END AS state,
          count(*) AS n
        FROM route_dispatches WHERE tenant_id = ${tenantId} AND channel = ${channel} AND target = ${target} GROUP BY state`;
      const out: DispatchCounts = { pending: 0, prepared: 0, sent: 0, failed: 0, dead: 0, resolved: 0 };
      for (const r of rows) out[r.state] = r.n;
      return out;
    },
    async ticks(queue, limit) {
      const rows = await sql<TickRow[]>`SELECT worker, started_at, finished_at, claimed, succeeded, retrying, dead, lease_lost
        FROM job_ticks WHERE queue = ${queue} ORDER BY id DESC LIMIT ${limit}`;
      return [...rows];
    },
    async recordSendReceipts(receipts, keep) {
      for (const r of receipts) {
        const [row] = await sql<{ id: number }[]>`INSERT INTO route_send_receipts (tenant_id, worker, started_at, finished_at, claimed, succeeded, retrying, dead, lease_lost)
          VALUES (${r.tenantId}, ${r.worker}, ${r.startedAt}, ${r.finishedAt}, ${r.claimed}, ${r.succeeded}, ${r.retrying}, ${r.dead}, ${r.leaseLost}) RETURNING id`;
        if (row && row.id % PRUNE_EVERY === 0) {
          await sql`DELETE FROM route_send_receipts WHERE id IN (
            SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY tenant_id ORDER BY id DESC) AS n FROM route_send_receipts) ranked WHERE n > ${keep})`;
        }
      }
    },
    async tenantSendReceipts(tenantId, limit) {
      const rows = await sql<TickRow[]>`SELECT worker, started_at, finished_at, claimed, succeeded, retrying, dead, lease_lost
        FROM route_send_receipts WHERE tenant_id = ${tenantId} ORDER BY id DESC LIMIT ${limit}`;
      return [...rows];
    },
    async rememberSignature(tenantId, hash, at) {
      const r = await sql`INSERT INTO route_callback_signatures (tenant_id, signature_hash, received_at) VALUES (${tenantId}, ${hash}, ${at})
        ON CONFLICT DO NOTHING`;
      return r.count === 1;
    },
  };
}
