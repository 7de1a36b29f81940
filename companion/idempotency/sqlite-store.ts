/** SQLite implementation of IdempotencyStore (table idempotency_keys, migration 0002). */
import { sha256Hex } from '../../shared/hash.ts';
import type { Db } from '../core/db.ts';
import type { IdempotencyStore } from './store.ts';

export function createSqliteIdempotencyStore(db: Db): IdempotencyStore {
  const find = db.prepare<[string, string, string], { request_hash: string; action_key: string; status: number; response: string }>(
    'SELECT request_hash, action_key, status, response FROM idempotency_keys WHERE tenant_id = ? AND scope = ? AND key_hash = ?',
  );
  const save = db.prepare(`INSERT INTO idempotency_keys
    (tenant_id, scope, key_hash, request_hash, action_key, status, response, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
  return {
    find(tenantId, scope, key) {
      const r = find.get(tenantId, scope, sha256Hex(key));
      return r && { requestHash: r.request_hash, actionKey: r.action_key, status: r.status, response: r.response };
    },
    save(tenantId, scope, key, v, at) {
      save.run(tenantId, scope, sha256Hex(key), v.requestHash, v.actionKey, v.status, v.response, at);
    },
  };
}
