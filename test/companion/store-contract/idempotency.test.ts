/** The idempotency keys (evidence capability) behave the same on SQLite and PostgreSQL. */
import { describe, expect, it } from 'vitest';
import { createPostgresIdempotencyStore } from '../../../companion/evidence/idempotency/postgres-store.ts';
import { createSqliteIdempotencyStore } from '../../../companion/evidence/idempotency/sqlite-store.ts';
import type { IdempotencyStore, StoredResponse } from '../../../companion/evidence/idempotency/store.ts';
import { sha256Hex } from '../../../shared/hash.ts';
import { databasePerCase, engines, interleaved, seedTenants } from './engines.ts';
import type { StoreFactories } from './engines.ts';

const IDEMPOTENCY: StoreFactories<IdempotencyStore> = { sqlite: createSqliteIdempotencyStore, postgres: createPostgresIdempotencyStore };
const AT = '2025-01-01T12:00:00.000Z';
/** Keys saved before noon are expired. */
const WINDOW = { notBefore: AT };

const answer = (n: number): StoredResponse => ({
  requestHash: sha256Hex(`request ${n}`),
  actionKey: `hr:approve:${n}`,
  status: 201,
  response: JSON.stringify({ n }),
});

describe.each(engines())('idempotency store on $name', (engine) => {
  const db = databasePerCase(engine, (fresh) => seedTenants(fresh, ['ten_a', 'ten_b'], AT));

  /** Seeds `n` expired keys, a second apart from 10:00:00, oldest first. */
  async function seedExpired(n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const at = `2025-01-01T10:00:${String(i).padStart(2, '0')}.000Z`;
      await db.exec(
        "INSERT INTO idempotency_keys (tenant_id, scope, key_hash, request_hash, action_key, status, response, created_at) VALUES (?, 'gate', ?, 'r', 'a', 201, '{}', ?)",
        i % 2 ? 'ten_a' : 'ten_b', sha256Hex(`old ${i}`), at,
      );
    }
  }
  const createdAts = async () => (await db.rows<{ created_at: string }>('SELECT created_at FROM idempotency_keys ORDER BY created_at')).map((r) => r.created_at);

  it('finds what was saved under the key, in its tenant and scope only, stored as the key\'s SHA-256', async () => {
    const keys = db.store(IDEMPOTENCY);
    expect(await keys.find('ten_a', 'gate', 'key-1', WINDOW)).toBeUndefined();
    await keys.save('ten_a', 'gate', 'key-1', answer(1), AT);
    await keys.save('ten_a', 'packets', 'key-1', { ...answer(2), status: 200 }, AT);
    expect(await keys.find('ten_a', 'gate', 'key-1', WINDOW)).toStrictEqual(answer(1));
    expect(await keys.find('ten_a', 'packets', 'key-1', WINDOW)).toStrictEqual({ ...answer(2), status: 200 });
    expect(await keys.find('ten_b', 'gate', 'key-1', WINDOW)).toBeUndefined();
    expect(await keys.find('ten_a', 'gate', 'key-2', WINDOW)).toBeUndefined();
    const rows = await db.rows<{ key_hash: string; status: number }>('SELECT key_hash, status FROM idempotency_keys ORDER BY scope');
    expect(rows).toEqual([
      { key_hash: sha256Hex('key-1'), status: 201 },
      { key_hash: sha256Hex('key-1'), status: 200 },
    ]);
  });

  it('sees a key only within the window: saved at notBefore counts, a millisecond earlier does not', async () => {
    const keys = db.store(IDEMPOTENCY);
    await keys.save('ten_a', 'gate', 'key-1', answer(1), AT);
    expect(await keys.find('ten_a', 'gate', 'key-1', { notBefore: AT })).toStrictEqual(answer(1));
    expect(await keys.find('ten_a', 'gate', 'key-1', { notBefore: '2025-01-01T12:00:00.001Z' })).toBeUndefined();
    expect(await keys.find('ten_a', 'gate', 'key-1', { notBefore: '2025-01-01T00:00:00.000Z' })).toStrictEqual(answer(1));
  });

  it('replaces the row under a key on a second save, expired or not', async () => {
    const keys = db.store(IDEMPOTENCY);
    await keys.save('ten_a', 'gate', 'key-1', answer(1), '2025-01-01T09:00:00.000Z');
    expect(await keys.find('ten_a', 'gate', 'key-1', WINDOW)).toBeUndefined();
    await keys.save('ten_a', 'gate', 'key-1', answer(2), AT);
    expect(await keys.find('ten_a', 'gate', 'key-1', WINDOW)).toStrictEqual(answer(2));
    await keys.save('ten_a', 'gate', 'key-1', answer(3), '2025-01-01T12:00:01.000Z');
    expect(await keys.find('ten_a', 'gate', 'key-1', WINDOW)).toStrictEqual(answer(3));
    expect(await createdAts()).toEqual(['2025-01-01T12:00:01.000Z']);
  });

  it('purges at most the given number of expired keys, of any tenant, oldest first, and never a key within the window', async () => {
    await seedExpired(20);
    const keys = db.store(IDEMPOTENCY);
    await keys.save('ten_a', 'gate', 'key-1', answer(1), AT);
    // A save deletes nothing.
    expect(await createdAts()).toHaveLength(21);
    expect(await keys.purgeExpired(WINDOW, 16)).toBe(16);
    // The four newest expired keys stay for the next purge; the new key is kept.
    expect(await createdAts()).toEqual([
      '2025-01-01T10:00:16.000Z',
      '2025-01-01T10:00:17.000Z',
      '2025-01-01T10:00:18.000Z',
      '2025-01-01T10:00:19.000Z',
      AT,
    ]);
    expect(await keys.purgeExpired(WINDOW, 16)).toBe(4);
    expect(await keys.purgeExpired(WINDOW, 16)).toBe(0);
    expect(await createdAts()).toEqual([AT]);
  });

  it('rolls a save and a purge back with their transaction', async () => {
    await seedExpired(3);
    await expect(
      db.transaction(async (tx) => {
        const keys = tx.store(IDEMPOTENCY);
        expect(await keys.purgeExpired(WINDOW, 16)).toBe(3);
        await keys.save('ten_a', 'gate', 'key-1', answer(1), AT);
        expect(await keys.find('ten_a', 'gate', 'key-1', WINDOW)).toStrictEqual(answer(1));
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await db.store(IDEMPOTENCY).find('ten_a', 'gate', 'key-1', WINDOW)).toBeUndefined();
    expect(await createdAts()).toHaveLength(3);
  });

  if (engine.name === 'postgres') describe('concurrent saves', () => {
    it('two transactions saving one key both commit; the later commit\'s answer stands', async () => {
      const order: number[] = [];
      await interleaved(
        db,
        IDEMPOTENCY,
        (keys) => keys.save('ten_a', 'gate', 'key-1', answer(1), AT),
        // Waits for the first transaction's row, then replaces it (no primary key violation).
        async (keys) => {
          await keys.save('ten_a', 'gate', 'key-1', answer(2), AT);
          order.push(2);
        },
        { atEnd: () => void order.push(1) },
      );
      expect(order).toEqual([1, 2]);
      expect(await db.store(IDEMPOTENCY).find('ten_a', 'gate', 'key-1', WINDOW)).toStrictEqual(answer(2));
      expect(await createdAts()).toEqual([AT]);
    });

    it('a purge skips the expired keys another open transaction is purging, without waiting for it', async () => {
      await seedExpired(20);
      const finished: string[] = [];
      // The first stays open until the second has finished (or is let go should the second wait).
      await interleaved(
        db,
        IDEMPOTENCY,
        (keys) => keys.purgeExpired(WINDOW, 16),
        async (keys) => {
          expect(await keys.purgeExpired(WINDOW, 16)).toBe(4);
          finished.push('second');
        },
        { secondWaits: false, atEnd: () => void finished.push('first') },
      );
      // The second purged the four the first had left, while the first was still open.
      expect(finished).toEqual(['second', 'first']);
      expect(await createdAts()).toEqual([]);
    });
  });
});
