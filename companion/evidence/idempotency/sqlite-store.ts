/** SQLite implementation of IdempotencyStore (table idempotency_keys, migrations 0002, 0011 and 0025). */
import type { Sync } from '../../core/async-store.ts';
import { sha256Hex } from '../../../shared/hash.ts';
import type { Db } from '../../core/db.ts';
import type { IdempotencyStore } from './store.ts';

export function createSqliteIdempotencyStore(db: Db): Sync<IdempotencyStore> {
  const find = db.prepare<[string, string, string, string], { request_hash: string; action_key: string; status: number; response: string }>(
    `SELECT request_hash, action_key, status, response FROM idempotency_keys
     WHERE tenant_id = ? AND scope = ? AND key_hash = ? AND created_at >= ?`,
  );
  // REPLACE: a key whose row expired but was not purged yet starts afresh.
  const save = db.prepare(`INSERT OR REPLACE INTO idempotency_keys
    (tenant_id, scope, key_hash, request_hash, action_key, status, response, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
  const purge = db.prepare<[string, number]>(`DELETE FROM idempotency_keys WHERE (tenant_id, scope, key_hash) IN
    (SELECT tenant_id, scope, key_hash FROM idempotency_keys WHERE created_at < ? ORDER BY created_at LIMIT ?)`);
  // A seal asks for its key's row, then saves its answer under the same key: hashed once.
  let last = { key: '', hash: sha256Hex('') };
  const keyHash = (key: string) => (last.key === key ? last.hash : (last = { key, hash: sha256Hex(key) }).hash);
  return {
    find(tenantId, scope, key, window) {
      const r = find.get(tenantId, scope, keyHash(key), window.notBefore);
      return r && { requestHash: r.request_hash, actionKey: r.action_key, status: r.status, response: r.response };
    },
    save(tenantId, scope, key, v, at) {
      save.run(tenantId, scope, keyHash(key), v.requestHash, v.actionKey, v.status, v.response, at);
    },
    purgeExpired(window, limit) {
      return purge.run(window.notBefore, limit).changes;
    },
  };
}
