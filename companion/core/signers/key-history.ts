/**
 * The production keys that have signed here. The running production key is recorded at
 * startup; any other recorded key is retired then. Keyring publishes the retired ones in the
 * JWKS with status "retired" (DESIGN.md §3), so moving the production key to another custody
 * never strands the receipts and epoch headers the earlier key signed: /v1/verify and offline
 * verifiers still find their key, and say it is retired.
 */
import type { Sync } from '../async-store.ts';
import type { Db } from '../db.ts';
import type { Signer } from '../signer.ts';

export interface RetiredKey {
  keyId: string;
  publicKey: Uint8Array;
  retiredAt: string;
}

export interface KeyHistoryStore {
  /** Records `current` as the active production key and retires every other one; returns those. */
  activate(current: Signer, at: string): Promise<RetiredKey[]>;
}

export function createSqliteKeyHistoryStore(db: Db): Sync<KeyHistoryStore> {
  const insert = db.prepare('INSERT INTO production_keys (key_id, public_key, custody, first_used_at) VALUES (?, ?, ?, ?) ON CONFLICT (key_id) DO UPDATE SET retired_at = NULL');
  const retireOthers = db.prepare('UPDATE production_keys SET retired_at = ? WHERE key_id <> ? AND retired_at IS NULL');
  const retired = db.prepare<[string], { key_id: string; public_key: Buffer; retired_at: string }>(
    'SELECT key_id, public_key, retired_at FROM production_keys WHERE key_id <> ? ORDER BY first_used_at, key_id',
  );
  return {
    activate: (current, at) =>
      db.transaction(() => {
        insert.run(current.keyId, Buffer.from(current.publicKey), current.custody.kind, at);
        retireOthers.run(at, current.keyId);
        return retired.all(current.keyId).map((r) => ({ keyId: r.key_id, publicKey: new Uint8Array(r.public_key), retiredAt: r.retired_at }));
      })(),
  };
}
