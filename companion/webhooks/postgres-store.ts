/**
 * PostgreSQL implementation of WebhookStore (tables tenant_integrations, webhook_deliveries,
 * webhook_signing_keys; migrations/postgres/0006 and 0015). Same results as the SQLite store.
 *
 * Where the SQL differs, and why:
 * - Subscriptions are read from the integration's JSON config text in SQL, as on SQLite, with
 *   jsonb functions for its json_each: the config column is text (the schema is shared), so it
 *   is cast to jsonb in the query. A threshold comes back as float8, a JS number as from
 *   SQLite's json_each (the schema's thresholds are integers up to 1e12, exact in a double).
 * - A list of statuses is bound as one text[] parameter (`status = ANY(...)`) where SQLite binds
 *   one JSON array for json_each or splices placeholders; an empty list filters nothing in
 *   listDeliveries and matches nothing in deliveriesInRange, as on SQLite.
 * - Rows are returned as plain arrays of plain objects (the driver's result carries extra
 *   properties); bigint columns (attempt_count, run_at, lease_expires_at) arrive as numbers.
 *
 * Concurrency: insertDelivery is one ON CONFLICT DO NOTHING statement, so two companions
 * enqueueing the same event for a target create one delivery and exactly one of them is told
 * true. retireCurrentKey and addSigningKey are single statements; a rotation (retire then add)
 * is kept whole by the caller's transaction, and two rotations of one target at once are
 * serialised by that caller (the integration's upsert locks its row first), not here.
 *
 * Signing keys are sealed with the store's cipher (core/secrets/envelope.ts), bound to their
 * row id, which is drawn from the identity's sequence before the insert (nextval never hands
 * one value out twice, so two companions never bind two keys to one id). A reseal updates a
 * row only where it still holds the value read, so two companions resealing at once re-seal
 * each key once.
 */
import { batchReads } from '../core/postgres/batch-reads.ts';
import type { TenantPrefetch } from '../core/postgres/batch-reads.ts';
import type { Queryable } from '../core/postgres/connect.ts';
import { SealedSecretError, noStoreKey } from '../core/secrets/envelope.ts';
import type { StoreCipher } from '../core/secrets/envelope.ts';
import { openStoredKey } from './sealed-keys.ts';
import type { StoredKey } from './sealed-keys.ts';
import { DERIVED_KEY, signingKeyBinding } from './store.ts';
import type { DeliveryRow, DeliveryStatus, ResealScope, WebhookStore } from './store.ts';

/** Keys re-sealed per transaction. */
const RESEAL_BATCH = 500;

const STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed', 'dead'];

/** OID of text: a list of statuses binds as one text[] parameter (an empty list too). */
const TEXT = 25;
const statusArray = (sql: Queryable, statuses: readonly DeliveryStatus[]) => sql.array([...statuses], TEXT);

/** An enabled webhook target of a tenant and the events it subscribes to. */
interface Subscription {
  target: string;
  events: string[];
}

const subscriptionsKey = (tenantId: string) => `webhook subscriptions\n${tenantId}`;

/**
 * A seal batch reads the tenant's webhook targets with its lock (core/postgres/batch-reads.ts):
 * every enabled target with its events, in one read whichever events the seals ask about; the
 * same targets, in the same order, as subscribedTargets' own query selects per event.
 */
export const prefetchSubscriptions: TenantPrefetch = (sql, tenantId, reads) => {
  const query = sql<{ target: string; events: unknown }[]>`SELECT i.target, i.config::jsonb -> 'events' AS events FROM tenant_integrations i
    WHERE i.tenant_id = ${tenantId} AND i.channel = 'webhook' AND i.enabled = 1
    ORDER BY i.target`;
  query.execute();
  const subscriptions = Promise.resolve(query).then((rows) =>
    rows.map((r): Subscription => ({ target: r.target, events: Array.isArray(r.events) ? r.events.filter((e): e is string => typeof e === 'string') : [] })),
  );
  reads.put(subscriptionsKey(tenantId), subscriptions, 'fresh');
};

