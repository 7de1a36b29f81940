/** SQLite implementation of RoutingStore (migrations 0009 and 0020); statements are prepared once. */
import type { Sync } from '../core/async-store.ts';
import type { Db } from '../core/db.ts';
import { PRUNE_EVERY } from './store.ts';
import type { DispatchCounts, DispatchRow, RoutingStore, TickRow } from './store.ts';

export function createSqliteRoutingStore(db: Db): Sync<RoutingStore> {
  const insert = db.prepare(`INSERT INTO route_dispatches (id, tenant_id, action_key, channel, target, body, status, run_at, created_at)
    VALUES (@id, @tenantId, @actionKey, @channel, @target, @body, 'pending', @runAt, @createdAt)
    ON CONFLICT (tenant_id, action_key) DO NOTHING`);
  const retarget = db.prepare(`INSERT INTO route_dispatches (id, tenant_id, action_key, channel, target, body, status, run_at, created_at)
    VALUES (@id, @tenantId, @actionKey, @channel, @target, @body, 'pending', @runAt, @createdAt)
    ON CONFLICT (tenant_id, action_key) DO UPDATE SET channel = excluded.channel, target = excluded.target, body = excluded.body,
      status = 'pending', prepared_at = NULL, attempt_count = 0, run_at = excluded.run_at, lease_owner = NULL,
      lease_expires_at = NULL, last_error = NULL, last_attempt_at = NULL, completed_at = NULL
    WHERE route_dispatches.resolved_at IS NULL`);
  const find = db.prepare<[string, string], DispatchRow>('SELECT * FROM route_dispatches WHERE tenant_id = ? AND id = ?');
  const byAction = db.prepare<[string, string], DispatchRow>('SELECT * FROM route_dispatches WHERE tenant_id = ? AND action_key = ?');
  const list = db.prepare<{ tenantId: string; dead: number; limit: number; offset: number }, DispatchRow>(
    `SELECT * FROM route_dispatches WHERE tenant_id = @tenantId AND (@dead = 0 OR status = 'dead')
     ORDER BY id DESC LIMIT @limit OFFSET @offset`,
  );
  const unprepared = db.prepare<[string, number], { id: string }>(
    `SELECT id FROM route_dispatches WHERE tenant_id = ? AND status = 'pending' AND prepared_at IS NULL AND resolved_at IS NULL
     ORDER BY id LIMIT ?`,
  );
  const prepare = db.prepare(`UPDATE route_dispatches SET prepared_at = ?
    WHERE tenant_id = ? AND id = ? AND status = 'pending' AND prepared_at IS NULL`);
  const resolve = db.prepare(`UPDATE route_dispatches SET resolved_at = ?, resolution = ?
    WHERE tenant_id = ? AND action_key = ? AND (resolved_at IS NULL OR json_extract(resolution, '$.decision') = 'escalated')`);
  const counts = db.prepare<[string, string, string], { state: keyof DispatchCounts; n: number }>(
    `SELECT CASE WHEN resolved_at IS NOT NULL THEN 'resolved' WHEN status = 'pending' AND prepared_at IS NOT NULL THEN 'prepared' ELSE status END AS state,
       count(*) AS n
     FROM route_dispatches WHERE tenant_id = ? AND channel = ? AND target = ? GROUP BY state`,
  );
  const ticks = db.prepare<[string, number], TickRow>(
    'SELECT worker, started_at, finished_at, claimed, succeeded, retrying, dead, lease_lost FROM job_ticks WHERE queue = ? ORDER BY id DESC LIMIT ?',
  );
  const addReceipt = db.prepare(`INSERT INTO route_send_receipts (tenant_id, worker, started_at, finished_at, claimed, succeeded, retrying, dead, lease_lost)
    VALUES (@tenantId, @worker, @startedAt, @finishedAt, @claimed, @succeeded, @retrying, @dead, @leaseLost)`);
  // Every tenant's receipts beyond its newest `keep`, pruned together now and then.
  const pruneReceipts = db.prepare(`DELETE FROM route_send_receipts WHERE id IN (
    SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY tenant_id ORDER BY id DESC) AS n FROM route_send_receipts) WHERE n > ?)`);
  const tenantReceipts = db.prepare<[string, number], TickRow>(
    'SELECT worker, started_at, finished_at, claimed, succeeded, retrying, dead, lease_lost FROM route_send_receipts WHERE tenant_id = ? ORDER BY id DESC LIMIT ?',
  );
  const remember = db.prepare(`INSERT INTO route_callback_signatures (tenant_id, signature_hash, received_at) VALUES (?, ?, ?)
    ON CONFLICT DO NOTHING`);

  return {
    insert: (row) => insert.run(row).changes === 1,
    retarget: (row) => retarget.run(row).changes === 1,
    find: (tenantId, key) => find.get(tenantId, key),
    findByAction: (tenantId, actionKey) => byAction.get(tenantId, actionKey),
    // Newest first: ids are dsp_<ULID>, so id order is creation order.
    list: ({ tenantId, deadOnly, limit, offset }) => list.all({ tenantId, dead: deadOnly ? 1 : 0, limit, offset }),
    unprepared: (tenantId, limit) => unprepared.all(tenantId, limit).map((r) => r.id),
    markPrepared: (tenantId, key, at) => prepare.run(at, tenantId, key).changes === 1,
    resolve: (tenantId, actionKey, at, resolution) => resolve.run(at, JSON.stringify(resolution), tenantId, actionKey).changes === 1,
    countByTarget(tenantId, channel, target) {
      const out: DispatchCounts = { pending: 0, prepared: 0, sent: 0, failed: 0, dead: 0, resolved: 0 };
      for (const r of counts.all(tenantId, channel, target)) out[r.state] = r.n;
      return out;
    },
    ticks: (queue, limit) => ticks.all(queue, limit),
    recordSendReceipts(receipts, keep) {
      for (const r of receipts) {
        const id = Number(addReceipt.run(r).lastInsertRowid);
        if (id % PRUNE_EVERY === 0) pruneReceipts.run(keep);
      }
    },
    tenantSendReceipts: (tenantId, limit) => tenantReceipts.all(tenantId, limit),
    rememberSignature: (tenantId, hash, at) => remember.run(tenantId, hash, at).changes === 1,
  };
}
