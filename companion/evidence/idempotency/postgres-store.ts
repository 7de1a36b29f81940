/**
 * PostgreSQL implementation of IdempotencyStore (table idempotency_keys, migrations/postgres/0002
 * and 0011). Same behaviour as the SQLite store: keys stored as their SHA-256, a read sees only
 * keys saved within the window, a save replaces any row under the same key (SQLite's INSERT OR
 * REPLACE is ON CONFLICT DO UPDATE of every column here), and expired keys are purged in
 * bounded batches by a periodic worker (./expiry.ts), never inside a seal.
 *
 * Where the SQL differs, and why: the purge takes its batch with FOR UPDATE SKIP LOCKED. Every
 * companion on the database runs the worker; two purges picking the same expired rows would
 * otherwise wait for each other's commit, and could deadlock when each has deleted a row the
 * other wants next. Skipping rows another purge holds is harmless: an expired key is never
 * replayed, so which purge deletes it, and when, changes no answer.
 *
 * Concurrency of the save itself: the upsert is one statement, so two saves under one key never
 * fail on the primary key; the later one waits for the earlier's commit and then replaces it
 * (last writer wins, as on SQLite). Two seals racing on one key are kept apart by the evidence
 * store's per-tenant lock (../postgres-store.ts logHead), which the sealer takes before it looks
 * the key up.
 */
import { sha256Hex } from '../../../shared/hash.ts';
import type { PgTransaction, Queryable } from '../../core/postgres/connect.ts';
import { writeBehind } from '../../core/postgres/write-behind.ts';
import type { IdempotencyStore } from './store.ts';

interface KeyRow {
  request_hash: string;
  action_key: string;
  status: number;
  response: string;
}

/**
 * A seal batch's keys in one statement, written behind (core/postgres/write-behind.ts); the last
 * save of a key wins, as it would statement by statement (ON CONFLICT DO UPDATE may not touch a
 * row twice in one statement, so earlier saves of the same key are dropped first).
 */
function saveAll(sql: PgTransaction, rows: unknown[][]) {
  const byKey = new Map<string, unknown[]>();
  for (const row of rows) byKey.set(`${String(row[0])}\n${String(row[1])}\n${String(row[2])}`, row);
  const list = [...byKey.values()];
  const column = (i: number) => sql.array(list.map((row) => String(row[i])), 25);
  return sql`INSERT INTO idempotency_keys (tenant_id, scope, key_hash, request_hash, action_key, status, response, created_at)
    SELECT tenant_id, scope, key_hash, request_hash, action_key, status::bigint, response, created_at
      FROM unnest(${column(0)}::text[], ${column(1)}::text[], ${column(2)}::text[], ${column(3)}::text[], ${column(4)}::text[],
                  ${column(5)}::text[], ${column(6)}::text[], ${column(7)}::text[])
        AS v(tenant_id, scope, key_hash, request_hash, action_key, status, response, created_at)
    ON CONFLICT (tenant_id, scope, key_hash) DO UPDATE SET request_hash = excluded.request_hash,
      action_key = excluded.action_key, status = excluded.status, response = excluded.response, created_at = excluded.created_at`;
}

export function createPostgresIdempotencyStore(sql: Queryable): IdempotencyStore {
  return {
    async find(tenantId, scope, key, window) {
      const [r] = await sql<KeyRow[]>`SELECT request_hash, action_key, status, response FROM idempotency_keys
        WHERE tenant_id = ${tenantId} AND scope = ${scope} AND key_hash = ${sha256Hex(key)} AND created_at >= ${window.notBefore}`;
      return r && { requestHash: r.request_hash, actionKey: r.action_key, status: r.status, response: r.response };
    },
    async save(tenantId, scope, key, v, at) {
      const behind = writeBehind(sql);
      if (behind?.add('idempotency_keys', saveAll, [tenantId, scope, sha256Hex(key), v.requestHash, v.actionKey, v.status, v.response, at])) return;
      await sql`INSERT INTO idempotency_keys (tenant_id, scope, key_hash, request_hash, action_key, status, response, created_at)
        VALUES (${tenantId}, ${scope}, ${sha256Hex(key)}, ${v.requestHash}, ${v.actionKey}, ${v.status}, ${v.response}, ${at})
        ON CONFLICT (tenant_id, scope, key_hash) DO UPDATE SET request_hash = excluded.request_hash,
          action_key = excluded.action_key, status = excluded.status, response = excluded.response, created_at = excluded.created_at`;
    },
    async purgeExpired(window, limit) {
      const deleted = await sql`DELETE FROM idempotency_keys WHERE (tenant_id, scope, key_hash) IN
        (SELECT tenant_id, scope, key_hash FROM idempotency_keys WHERE created_at < ${window.notBefore}
         ORDER BY created_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)`;
      return deleted.count;
    },
  };
}