export function createPostgresWebhookStore(sql: Queryable, cipher?: StoreCipher): WebhookStore {
  return {
    async subscribedTargets(tenantId, event) {
      const ahead = batchReads(sql)?.get<Subscription[]>(subscriptionsKey(tenantId));
      if (ahead) return (await ahead).filter((s) => s.events.includes(event)).map((s) => s.target);
      const rows = await sql<{ target: string }[]>`SELECT i.target FROM tenant_integrations i
        WHERE i.tenant_id = ${tenantId} AND i.channel = 'webhook' AND i.enabled = 1
          AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(i.config::jsonb -> 'events') e (value) WHERE e.value = ${event})
        ORDER BY i.target`;
      return rows.map((r) => r.target);
    },
    async crossedThresholds(tenantId, before, after) {
      const rows = await sql<{ target: string; threshold: number }[]>`SELECT i.target, t.threshold
        FROM tenant_integrations i
        CROSS JOIN LATERAL (SELECT value::float8 AS threshold FROM jsonb_array_elements(i.config::jsonb -> 'meter_thresholds')) t
        WHERE i.tenant_id = ${tenantId} AND i.channel = 'webhook' AND i.enabled = 1
          AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(i.config::jsonb -> 'events') e (value) WHERE e.value = 'meter.threshold')
          AND t.threshold > ${before} AND t.threshold <= ${after}
        ORDER BY t.threshold, i.target`;
      return rows.map((r) => ({ target: r.target, threshold: r.threshold }));
    },
    async insertDelivery(row) {
      const r = await sql`INSERT INTO webhook_deliveries (id, tenant_id, target, event, event_key, body, status, run_at, created_at)
        VALUES (${row.id}, ${row.tenantId}, ${row.target}, ${row.event}, ${row.eventKey}, ${row.body}, 'pending', ${row.runAt}, ${row.createdAt})
        ON CONFLICT (tenant_id, target, event_key) DO NOTHING`;
      return r.count === 1;
    },
    async listDeliveries({ tenantId, target, statuses, limit, offset }) {
      // Newest first: ids are evt_<ULID>, so id order is creation order.
      const where =
        statuses && statuses.length > 0
          ? sql`AND status = ANY(${statusArray(sql, statuses)})`
          : sql``;
      const rows = await sql<DeliveryRow[]>`SELECT * FROM webhook_deliveries WHERE tenant_id = ${tenantId} AND target = ${target} ${where}
        ORDER BY id DESC LIMIT ${limit} OFFSET ${offset}`;
      return [...rows];
    },
    async countByStatus(tenantId, target) {
      const out = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<DeliveryStatus, number>;
      const rows = await sql<{ status: DeliveryStatus; n: number }[]>`SELECT status, count(*) AS n FROM webhook_deliveries
        WHERE tenant_id = ${tenantId} AND target = ${target} GROUP BY status`;
      for (const r of rows) out[r.status] = r.n;
      return out;
    },
    async deliveriesInRange(tenantId, target, from, to, statuses) {
      const rows = await sql<{ id: string }[]>`SELECT id FROM webhook_deliveries
        WHERE tenant_id = ${tenantId} AND target = ${target} AND created_at >= ${from} AND created_at < ${to} AND lease_owner IS NULL
          AND status = ANY(${statusArray(sql, statuses)})
        ORDER BY id`;
      return rows.map((r) => r.id);
    },
    async findDelivery(tenantId, target, id) {
      const [r] = await sql<DeliveryRow[]>`SELECT * FROM webhook_deliveries WHERE tenant_id = ${tenantId} AND target = ${target} AND id = ${id}`;
      return r;
    },
    async addSigningKey(tenantId, target, key, at) {
      if (!cipher) throw noStoreKey('a new webhook signing key');
      if (!DERIVED_KEY.test(key)) throw new TypeError('expected a derived signing key: 64 lowercase hex digits');
      const [next] = await sql<{ id: number }[]>`SELECT nextval(pg_get_serial_sequence('webhook_signing_keys', 'id'))::float8 AS id`;
      const id = next!.id;
      const sealed = cipher.seal(key, signingKeyBinding(tenantId, id));
      await sql`INSERT INTO webhook_signing_keys (id, tenant_id, target, key, kek_id, created_at) VALUES (${id}, ${tenantId}, ${target}, ${sealed.sealed}, ${sealed.kekId}, ${at})`;
    },
    async retireCurrentKey(tenantId, target, retiresAt) {
      await sql`UPDATE webhook_signing_keys SET retires_at = ${retiresAt} WHERE tenant_id = ${tenantId} AND target = ${target} AND retires_at IS NULL`;
    },
    async activeKeys(tenantId, target, at) {
      const rows = await sql<(StoredKey & { created_at: string; retires_at: string | null })[]>`SELECT id::float8 AS id, tenant_id, key, kek_id, created_at, retires_at
        FROM webhook_signing_keys
        WHERE tenant_id = ${tenantId} AND target = ${target} AND (retires_at IS NULL OR retires_at > ${at}) ORDER BY id DESC`;
      return rows.map((r) => ({ key: openStoredKey(cipher, r), createdAt: r.created_at, retiresAt: r.retires_at }));
    },
    async sealedKeyCounts() {
      const rows = await sql<{ kek_id: string | null; n: number }[]>`SELECT kek_id, count(*)::float8 AS n FROM webhook_signing_keys GROUP BY kek_id ORDER BY kek_id`;
      return rows.map((r) => ({ kekId: r.kek_id, count: r.n }));
    },
    async resealSigningKeys(scope: ResealScope) {
      if (!cipher) throw noStoreKey('resealing webhook signing keys');
      let resealed = 0;
      for (let after = 0; ; ) {
        const rows = await sql<StoredKey[]>`SELECT id::float8 AS id, tenant_id, key, kek_id FROM webhook_signing_keys
          WHERE ${scope === 'clear' ? sql`kek_id IS NULL` : sql`(kek_id IS NULL OR kek_id <> ${cipher.current.id})`} AND id > ${after}
          ORDER BY id LIMIT ${RESEAL_BATCH}`;
        if (rows.length === 0) break;
        for (const r of rows) {
          const clear = r.kek_id === null ? r.key : openStoredKey(cipher, r);
          if (!DERIVED_KEY.test(clear)) throw new SealedSecretError('unreadable', `webhook_signing_keys.key of row ${r.id} is not a derived signing key`);
          const sealed = cipher.seal(clear, signingKeyBinding(r.tenant_id, r.id));
          const done = await sql`UPDATE webhook_signing_keys SET key = ${sealed.sealed}, kek_id = ${sealed.kekId}
            WHERE id = ${r.id} AND key = ${r.key} AND kek_id IS NOT DISTINCT FROM ${r.kek_id}`;
          resealed += done.count;
        }
        after = rows.at(-1)!.id;
      }
      return resealed;
    },
  };
}
