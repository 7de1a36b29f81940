/**
 * KeyHistoryStore over PostgreSQL (migrations/postgres/0013_production_keys.sql): the
 * statements of the SQLite store in ./key-history.ts, run atomically (their own transaction,
 * or a savepoint inside the caller's).
 *
 * Companions sharing the database activate at startup, perhaps at once. SQLite's single writer
 * runs one activation after the other, so the last to start retires every other key. Here two
 * activations would each miss the other's uncommitted key and both stay active, so the table
 * is locked first in a mode that conflicts only with itself and with writes (plain reads go
 * on): activations queue, and each sees every key committed before it. The lock is held until
 * the enclosing transaction ends; activation is one short transaction per process start.
 */
import { atomically } from '../postgres/connect.ts';
import type { Queryable } from '../postgres/connect.ts';
import type { KeyHistoryStore, RetiredKey } from './key-history.ts';

export function createPostgresKeyHistoryStore(sql: Queryable): KeyHistoryStore {
  return {
    activate: (current, at) =>
      atomically(sql, async (tx): Promise<RetiredKey[]> => {
        await tx`LOCK TABLE production_keys IN SHARE ROW EXCLUSIVE MODE`;
        await tx`INSERT INTO production_keys (key_id, public_key, custody, first_used_at)
          VALUES (${current.keyId}, ${current.publicKey}, ${current.custody.kind}, ${at})
          ON CONFLICT (key_id) DO UPDATE SET retired_at = NULL`;
        await tx`UPDATE production_keys SET retired_at = ${at} WHERE key_id <> ${current.keyId} AND retired_at IS NULL`;
        const rows = await tx<{ key_id: string; public_key: Buffer; retired_at: string }[]>`SELECT key_id, public_key, retired_at
          FROM production_keys WHERE key_id <> ${current.keyId} ORDER BY first_used_at, key_id`;
        return rows.map((r) => ({ keyId: r.key_id, publicKey: new Uint8Array(r.public_key), retiredAt: r.retired_at }));
      }),
  };
}
