/**
 * SQLite implementation of WebhookStore (migrations 0006 and 0020); statements are prepared
 * once. Signing keys are sealed with the store's cipher (core/secrets/envelope.ts); a store
 * opened without one (the sealing thread's, which never touches keys) refuses key calls.
 */
import type { Sync } from '../core/async-store.ts';
import type { Db } from '../core/db.ts';
import { SealedSecretError, noStoreKey } from '../core/secrets/envelope.ts';
import type { StoreCipher } from '../core/secrets/envelope.ts';
import { openStoredKey } from './sealed-keys.ts';
import type { StoredKey } from './sealed-keys.ts';
import { DERIVED_KEY, signingKeyBinding } from './store.ts';
import type { DeliveryRow, DeliveryStatus, ResealScope, SigningKeyRow, WebhookStore } from './store.ts';

/** Keys re-sealed per transaction. */
const RESEAL_BATCH = 500;

const STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed', 'dead'];

export function createSqliteWebhookStore(db: Db, cipher?: StoreCipher): Sync<WebhookStore> {
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
  // The row id is taken before the insert, since the sealed value is bound to it. Inside the
  // write transaction below no other connection can take the same id (and the key would refuse it).
  const nextKeyId = db.prepare<[], { id: number }>('SELECT coalesce(max(id), 0) + 1 AS id FROM webhook_signing_keys');
  const addKey = db.prepare('INSERT INTO webhook_signing_keys (id, tenant_id, target, key, kek_id, created_at) VALUES (?, ?, ?, ?, ?, ?)');
  const retire = db.prepare('UPDATE webhook_signing_keys SET retires_at = ? WHERE tenant_id = ? AND target = ? AND retires_at IS NULL');
  const active = db.prepare<[string, string, string], StoredKey & { created_at: string; retires_at: string | null }>(
    `SELECT id, tenant_id, key, kek_id, created_at, retires_at FROM webhook_signing_keys
     WHERE tenant_id = ? AND target = ? AND (retires_at IS NULL OR retires_at > ?) ORDER BY id DESC`,
  );
  const kekCounts = db.prepare<[], { kek_id: string | null; n: number }>('SELECT kek_id, count(*) AS n FROM webhook_signing_keys GROUP BY kek_id ORDER BY kek_id');
  const clearBatch = db.prepare<[number, number], StoredKey>('SELECT id, tenant_id, key, kek_id FROM webhook_signing_keys WHERE kek_id IS NULL AND id > ? ORDER BY id LIMIT ?');
  const staleBatch = db.prepare<[string, number, number], StoredKey>(
    'SELECT id, tenant_id, key, kek_id FROM webhook_signing_keys WHERE (kek_id IS NULL OR kek_id <> ?) AND id > ? ORDER BY id LIMIT ?',
  );
  // Only the value read is replaced: a key changed meanwhile is left to the next run.
  const reseal = db.prepare('UPDATE webhook_signing_keys SET key = ?, kek_id = ? WHERE id = ? AND key = ? AND kek_id IS ?');

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
      if (!cipher) throw noStoreKey('a new webhook signing key');
      if (!DERIVED_KEY.test(key)) throw new TypeError('expected a derived signing key: 64 lowercase hex digits');
      db.transaction(() => {
        const { id } = nextKeyId.get()!;
        const sealed = cipher.seal(key, signingKeyBinding(tenantId, id));
        addKey.run(id, tenantId, target, sealed.sealed, sealed.kekId, at);
      })();
    },
    retireCurrentKey(tenantId, target, retiresAt) {
      retire.run(retiresAt, tenantId, target);
    },
    activeKeys: (tenantId, target, at) =>
      active.all(tenantId, target, at).map((r): SigningKeyRow => ({ key: openStoredKey(cipher, r), createdAt: r.created_at, retiresAt: r.retires_at })),
    sealedKeyCounts: () => kekCounts.all().map((r) => ({ kekId: r.kek_id, count: r.n })),
    resealSigningKeys(scope: ResealScope) {
      if (!cipher) throw noStoreKey('resealing webhook signing keys');
      // A replaced value's old bytes are overwritten with zeros, not left in a free page
      // (sqlite.org/pragma.html#pragma_secure_delete); migration 0020 turned this on for its
      // table rebuild, and it goes back off once the keys are sealed.
      db.pragma('secure_delete = ON');
      let resealed = 0;
      try {
        for (let after = 0; ; ) {
          const rows = scope === 'clear' ? clearBatch.all(after, RESEAL_BATCH) : staleBatch.all(cipher.current.id, after, RESEAL_BATCH);
          if (rows.length === 0) break;
          db.transaction(() => {
            for (const r of rows) {
              const clear = r.kek_id === null ? r.key : openStoredKey(cipher, r);
              if (!DERIVED_KEY.test(clear)) throw new SealedSecretError('unreadable', `webhook_signing_keys.key of row ${r.id} is not a derived signing key`);
              const sealed = cipher.seal(clear, signingKeyBinding(r.tenant_id, r.id));
              resealed += reseal.run(sealed.sealed, sealed.kekId, r.id, r.key, r.kek_id).changes;
            }
          })();
          after = rows.at(-1)!.id;
        }
      } finally {
        db.pragma('secure_delete = OFF');
      }
      // The WAL still holds the pages as they were before: checkpoint them into the main file
      // and truncate it (sqlite.org/pragma.html#pragma_wal_checkpoint).
      if (resealed > 0 && !db.inTransaction) db.pragma('wal_checkpoint(TRUNCATE)');
      return resealed;
    },
  };
}
