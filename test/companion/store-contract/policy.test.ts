/** Tenant policy versions (policy capability) behave the same on SQLite and PostgreSQL. */
import { beforeEach, describe, expect, it } from 'vitest';
import { createPostgresPolicyStore } from '../../../companion/policy/postgres-store.ts';
import { createSqlitePolicyStore } from '../../../companion/policy/sqlite-store.ts';
import type { PolicyStore, PolicyVersionRow } from '../../../companion/policy/store.ts';
import { databasePerCase, engines, lockWaitBefore, seedTenants } from './engines.ts';
import type { StoreFactories } from './engines.ts';

const POLICY: StoreFactories<PolicyStore> = { sqlite: createSqlitePolicyStore, postgres: createPostgresPolicyStore };
const AT = '2025-01-01T00:00:00.000Z';
const hex = (c: string) => c.repeat(64);

/** Version `version` of a tenant's pack; its receipt is `<tenant>:<pack>:<version>` unless given. */
function version(tenantId: string, policyPack: string, n: number, over: Partial<PolicyVersionRow> = {}): PolicyVersionRow {
  return {
    tenantId,
    policyPack,
    version: n,
    digest: hex(String(n % 10)),
    previousDigest: n === 1 ? null : hex(String((n - 1) % 10)),
    document: `{"label":"v${n}","pack":"${policyPack}"}`,
    actor: 'key_actor',
    createdAt: `2025-01-${String(n).padStart(2, '0')}T00:00:00.000Z`,
    actionKey: `${tenantId}:${policyPack}:${n}`,
    ...over,
  };
}

