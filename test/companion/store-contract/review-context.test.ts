/** Reviewers' device keys and review context ciphertexts (review-context capability) behave the same on SQLite and PostgreSQL. */
import { beforeEach, describe, expect, it } from 'vitest';
import { createPostgresReviewContextStore } from '../../../companion/review-context/postgres-store.ts';
import { createSqliteReviewContextStore } from '../../../companion/review-context/sqlite-store.ts';
import type { ContextRow, ReviewContextStore, ReviewKeyRow } from '../../../companion/review-context/store.ts';
import { databasePerCase, engines, seedTenants } from './engines.ts';
import type { StoreFactories } from './engines.ts';

const STORE: StoreFactories<ReviewContextStore> = { sqlite: createSqliteReviewContextStore, postgres: createPostgresReviewContextStore };
const AT = '2025-01-01T00:00:00.000Z';
const LATER = '2025-01-02T00:00:00.000Z';

const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);

function key(id: string, personId: string, fill: number, tenantId = 'ten_a'): ReviewKeyRow {
  return { id, tenantId, personId, publicKey: bytes(32, fill), label: `device ${id}`, createdAt: AT, lastUsedAt: null, revokedAt: null };
}

function context(actionKey: string, reviewKeyId: string, fill: number, tenantId = 'ten_a'): ContextRow {
  return { tenantId, actionKey, reviewKeyId, enc: bytes(32, fill), ct: bytes(40, fill + 1), createdAt: AT };
}

