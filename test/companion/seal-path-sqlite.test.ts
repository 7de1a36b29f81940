/**
 * The sealing path's SQLite shortcuts, each against what it stands in for:
 * - a transaction's stores hand their synchronous implementation to the seal path
 *   (core/async-store.ts syncOf), the outside stores never (they must wait for the connection);
 * - beside another writer, the transactions' Merkle tree caches survive a commit but never a
 *   rollback, of the transaction or of a savepoint (companion/store.ts): the other connection
 *   may commit a different leaf at the size of one rolled back here;
 * - addSeconds' whole-second shortcut (reviews/state.ts) answers as Date arithmetic does;
 * - migration 0025 keeps the idempotency keys it moves, and a replay still finds them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StoredTrees } from '../../companion/anchoring/stored-tree.ts';
import { syncOf } from '../../companion/core/async-store.ts';
import { openDatabase } from '../../companion/core/db.ts';
import { readMigrations, runMigrations } from '../../companion/core/migrations.ts';
import { addSeconds } from '../../companion/reviews/state.ts';
import { openSqliteStore } from '../../companion/store.ts';
import type { SqliteStore, Tx } from '../../companion/store.ts';
import { toHex } from '../../shared/encoding.ts';
import { sha256Hex } from '../../shared/hash.ts';
import { MerkleTree, leafHash } from '../../shared/merkle.ts';
import { makeTempDir } from './helpers.ts';

const dirs: string[] = [];
const stores: SqliteStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function open(dir: string, sharedWriters = true): SqliteStore {
  const store = openSqliteStore({ dataDir: dir, sharedWriters });
  stores.push(store);
  return store;
}

function tempDir(): string {
  const dir = makeTempDir();
  dirs.push(dir);
  return dir;
}

describe('a transaction and the synchronous implementation behind it', () => {
  it('is handed out inside a transaction only', async () => {
    const store = open(tempDir(), false);
    expect(syncOf(store.reviews)).toBeUndefined();
    expect(syncOf(store.evidence)).toBeUndefined();
    await store.transaction(async (tx) => {
      expect(syncOf(tx.reviews)).toBeDefined();
      expect(syncOf(tx.evidence)).toBeDefined();
      expect(syncOf(tx.anchoring)?.treeCacheKey).toBe(tx.anchoring.treeCacheKey);
    });
  });
});

describe('tree caches beside another writer', () => {
  const leaf = (b: number) => Uint8Array.of(b, 7);
  /** Appends in one transaction of `store`, through the tree over its transaction's synchronous store, as a seal does. */
  const append = (store: SqliteStore, size: number, data: Uint8Array, then?: (tx: Tx) => Promise<void>) =>
    store.transaction(async (tx) => {
      await new StoredTrees(syncOf(tx.anchoring) ?? tx.anchoring).appendNow('#t', size, data);
      await then?.(tx);
    });
  const rootIn = (store: SqliteStore, size: number) => store.transaction(async (tx) => toHex(await new StoredTrees(tx.anchoring).rootAt('#t', size)));
  const expected = (leaves: Uint8Array[]) => toHex(MerkleTree.fromLeafHashes(leaves.map(leafHash)).root());

  it('keep what committed, so the next append reads nothing', async () => {
    const dir = tempDir();
    const here = open(dir);
    await append(here, 0, leaf(0));
    await append(here, 1, leaf(1));
    // The second append found the first one's frontier: it read no node, so a missing node
    // does not stop it (a frontier read from storage would).
    here.db.prepare("DELETE FROM merkle_nodes WHERE log_id = '#t' AND level = 1 AND idx = 0").run();
    await append(here, 2, leaf(2));
    expect(await rootIn(here, 3)).toBe(expected([leaf(0), leaf(1), leaf(2)]));
  });

  it('forget a leaf rolled back with its transaction, which the other connection then commits another leaf in place of', async () => {
    const dir = tempDir();
    const here = open(dir);
    const other = open(dir);
    await append(here, 0, leaf(0));
    await expect(append(here, 1, leaf(99), () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    await append(other, 1, leaf(1));
    await append(here, 2, leaf(2));
    expect(await rootIn(here, 3)).toBe(expected([leaf(0), leaf(1), leaf(2)]));
    expect(await rootIn(other, 3)).toBe(expected([leaf(0), leaf(1), leaf(2)]));
  });

  it('forget a leaf rolled back with a savepoint whose transaction committed', async () => {
    const dir = tempDir();
    const here = open(dir);
    const other = open(dir);
    await append(here, 0, leaf(0));
    await here.transaction(async (tx) => {
      await expect(
        tx.transaction(async (sp) => {
          await new StoredTrees(syncOf(sp.anchoring) ?? sp.anchoring).appendNow('#t', 1, leaf(99));
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
    });
    await append(other, 1, leaf(1));
    await append(here, 2, leaf(2));
    expect(await rootIn(here, 3)).toBe(expected([leaf(0), leaf(1), leaf(2)]));
  });
});

describe('addSeconds', () => {
  const reference = (at: string, seconds: number) => new Date(Date.parse(at) + seconds * 1000).toISOString();
  it('answers as Date arithmetic, for recorded_at and any other form', () => {
    const cases: [string, number][] = [
      ['2026-02-28T23:59:59.999Z', 259_200],
      ['2024-02-28T23:59:59.001Z', 86_400],
      ['2024-02-28T23:59:59.001Z', 86_400], // the same second again: from the last sum
      ['2024-02-28T23:59:59.002Z', 86_400],
      ['2024-02-28T23:59:59.002Z', 3_600], // same second, other window
      ['2025-12-31T23:59:59.500Z', 1],
      ['2025-01-01T00:00:00.000Z', -1],
      ['9999-12-31T23:59:59.999Z', 10], // past year 9999
      ['2026-11-28T16:00:00Z', 5], // no milliseconds
      ['2026-11-28T16:00:00.123+00:00', 5],
      ['2026-11-28T16:00:00.250Z', 1.5], // not a whole number of seconds
    ];
    for (let t = 0; t < 2000; t++) cases.push([new Date(1.7e12 + t * 7_919_777).toISOString(), [259_200, 60, 1][t % 3]!]);
    for (const [at, seconds] of cases) expect(addSeconds(at, seconds)).toBe(reference(at, seconds));
  });
});

describe('migration 0025 (idempotency rows in insertion order)', () => {
  it('keeps every key it moves, and a replay finds them', async () => {
    const dir = tempDir();
    const migrations = readMigrations();
    const db = openDatabase(path.join(dir, 'companion.db'));
    runMigrations(
      db,
      migrations.filter((m) => m.version < 25),
    );
    // Inserted out of created_at order, as keys arrive: the migration copies them in that order.
    db.prepare("INSERT INTO tenants (id, kind, display_name, created_at, updated_at) VALUES ('ten_a', 'sandbox', 'a', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')").run();
    const keep = db.prepare(
      "INSERT INTO idempotency_keys (tenant_id, scope, key_hash, request_hash, action_key, status, response, created_at) VALUES ('ten_a', 'POST /v1/gate', ?, 'r', ?, 201, '{}', ?)",
    );
    for (let i = 0; i < 20; i++) keep.run(sha256Hex(`key-${i}`), `law:x:${i}`, `2026-01-01T00:00:${String(59 - i).padStart(2, '0')}.000Z`);
    db.close();
    const store = open(dir, false);
    const table = store.db.prepare<[], { sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'idempotency_keys'").get()!.sql;
    expect(table).not.toMatch(/WITHOUT ROWID/i);
    expect(store.db.prepare<[], { n: number }>('SELECT count(*) AS n FROM idempotency_keys').get()!.n).toBe(20);
    for (let i = 0; i < 20; i++) {
      expect(await store.idempotency.find('ten_a', 'POST /v1/gate', `key-${i}`, { notBefore: '2025-01-01' })).toMatchObject({ actionKey: `law:x:${i}` });
    }
    // The unique key holds: a key saved again replaces its row.
    await store.idempotency.save('ten_a', 'POST /v1/gate', 'key-3', { requestHash: 'r2', actionKey: 'law:x:new', status: 201, response: '{}' }, '2026-01-02T00:00:00.000Z');
    expect(store.db.prepare<[], { n: number }>('SELECT count(*) AS n FROM idempotency_keys').get()!.n).toBe(20);
    expect(await store.idempotency.find('ten_a', 'POST /v1/gate', 'key-3', { notBefore: '2025-01-01' })).toMatchObject({ actionKey: 'law:x:new', requestHash: 'r2' });
  });
});
