/** SQLite implementation of WebhookStore (migration 0006); statements are prepared once. */
import type { Sync } from '../core/async-store.ts';
import type { Db } from '../core/db.ts';
import type { DeliveryRow, DeliveryStatus, WebhookStore } from './store.ts';

const STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed', 'dead'];

export function createSqliteWebhookStore(db: Db): Sync<WebhookStore> {
  // Subscriptions are read straight from the integration's JSON config with json_each, so the
  // seal path pays one indexed lookup and no JSON parsing in JavaScript.
  const subscribed = db.prepare<[string, string], { target: string }>(
    `SELECT i.target FROM tenant_integrations i
     WHERE i.tenant_id = ? AND i.channel = 'webhook' AND i.enabled = 1
       AND EXISTS (SELECT 1 FROM json_each(i.config, '$.events') e WHERE e.value = ?)
     ORDER BY i.target`,
  );
  const crossed = db.prepare<[string, number, number], { target: string; threshold: number }>(
    `SELECT i.target, t.value AS threshold FROM tenant_integrations i, json_each(i.config, '$.meter_thresholds') t
     WHERE i.tenant_id = ? AND i.channel = 'webhook' AND i.enabled = 1
       AND EXISTS (SELECT 1 FROM json_each(i.config, '$.events') e WHERE e.value = 'meter.threshold')
       AND t.value > ? AND t.value <= ?
     ORDER BY t.value, i.target`,
  );
  const insert = db.prepare(`INSERT INTO webhook_deliveries (id, tenant_id, target, event, event_key, body, status, run_at, created_at)
    VALUES (@id, @tenantId, @target, @event, @eventKey, @body, 'pending', @runAt, @createdAt)
    ON CONFLICT (tenant_id, target, event_key) DO NOTHING`);
  const counts = db.prepare<[string, string], { status: DeliveryStatus; n: number }>(
    'SELECT status, count(*) AS n FROM webhook_deliveries WHERE tenant_id = ? AND target = ? GROUP BY status',
  );
  const inRange = db.prepare<[string, string, string, string, string], { id: string }>(
    `SELECT id FROM webhook_deliveries
     WHERE tenant_id = ? AND target = ? AND created_at >= ? AND created_at < ? AND lease_owner IS NULL
       AND status IN (SELECT value FROM json_each(?))
     ORDER BY id`,
  );
  const findOne = db.prepare<[string, string, string], DeliveryRow>('SELECT * FROM webhook_deliveries WHERE tenant_id = ? AND target = ? AND id = ?');
  const addKey = db.prepare('INSERT INTO webhook_signing_keys (tenant_id, target, key, created_at) VALUES (?, ?, ?, ?)');
  const retire = db.prepare('UPDATE webhook_signing_keys SET retires_at = ? WHERE tenant_id = ? AND target = ? AND retires_at IS NULL');
  const active = db.prepare<[string, string, string], { key: string; created_at: string; retires_at: string | null }>(
    `SELECT key, created_at, retires_at FROM webhook_signing_keys
     WHERE tenant_id = ? AND target = ? AND (retires_at IS NULL OR retires_at > ?) ORDER BY id DESC`,
  );

  return {
    subscribedTargets: (tenantId, event) => subscribed.all(tenantId, event).map((r) => r.target),
    crossedThresholds: (tenantId, before, after) => crossed.all(tenantId, before, after),
    insertDelivery: (row) => insert.run(row).changes === 1,
    listDeliveries({ tenantId, target, statuses, limit, offset }) {
      // Newest first: ids are evt_<ULID>, so id order is creation order.
      const where = statuses && statuses.length > 0 ? `AND status IN (${statuses.map(() => '?').join(', ')})` : '';
      return db
        .prepare<unknown[], DeliveryRow>(`SELECT * FROM webhook_deliveries WHERE tenant_id = ? AND target = ? ${where} ORDER BY id DESC LIMIT ? OFFSET ?`)
        .all(tenantId, target, ...(statuses ?? []), limit, offset);
    },
    countByStatus(tenantId, target) {
      const out = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<DeliveryStatus, number>;
      for (const r of counts.all(tenantId, target)) out[r.status] = r.n;
      return out;
    },
    deliveriesInRange: (tenantId, target, from, to, statuses) => inRange.all(tenantId, target, from, to, JSON.stringify(statuses)).map((r) => r.id),
    findDelivery: (tenantId, target, id) => findOne.get(tenantId, target, id),
    addSigningKey(tenantId, target, key, at) {
      addKey.run(tenantId, target, key, at);
    },
    retireCurrentKey(tenantId, target, retiresAt) {
      retire.run(retiresAt, tenantId, target);
    },
    activeKeys: (tenantId, target, at) => active.all(tenantId, target, at).map((r) => ({ key: r.key, createdAt: r.created_at, retiresAt: r.retires_at })),
  };
}