describe.each(engines())('review context store on $name', (engine) => {
  const db = databasePerCase(engine, async (fresh) => {
    await seedTenants(fresh, ['ten_a', 'ten_b'], AT);
    for (const [id, tenant, fill] of [['per_alice', 'ten_a', 1], ['per_bob', 'ten_a', 2], ['per_carol', 'ten_b', 3]] as const) {
      await fresh.exec(
        "INSERT INTO people (id, tenant_id, email_digest, role, capabilities, created_at) VALUES (?, ?, ?, 'member', '[]', ?)",
        id,
        tenant,
        Buffer.from(bytes(32, fill)),
        AT,
      );
    }
  });
  let store: ReviewContextStore;
  beforeEach(() => {
    store = db.store(STORE);
  });

  it('adds keys once per public key in a tenant, lists a person’s and the active ones, and revokes only a person’s own', async () => {
    expect(await store.addKey(key('rvk_1', 'per_alice', 1))).toBe('added');
    expect(await store.addKey(key('rvk_2', 'per_alice', 1))).toBe('taken');
    expect(await store.addKey(key('rvk_3', 'per_bob', 2))).toBe('added');
    expect(await store.addKey(key('rvk_4', 'per_carol', 1, 'ten_b'))).toBe('added');
    expect((await store.listKeys('ten_a', 'per_alice')).map((k) => k.id)).toEqual(['rvk_1']);
    expect((await store.listKeys('ten_a', 'per_alice'))[0]!.publicKey).toEqual(bytes(32, 1));
    expect((await store.activeKeys('ten_a')).map((k) => k.id)).toEqual(['rvk_1', 'rvk_3']);
    expect(await store.revokeKey('ten_a', 'per_bob', 'rvk_1', LATER)).toBe(false);
    expect(await store.revokeKey('ten_b', 'per_alice', 'rvk_1', LATER)).toBe(false);
    expect(await store.revokeKey('ten_a', 'per_alice', 'rvk_1', LATER)).toBe(true);
    expect(await store.revokeKey('ten_a', 'per_alice', 'rvk_1', LATER)).toBe(false);
    expect((await store.listKeys('ten_a', 'per_alice'))[0]).toMatchObject({ revokedAt: LATER });
    expect((await store.activeKeys('ten_a')).map((k) => k.id)).toEqual(['rvk_3']);
    await store.touchKey('ten_a', 'rvk_3', LATER);
    expect((await store.listKeys('ten_a', 'per_bob'))[0]).toMatchObject({ lastUsedAt: LATER });
  });

  it('replaces an action’s ciphertexts whole, finds and counts them per tenant, and erases them', async () => {
    await store.addKey(key('rvk_1', 'per_alice', 1));
    await store.addKey(key('rvk_3', 'per_bob', 2));
    await store.replaceContexts('ten_a', 'act_1', [context('act_1', 'rvk_1', 5), context('act_1', 'rvk_3', 6)]);
    await store.replaceContexts('ten_a', 'act_2', [context('act_2', 'rvk_1', 7)]);
    expect(await store.countContexts('ten_a', ['act_1', 'act_2', 'act_3'])).toEqual(new Map([['act_1', 2], ['act_2', 1]]));
    expect(await store.countContexts('ten_b', ['act_1'])).toEqual(new Map());
    expect(await store.findContext('ten_a', 'act_1', 'rvk_3')).toEqual(context('act_1', 'rvk_3', 6));
    expect(await store.findContext('ten_b', 'act_1', 'rvk_3')).toBeUndefined();
    await store.replaceContexts('ten_a', 'act_1', [context('act_1', 'rvk_3', 8)]);
    expect(await store.findContext('ten_a', 'act_1', 'rvk_1')).toBeUndefined();
    expect((await store.findContext('ten_a', 'act_1', 'rvk_3'))!.ct).toEqual(bytes(40, 9));
    // Revoking a key erases what was sealed to it.
    expect(await store.revokeKey('ten_a', 'per_alice', 'rvk_1', LATER)).toBe(true);
    expect(await store.findContext('ten_a', 'act_2', 'rvk_1')).toBeUndefined();
    expect(await store.eraseContexts('ten_a', 'act_1')).toBe(1);
    expect(await store.countContexts('ten_a', ['act_1', 'act_2'])).toEqual(new Map());
  });

  it('records a paused action’s submitter once, and forgets it with its ciphertexts when the review ends', async () => {
    await store.addKey(key('rvk_1', 'per_alice', 1));
    await store.recordSubmitter({ tenantId: 'ten_a', actionKey: 'act_1', principalId: 'per_bob', credentialId: 'key_1' });
    await store.recordSubmitter({ tenantId: 'ten_a', actionKey: 'act_1', principalId: 'per_eve', credentialId: 'key_2' });
    expect(await store.findSubmitter('ten_a', 'act_1')).toEqual({ tenantId: 'ten_a', actionKey: 'act_1', principalId: 'per_bob', credentialId: 'key_1' });
    expect(await store.findSubmitter('ten_b', 'act_1')).toBeUndefined();
    await store.replaceContexts('ten_a', 'act_1', [context('act_1', 'rvk_1', 5)]);
    await store.forgetAction('ten_a', 'act_1');
    expect(await store.findSubmitter('ten_a', 'act_1')).toBeUndefined();
    expect(await store.countContexts('ten_a', ['act_1'])).toEqual(new Map());
  });

  it('erases, as orphans, ciphertexts and submitters of actions with no open review item', async () => {
    await store.addKey(key('rvk_1', 'per_alice', 1));
    await store.addKey(key('rvk_4', 'per_carol', 3, 'ten_b'));
    await store.replaceContexts('ten_a', 'act_1', [context('act_1', 'rvk_1', 5)]);
    await store.replaceContexts('ten_b', 'act_9', [context('act_9', 'rvk_4', 5, 'ten_b')]);
    await store.recordSubmitter({ tenantId: 'ten_a', actionKey: 'act_1', principalId: 'per_bob', credentialId: 'key_1' });
    expect(await store.eraseOrphans(LATER, 1)).toBe(1);
    expect(await store.eraseOrphans(LATER, 10)).toBe(1);
    expect(await store.eraseOrphans(LATER, 10)).toBe(0);
    expect(await store.findSubmitter('ten_a', 'act_1')).toBeUndefined();
  });
});