describe.each(engines())('policy store on $name', (engine) => {
  const db = databasePerCase(engine, (fresh) => seedTenants(fresh, ['ten_a', 'ten_b'], AT));
  let policy: PolicyStore;
  let seq = 0;
  /** The policy receipt a version must point at (action_key references sealed_records). */
  const receipt = (tenantId: string, actionKey: string) =>
    db.exec(
      `INSERT INTO sealed_records (tenant_id, tenant_seq, action_key, vertical, pack, kind, status, payload_hash, packet_hash,
         attestation, attestation_hash, signature, key_id, dev_key, recorded_at, credits, details)
       VALUES (?, ?, ?, 'law', 'law', 'policy', 'recorded', ?, ?, '{}', ?, 'sig', 'kid', 1, ?, 0, '{}')`,
      tenantId,
      ++seq,
      actionKey,
      hex('a'),
      hex('b'),
      hex('c'),
      AT,
    );
  /** Seeds the receipt and appends the version. */
  const append = async (row: PolicyVersionRow, store = policy) => {
    await receipt(row.tenantId, row.actionKey);
    await store.insertVersion(row);
  };

  beforeEach(() => {
    policy = db.store(POLICY);
  });

  it('has no current version before the first, then the newest', async () => {
    expect(await policy.current('ten_a', 'law')).toBeUndefined();
    await append(version('ten_a', 'law', 1));
    expect(await policy.current('ten_a', 'law')).toEqual(version('ten_a', 'law', 1));
    await append(version('ten_a', 'law', 2));
    const current = await policy.current('ten_a', 'law');
    expect(current).toEqual({
      tenantId: 'ten_a',
      policyPack: 'law',
      version: 2,
      digest: hex('2'),
      previousDigest: hex('1'),
      document: '{"label":"v2","pack":"law"}',
      actor: 'key_actor',
      createdAt: '2025-01-02T00:00:00.000Z',
      actionKey: 'ten_a:law:2',
    });
    expect(typeof current?.version).toBe('number');
    // Per tenant and per pack.
    expect(await policy.current('ten_a', 'defense')).toBeUndefined();
    expect(await policy.current('ten_b', 'law')).toBeUndefined();
    await append(version('ten_b', 'law', 1));
    expect((await policy.current('ten_a', 'law'))?.version).toBe(2);
    expect((await policy.current('ten_b', 'law'))?.actionKey).toBe('ten_b:law:1');
  });

  it('picks the newest by number, not by insertion', async () => {
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 10, 9]) await append(version('ten_a', 'law', n));
    expect((await policy.current('ten_a', 'law'))?.version).toBe(10); // 10 > 9 as numbers, not as text
    expect((await policy.listVersions('ten_a', 'law', { limit: 3 })).map((v) => v.version)).toEqual([10, 9, 8]);
  });

  it('answers false for a version that already exists, keeping the first, and the transaction goes on', async () => {
    await append(version('ten_a', 'law', 1));
    await receipt('ten_a', 'ten_a:law:1b');
    expect(await policy.insertVersion(version('ten_a', 'law', 1, { actionKey: 'ten_a:law:1b', digest: hex('f') }))).toBe(false);
    expect((await policy.current('ten_a', 'law'))?.digest).toBe(hex('1'));
    // Inside a transaction the stale writer's failure leaves the transaction usable, as in SQLite.
    await receipt('ten_a', 'ten_a:law:2');
    await db.transaction(async (tx) => {
      const p = tx.store(POLICY);
      expect(await p.insertVersion(version('ten_a', 'law', 1, { actionKey: 'ten_a:law:1b' }))).toBe(false);
      expect(await p.insertVersion(version('ten_a', 'law', 2))).toBe(true);
    });
    expect((await policy.listVersions('ten_a', 'law', { limit: 10 })).map((v) => [v.version, v.actionKey])).toEqual([
      [2, 'ten_a:law:2'],
      [1, 'ten_a:law:1'],
    ]);
  });

  it('refuses rows the schema forbids', async () => {
    await receipt('ten_a', 'ten_a:law:1');
    await receipt('ten_a', 'ten_a:law:2');
    // A first version with a predecessor, a later one without, an unsealed receipt, a reused receipt.
    await expect(policy.insertVersion(version('ten_a', 'law', 1, { previousDigest: hex('0') }))).rejects.toThrow();
    await expect(policy.insertVersion(version('ten_a', 'law', 2, { previousDigest: null }))).rejects.toThrow();
    await expect(policy.insertVersion(version('ten_a', 'law', 1, { actionKey: 'ten_a:law:nope' }))).rejects.toThrow();
    await policy.insertVersion(version('ten_a', 'law', 1));
    await expect(policy.insertVersion(version('ten_a', 'defense', 1, { actionKey: 'ten_a:law:1' }))).rejects.toThrow();
    expect(await db.rows('SELECT policy_pack, version FROM policy_versions')).toEqual([{ policy_pack: 'law', version: 1 }]);
  });

  it('keeps history fixed: no update, no delete', async () => {
    await append(version('ten_a', 'law', 1));
    await expect(db.exec("UPDATE policy_versions SET actor = 'key_other'")).rejects.toThrow(/append-only/);
    await expect(db.exec('DELETE FROM policy_versions')).rejects.toThrow(/append-only/);
    expect(await policy.current('ten_a', 'law')).toEqual(version('ten_a', 'law', 1));
  });

  it('lists versions newest first, at most limit, below beforeVersion', async () => {
    for (const n of [1, 2, 3, 4, 5]) await append(version('ten_a', 'law', n));
    await append(version('ten_a', 'defense', 1));
    await append(version('ten_b', 'law', 1));
    const list = async (options: { limit: number; beforeVersion?: number | undefined }) =>
      (await policy.listVersions('ten_a', 'law', options)).map((v) => v.version);
    expect(await list({ limit: 10 })).toEqual([5, 4, 3, 2, 1]);
    expect(await list({ limit: 2 })).toEqual([5, 4]);
    expect(await list({ limit: 2, beforeVersion: 4 })).toEqual([3, 2]);
    expect(await list({ limit: 2, beforeVersion: 2 })).toEqual([1]);
    expect(await list({ limit: 2, beforeVersion: 1 })).toEqual([]);
    expect(await list({ limit: 10, beforeVersion: 99 })).toEqual([5, 4, 3, 2, 1]);
    expect(await list({ limit: 3, beforeVersion: undefined })).toEqual([5, 4, 3]);
    expect(await policy.listVersions('ten_a', 'law', { limit: 1 })).toEqual([version('ten_a', 'law', 5)]);
    expect((await policy.listVersions('ten_a', 'defense', { limit: 10 })).map((v) => v.actionKey)).toEqual(['ten_a:defense:1']);
    expect(await policy.listVersions('ten_b', 'defense', { limit: 10 })).toEqual([]);
  });

  it('rolls a version back with its transaction', async () => {
    await append(version('ten_a', 'law', 1));
    await receipt('ten_a', 'ten_a:law:2');
    await expect(
      db.transaction(async (tx) => {
        const p = tx.store(POLICY);
        await p.insertVersion(version('ten_a', 'law', 2));
        expect((await p.current('ten_a', 'law'))?.version).toBe(2);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect((await policy.current('ten_a', 'law'))?.version).toBe(1);
    expect(await policy.listVersions('ten_a', 'law', { limit: 10 })).toHaveLength(1);
  });

  if (engine.name === 'postgres') it('lets only one of two concurrent appends of one version succeed', async () => {
    await append(version('ten_a', 'law', 1));
    await receipt('ten_a', 'ten_a:law:2x');
    await receipt('ten_a', 'ten_a:law:2y');
    let opened = 0;
    let inserted = 0;
    let allOpen!: () => void;
    let allInserted!: () => void;
    const open = new Promise<void>((resolve) => (allOpen = resolve));
    const insertedBoth = new Promise<void>((resolve) => (allInserted = resolve));
    const put = (tag: string) =>
      db.transaction(async (tx) => {
        const p = tx.store(POLICY);
        // Both read version 1 as current (the stale-writer check in policy/versions.ts passes for both).
        expect((await p.current('ten_a', 'law'))?.version).toBe(1);
        if (++opened === 2) allOpen();
        await open;
        try {
          if (!(await p.insertVersion(version('ten_a', 'law', 2, { actionKey: `ten_a:law:2${tag}`, document: tag })))) throw new Error('version 2 is taken');
        } finally {
          if (++inserted === 2) allInserted();
        }
        // Hold the commit until the other has tried too, or is seen waiting on our row.
        await lockWaitBefore(db, insertedBoth);
        return tag;
      });
    const results = await Promise.allSettled([put('x'), put('y')]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const winner = results.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<string>;
    expect((await policy.listVersions('ten_a', 'law', { limit: 10 })).map((v) => [v.version, v.document])).toEqual([
      [2, winner.value],
      [1, '{"label":"v1","pack":"law"}'],
    ]);
  });
});
