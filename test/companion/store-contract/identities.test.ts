/**
 * Linked identities (migrations/0018, companion/account/identities.ts) on both engines: one
 * person per provider and subject in a tenant, decided by the insert itself; lookups stay inside
 * the tenant; a person is found by the digest of their email.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { createPostgresAccountStore } from '../../../companion/account/postgres-store.ts';
import { createSqliteAccountStore } from '../../../companion/account/sqlite-store.ts';
import type { AccountStore, IdentityRecord } from '../../../companion/account/store.ts';
import { databasePerCase, engines, seedTenants } from './engines.ts';
import type { StoreFactories } from './engines.ts';

const ACCOUNT: StoreFactories<AccountStore> = { sqlite: createSqliteAccountStore, postgres: createPostgresAccountStore };
const AT = '2025-01-01T00:00:00.000Z';
const digest = (n: number) => new Uint8Array(32).fill(n);

const identity = (id: string, tenantId: string, personId: string, subject: string): IdentityRecord => ({ id, tenantId, personId, provider: 'slack:T0123ABCD', subject, createdAt: AT });

describe.each(engines())('linked identities on $name', (engine) => {
  const db = databasePerCase(engine, async (fresh) => {
    await seedTenants(fresh, ['ten_a', 'ten_b'], AT);
    for (const [id, tenant, n] of [['per_a1', 'ten_a', 1], ['per_a2', 'ten_a', 2], ['per_b1', 'ten_b', 3]] as const) {
      await fresh.exec(`INSERT INTO people (id, tenant_id, email_digest, role, capabilities, created_at) VALUES (?, ?, ?, 'member', '[]', ?)`, id, tenant, Buffer.from(digest(n)), AT);
    }
  });
  let account: AccountStore;
  beforeEach(() => {
    account = db.store(ACCOUNT);
  });

  it('links a platform user to one person of a tenant; the same user in another tenant is another link', async () => {
    expect(await account.linkIdentity(identity('idn_1', 'ten_a', 'per_a1', 'U1'))).toBe('linked');
    expect(await account.linkIdentity(identity('idn_2', 'ten_a', 'per_a2', 'U1'))).toBe('taken');
    expect(await account.linkIdentity(identity('idn_3', 'ten_b', 'per_b1', 'U1'))).toBe('linked');
    expect(await account.findIdentity('ten_a', 'slack:T0123ABCD', 'U1')).toEqual(identity('idn_1', 'ten_a', 'per_a1', 'U1'));
    expect((await account.findIdentity('ten_b', 'slack:T0123ABCD', 'U1'))?.personId).toBe('per_b1');
    expect(await account.findIdentity('ten_a', 'slack:T0123ABCD', 'U2')).toBeUndefined();
    expect(await account.listIdentities('ten_a', 'per_a2')).toEqual([]);
  });

  it('unlinks only the tenant’s own person’s identity', async () => {
    await account.linkIdentity(identity('idn_1', 'ten_a', 'per_a1', 'U1'));
    expect(await account.unlinkIdentity('ten_b', 'per_a1', 'idn_1')).toBe(false);
    expect(await account.unlinkIdentity('ten_a', 'per_a2', 'idn_1')).toBe(false);
    expect(await account.unlinkIdentity('ten_a', 'per_a1', 'idn_1')).toBe(true);
    expect(await account.listIdentities('ten_a', 'per_a1')).toEqual([]);
    expect(await account.linkIdentity(identity('idn_2', 'ten_a', 'per_a2', 'U1'))).toBe('linked');
  });

  it('finds a person by the digest of their email, in their tenant only', async () => {
    expect(await account.findPersonIdByEmailDigest('ten_a', digest(2))).toBe('per_a2');
    expect(await account.findPersonIdByEmailDigest('ten_b', digest(2))).toBeUndefined();
  });
});
