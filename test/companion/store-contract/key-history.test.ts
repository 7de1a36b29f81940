/** The production key history behaves the same on SQLite and PostgreSQL. */
import { beforeEach, describe, expect, it } from 'vitest';
import { createSqliteKeyHistoryStore } from '../../../companion/core/signers/key-history.ts';
import type { KeyHistoryStore } from '../../../companion/core/signers/key-history.ts';
import { createPostgresKeyHistoryStore } from '../../../companion/core/signers/postgres-key-history.ts';
import type { Signer, SignerCustody } from '../../../companion/core/signer.ts';
import { databasePerCase, engines, race } from './engines.ts';
import type { StoreFactories } from './engines.ts';

const KEYS: StoreFactories<KeyHistoryStore> = { sqlite: createSqliteKeyHistoryStore, postgres: createPostgresKeyHistoryStore };

const T1 = '2025-01-01T00:00:00.000Z';
const T2 = '2025-01-02T00:00:00.000Z';
const T3 = '2025-01-03T00:00:00.000Z';
const T4 = '2025-01-04T00:00:00.000Z';

/** A signer with only what the history reads: id, public key and custody kind. */
function signer(id: string, fill: number, kind: SignerCustody['kind'] = 'file'): Signer {
  return {
    keyId: id,
    publicKey: new Uint8Array(32).fill(fill),
    devKey: false,
    custody: { kind, managed: false, nonExportable: false, locators: {}, description: 'test key' },
    sign: () => new Uint8Array(64),
  };
}

interface KeyRow {
  key_id: string;
  custody: string;
  first_used_at: string;
  retired_at: string | null;
}

/** A production_keys row: the key, its custody kind, when it was first used and retired (null: active). */
const keyRow = (key_id: string, custody: string, first_used_at: string, retired_at: string | null): KeyRow => ({ key_id, custody, first_used_at, retired_at });

describe.each(engines())('production key history on $name', (engine) => {
  const db = databasePerCase(engine);
  let history: KeyHistoryStore;
  const table = () => db.rows<KeyRow>('SELECT key_id, custody, first_used_at, retired_at FROM production_keys ORDER BY key_id');

  beforeEach(() => {
    history = db.store(KEYS);
  });

  it('records the first key with nothing retired', async () => {
    expect(await history.activate(signer('kid_b', 2), T1)).toEqual([]);
    expect(await table()).toEqual([keyRow('kid_b', 'file', T1, null)]);
    // Starting again with the same key changes nothing.
    expect(await history.activate(signer('kid_b', 2), T2)).toEqual([]);
    expect(await table()).toEqual([keyRow('kid_b', 'file', T1, null)]);
  });

  it('retires every other key, listing them oldest first with their public keys', async () => {
    await history.activate(signer('kid_z', 1), T1);
    await history.activate(signer('kid_a', 2, 'pkcs11'), T2);
    const retired = await history.activate(signer('kid_m', 3, 'aws-kms'), T3);
    expect(retired).toEqual([
      { keyId: 'kid_z', publicKey: new Uint8Array(32).fill(1), retiredAt: T2 }, // retired when kid_a took over
      { keyId: 'kid_a', publicKey: new Uint8Array(32).fill(2), retiredAt: T3 },
    ]);
    expect(retired[0]?.publicKey).toBeInstanceOf(Uint8Array);
    expect(await table()).toEqual([
      keyRow('kid_a', 'pkcs11', T2, T3),
      keyRow('kid_m', 'aws-kms', T3, null),
      keyRow('kid_z', 'file', T1, T2),
    ]);
  });

  it('orders keys first used at the same time by key id', async () => {
    await history.activate(signer('kid_b', 1), T1);
    await history.activate(signer('kid_a', 2), T1);
    expect((await history.activate(signer('kid_c', 3), T2)).map((k) => k.keyId)).toEqual(['kid_a', 'kid_b']);
  });

  it('brings a retired key back, keeping its first use and custody, and retires the one it replaces', async () => {
    await history.activate(signer('kid_a', 1), T1);
    await history.activate(signer('kid_b', 2), T2);
    // The same key id with another custody: the row keeps what it recorded first.
    expect(await history.activate(signer('kid_a', 1, 'pkcs11'), T3)).toEqual([{ keyId: 'kid_b', publicKey: new Uint8Array(32).fill(2), retiredAt: T3 }]);
    expect(await table()).toEqual([
      keyRow('kid_a', 'file', T1, null),
      keyRow('kid_b', 'file', T2, T3),
    ]);
    // A key retired earlier keeps the time it was first retired.
    await history.activate(signer('kid_c', 3), T4);
    expect(await table()).toEqual([
      keyRow('kid_a', 'file', T1, T4),
      keyRow('kid_b', 'file', T2, T3),
      keyRow('kid_c', 'file', T4, null),
    ]);
  });

  it('refuses a public key of the wrong length, recording nothing', async () => {
    await history.activate(signer('kid_a', 1), T1);
    const bad = { ...signer('kid_b', 2), publicKey: new Uint8Array(31) };
    await expect(history.activate(bad, T2)).rejects.toThrow();
    expect(await table()).toEqual([keyRow('kid_a', 'file', T1, null)]);
  });

  it('rolls an activation back with its transaction', async () => {
    await history.activate(signer('kid_a', 1), T1);
    await expect(
      db.transaction(async (tx) => {
        expect(await tx.store(KEYS).activate(signer('kid_b', 2), T2)).toHaveLength(1);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await table()).toEqual([keyRow('kid_a', 'file', T1, null)]);
  });

  if (engine.name === 'postgres') it('leaves one key active when two companions start with different keys at once', async () => {
    await history.activate(signer('kid_old', 9), T1);
    const { meet, done } = race(db);
    const start = (id: string, fill: number) =>
      db.transaction(async (tx) => {
        const keys = tx.store(KEYS);
        await meet(); // both transactions are open before either activates
        const retired = await keys.activate(signer(id, fill), T2);
        await done(); // the commit waits until the other has activated too, or a while
        return retired;
      });
    const [a, b] = await Promise.all([start('kid_a', 1), start('kid_b', 2)]);
    const rows = await table();
    expect(rows.filter((r) => r.retired_at === null)).toHaveLength(1);
    const active = rows.find((r) => r.retired_at === null)!.key_id;
    // The one that activated last retired the other and lists it.
    const last = active === 'kid_a' ? a : b;
    expect(last.map((k) => k.keyId).sort()).toEqual(active === 'kid_a' ? ['kid_b', 'kid_old'] : ['kid_a', 'kid_old']);
  });
});
