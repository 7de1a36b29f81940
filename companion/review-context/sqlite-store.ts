/**
 * SQLite implementation of ReviewContextStore (migration 0021_review_context.sql); statements are
 * prepared once. better-sqlite3 binds Buffers, not plain Uint8Arrays, hence Buffer.from at the
 * edges.
 *
 * Erasure that reaches the file: every statement here that deletes ciphertexts runs with
 * `secure_delete` on (SQLite pragma secure_delete: "overwrites deleted content with zeros"), so
 * an erased ciphertext's cells and the overflow pages it freed are zeroed in the pages written
 * back, not left in the free space of the database file. The pragma is per connection and other
 * stores set it for their own work, so it is turned on around each erasing statement and put
 * back as it was. The WAL keeps the frames that carried a ciphertext until it is reset; the
 * sweep (./sweep.ts) truncates it (wal_checkpoint(TRUNCATE)).
 */
import type { Sync } from '../core/async-store.ts';
import type { Db } from '../core/db.ts';
import { toContext, toKey, toSubmitter } from './rows.ts';
import type { ContextDbRow, KeyDbRow, SubmitterDbRow } from './rows.ts';
import type { ReviewContextStore } from './store.ts';

export function createSqliteReviewContextStore(db: Db): Sync<ReviewContextStore> {
  /** Runs `fn` with secure_delete on, then restores the connection's setting (0 off, 1 on, 2 fast). */
  const erasing = <T>(fn: () => T): T => {
    const before = db.pragma('secure_delete', { simple: true }) as number;
    if (before === 1) return fn();
    db.pragma('secure_delete = ON');
    try {
      return fn();
    } finally {
      db.pragma(`secure_delete = ${before === 2 ? 'FAST' : 'OFF'}`);
    }
  };
  const insertKey = db.prepare(`INSERT INTO review_keys (id, tenant_id, person_id, public_key, label, created_at, last_used_at, revoked_at)
    VALUES (?, ?, ?, ?, ?, ?, NULL, NULL) ON CONFLICT (tenant_id, public_key) DO NOTHING`);
  const listKeys = db.prepare<[string, string], KeyDbRow>('SELECT * FROM review_keys WHERE tenant_id = ? AND person_id = ? ORDER BY id');
  const activeKeys = db.prepare<[string], KeyDbRow>('SELECT * FROM review_keys WHERE tenant_id = ? AND revoked_at IS NULL ORDER BY id');
  const revoke = db.prepare('UPDATE review_keys SET revoked_at = ? WHERE tenant_id = ? AND person_id = ? AND id = ? AND revoked_at IS NULL');
  const eraseForKey = db.prepare('DELETE FROM review_contexts WHERE tenant_id = ? AND review_key_id = ?');
  const touch = db.prepare('UPDATE review_keys SET last_used_at = ? WHERE tenant_id = ? AND id = ?');
  const insertContext = db.prepare('INSERT INTO review_contexts (tenant_id, action_key, review_key_id, enc, ct, created_at) VALUES (?, ?, ?, ?, ?, ?)');
  const findContext = db.prepare<[string, string, string], ContextDbRow>('SELECT * FROM review_contexts WHERE tenant_id = ? AND action_key = ? AND review_key_id = ?');
  const countOne = db.prepare<[string, string], { n: number }>('SELECT count(*) AS n FROM review_contexts WHERE tenant_id = ? AND action_key = ?');
  const eraseAction = db.prepare('DELETE FROM review_contexts WHERE tenant_id = ? AND action_key = ?');
  // An action's ciphertexts are orphans once no review item of it is open at `now`.
  const eraseOrphans = db.prepare(`DELETE FROM review_contexts WHERE (tenant_id, action_key, review_key_id) IN (
      SELECT c.tenant_id, c.action_key, c.review_key_id FROM review_contexts c
      WHERE NOT EXISTS (SELECT 1 FROM review_items i WHERE i.tenant_id = c.tenant_id AND i.action_key = c.action_key
        AND i.status IN ('pending', 'escalated') AND i.expires_at > ?)
      LIMIT ?)`);
  const orphanSubmitters = db.prepare(`DELETE FROM review_context_submitters WHERE (tenant_id, action_key) IN (
      SELECT s.tenant_id, s.action_key FROM review_context_submitters s
      WHERE NOT EXISTS (SELECT 1 FROM review_items i WHERE i.tenant_id = s.tenant_id AND i.action_key = s.action_key
        AND i.status IN ('pending', 'escalated') AND i.expires_at > ?)
      LIMIT ?)`);
  const insertSubmitter = db.prepare(`INSERT INTO review_context_submitters (tenant_id, action_key, principal_id, credential_id) VALUES (?, ?, ?, ?)
    ON CONFLICT (tenant_id, action_key) DO NOTHING`);
  const findSubmitter = db.prepare<[string, string], SubmitterDbRow>('SELECT * FROM review_context_submitters WHERE tenant_id = ? AND action_key = ?');
  const forgetSubmitter = db.prepare('DELETE FROM review_context_submitters WHERE tenant_id = ? AND action_key = ?');
  const replace = db.transaction((tenantId: string, actionKey: string, rows: Parameters<ReviewContextStore['replaceContexts']>[2]) => {
    eraseAction.run(tenantId, actionKey);
    for (const r of rows) insertContext.run(r.tenantId, r.actionKey, r.reviewKeyId, Buffer.from(r.enc), Buffer.from(r.ct), r.createdAt);
  });
  const revokeAndErase = db.transaction((tenantId: string, personId: string, keyId: string, at: string) => {
    if (revoke.run(at, tenantId, personId, keyId).changes !== 1) return false;
    eraseForKey.run(tenantId, keyId);
    return true;
  });

  return {
    recordSubmitter(row) {
      insertSubmitter.run(row.tenantId, row.actionKey, row.principalId, row.credentialId);
    },
    findSubmitter(tenantId, actionKey) {
      const r = findSubmitter.get(tenantId, actionKey);
      return r && toSubmitter(r);
    },
    forgetAction(tenantId, actionKey) {
      erasing(() => eraseAction.run(tenantId, actionKey));
      forgetSubmitter.run(tenantId, actionKey);
    },
    addKey(row) {
      const added = insertKey.run(row.id, row.tenantId, row.personId, Buffer.from(row.publicKey), row.label, row.createdAt).changes === 1;
      return added ? 'added' : 'taken';
    },
    listKeys: (tenantId, personId) => listKeys.all(tenantId, personId).map(toKey),
    activeKeys: (tenantId) => activeKeys.all(tenantId).map(toKey),
    revokeKey: (tenantId, personId, keyId, at) => erasing(() => revokeAndErase(tenantId, personId, keyId, at)),
    touchKey(tenantId, keyId, at) {
      touch.run(at, tenantId, keyId);
    },
    replaceContexts(tenantId, actionKey, rows) {
      erasing(() => replace(tenantId, actionKey, rows));
    },
    findContext(tenantId, actionKey, reviewKeyId) {
      const r = findContext.get(tenantId, actionKey, reviewKeyId);
      return r && toContext(r);
    },
    countContexts(tenantId, actionKeys) {
      const out = new Map<string, number>();
      for (const key of new Set(actionKeys)) {
        const n = countOne.get(tenantId, key)!.n;
        if (n > 0) out.set(key, n);
      }
      return out;
    },
    eraseContexts: (tenantId, actionKey) => erasing(() => eraseAction.run(tenantId, actionKey).changes),
    eraseOrphans(now, limit) {
      const erased = erasing(() => eraseOrphans.run(now, limit).changes);
      orphanSubmitters.run(now, limit);
      return erased;
    },
  };
}
