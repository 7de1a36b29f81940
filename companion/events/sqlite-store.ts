/** SQLite implementation of EventStore (table events, migration 0002). */
import type { Db } from '../core/db.ts';
import type { EventStore } from './store.ts';

interface EventDbRow {
  id: string;
  tenant_id: string;
  type: string;
  dedupe_key: string | null;
  payload: string;
  created_at: string;
}

export function createSqliteEventStore(db: Db): EventStore {
  const insert = db.prepare(`INSERT INTO events (id, tenant_id, type, dedupe_key, payload, created_at)
    VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (dedupe_key) DO NOTHING`);
  const all = db.prepare<[string], EventDbRow>('SELECT * FROM events WHERE tenant_id = ? ORDER BY id');
  const ofType = db.prepare<[string, string], EventDbRow>('SELECT * FROM events WHERE tenant_id = ? AND type = ? ORDER BY id');
  return {
    insert(r) {
      return insert.run(r.id, r.tenantId, r.type, r.dedupeKey, r.payload, r.createdAt).changes === 1;
    },
    listFor(tenantId, type) {
      const rows = type === undefined ? all.all(tenantId) : ofType.all(tenantId, type);
      return rows.map((e) => ({ id: e.id, tenantId: e.tenant_id, type: e.type, dedupeKey: e.dedupe_key, payload: e.payload, createdAt: e.created_at }));
    },
  };
}
