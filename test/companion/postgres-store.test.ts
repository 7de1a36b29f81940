/**
 * The PostgreSQL Store's transactions (companion/postgres-store.ts), on a real server (Debian's,
 * unix socket only): a transaction and its savepoints share one tenant-log tree cache, so a
 * batch of seals reads a log's right edge once; each transaction starts with its own, since
 * another process may have appended in between; and a leaf a savepoint rolled back is forgotten.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoredTrees } from '../../companion/anchoring/stored-tree.ts';
import { openPostgresStore } from '../../companion/postgres-store.ts';
import type { PostgresStore } from '../../companion/postgres-store.ts';
import { toHex } from '../../shared/encoding.ts';
import { MerkleTree, leafHash } from '../../shared/merkle.ts';
import { startPostgres } from '../helpers/postgres.ts';
import type { TestPostgres } from '../helpers/postgres.ts';

let pg: TestPostgres;
let store: PostgresStore;
beforeAll(async () => {
  pg = startPostgres();
  store = await openPostgresStore({ url: `postgres:///postgres?host=${encodeURIComponent(pg.socketDir)}&user=postgres` });
}, 60_000);
afterAll(async () => {
  await store?.close();
  pg?.stop();
});

const leaf = (b: number) => Uint8Array.of(b);

describe('PostgreSQL store transactions', () => {
  it('share one tree cache between a transaction and its savepoints, and none between transactions', async () => {
    const keys: object[] = [];
    for (let i = 0; i < 2; i++) {
      await store.transaction(async (tx) => {
        keys.push(tx.anchoring.treeCacheKey);
        await tx.transaction(async (sp) => {
          expect(sp.anchoring.treeCacheKey).toBe(tx.anchoring.treeCacheKey);
          await sp.transaction(async (inner) => expect(inner.anchoring.treeCacheKey).toBe(tx.anchoring.treeCacheKey));
        });
      });
    }
    expect(keys[0]).not.toBe(keys[1]);
    expect(store.anchoring.treeCacheKey).not.toBe(keys[0]);
  });

  it('forget a leaf whose savepoint rolled back, so the next append at its index builds the right tree', async () => {
    const expected = MerkleTree.fromLeafHashes([1, 2, 3, 4].map((b) => leafHash(leaf(b))));
    await store.transaction(async (tx) => {
      await tx.transaction(async (sp) => {
        const trees = new StoredTrees(sp.anchoring);
        for (const [i, b] of [1, 2, 3].entries()) await trees.append('#sp', i, leaf(b));
      });
      await expect(
        tx.transaction(async (sp) => {
          await new StoredTrees(sp.anchoring).append('#sp', 3, leaf(99));
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      await tx.transaction((sp) => new StoredTrees(sp.anchoring).append('#sp', 3, leaf(4)));
      // From the transaction's cache, then from storage once committed.
      expect(toHex(await new StoredTrees(tx.anchoring).rootAt('#sp', 4))).toBe(toHex(expected.root()));
    });
    expect(toHex(await new StoredTrees(store.anchoring).rootAt('#sp', 4))).toBe(toHex(expected.root()));
    expect(await store.anchoring.leafCount('#sp')).toBe(4);
  });
});
