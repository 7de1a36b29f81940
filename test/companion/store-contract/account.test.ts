/** Tenants, keys, people, sessions and checkouts (account capability) behave the same on SQLite and PostgreSQL. */
import { beforeEach, describe, expect, it } from 'vitest';
import { createPostgresAccountStore, createPostgresTenantStore } from '../../../companion/account/postgres-store.ts';
import { createSqliteAccountStore, createSqliteTenantStore } from '../../../companion/account/sqlite-store.ts';
import type {
  AccountStore,
  CheckoutRecord,
  NewApiKeyRow,
  NewSandboxTenant,
  NewSessionRow,
  PersonRecord,
  TenantStore,
} from '../../../companion/account/store.ts';
import { databasePerCase, engines, race } from './engines.ts';
import type { StoreFactories } from './engines.ts';

const TENANTS: StoreFactories<TenantStore> = { sqlite: createSqliteTenantStore, postgres: createPostgresTenantStore };
const ACCOUNT: StoreFactories<AccountStore> = { sqlite: createSqliteAccountStore, postgres: createPostgresAccountStore };

const AT = '2025-01-01T00:00:00.000Z';
const LATER = '2025-01-02T00:00:00.000Z';
const LATEST = '2025-01-03T00:00:00.000Z';

/** 32 bytes of `n`: a stand-in SHA-256 digest. */
const digest = (n: number) => new Uint8Array(32).fill(n);

function key(id: string, tenantId: string, hash: number, over: Partial<NewApiKeyRow> = {}): NewApiKeyRow {
  return { id, tenantId, keyHash: digest(hash), prefix: 'svc_test_', lastFour: id.slice(-4).padStart(4, '0'), createdAt: AT, ...over };
}

function person(id: string, tenantId: string, email: number, over: Partial<PersonRecord> = {}): PersonRecord {
  return { id, tenantId, emailDigest: digest(email), role: 'member', capabilities: ['records:read', 'policy:write'], createdAt: AT, ...over };
}

/** A sandbox for tenant `ten_<n>` whose owner per_<n> signed up with email digest `email`. */
function sandbox(n: number, email: number, retain = false): NewSandboxTenant {
  const tenantId = `ten_${n}`;
  return {
    tenant: { id: tenantId, kind: 'sandbox', displayName: `Tenant ${n}`, retainStatutoryMetadata: retain, createdAt: AT, updatedAt: AT },
    emailDigest: digest(email),
    owner: person(`per_${n}`, tenantId, email, { role: 'owner', capabilities: ['owner'] }),
    key: key(`key_${n}`, tenantId, 100 + n, { personId: `per_${n}` }),
  };
}

function checkout(id: string, tenantId: string, personId: string, over: Partial<CheckoutRecord> = {}): CheckoutRecord {
  return {
    id,
    tenantId,
    personId,
    provider: 'stripe',
    providerRef: `cs_${id}`,
    status: 'open',
    customerRef: null,
    createdAt: AT,
    completedAt: null,
    ...over,
  };
}

function session(id: string, tenantId: string, personId: string | null, keyId: string, token: number, expiresAt = LATER): NewSessionRow {
  return { id, tokenHash: digest(token), csrfHash: digest(token + 1), tenantId, personId, keyId, createdAt: AT, expiresAt };
}

describe.each(engines())('account stores on $name', (engine) => {
  const db = databasePerCase(engine);
  let tenants: TenantStore;
  let account: AccountStore;
  const count = async (table: string) => (await db.rows<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))[0]!.n;

  beforeEach(() => {
    tenants = db.store(TENANTS);
    account = db.store(ACCOUNT);
  });

  describe('tenants and keys', () => {
    it('creates a sandbox with its marker, owner and first key', async () => {
      expect(await tenants.createSandboxTenant(sandbox(1, 1))).toBe('created');
      expect(await tenants.createSandboxTenant(sandbox(2, 2, true))).toBe('created');
      expect(await tenants.getTenant('ten_1')).toEqual({
        id: 'ten_1',
        kind: 'sandbox',
        displayName: 'Tenant 1',
        retainStatutoryMetadata: false,
        createdAt: AT,
        updatedAt: AT,
      });
      expect((await tenants.getTenant('ten_2'))?.retainStatutoryMetadata).toBe(true);
      expect(await tenants.getTenant('ten_nope')).toBeUndefined();
      expect(await db.rows('SELECT tenant_id, created_at FROM sandbox_signups ORDER BY tenant_id')).toEqual([
        { tenant_id: 'ten_1', created_at: AT },
        { tenant_id: 'ten_2', created_at: AT },
      ]);
      expect(await tenants.listApiKeys('ten_1')).toEqual([
        { id: 'key_1', tenantId: 'ten_1', prefix: 'svc_test_', lastFour: 'ey_1', status: 'active', createdAt: AT, revokedAt: null },
      ]);
      const owner = await account.getKeyPerson('key_1');
      expect(owner).toEqual({ id: 'per_1', tenantId: 'ten_1', emailDigest: digest(1), role: 'owner', capabilities: ['owner'], createdAt: AT });
      expect(owner?.emailDigest).toBeInstanceOf(Uint8Array);
    });

    it("answers 'email_taken' for an email that already has a sandbox, writing nothing", async () => {
      expect(await tenants.createSandboxTenant(sandbox(1, 7))).toBe('created');
      expect(await tenants.createSandboxTenant(sandbox(2, 7))).toBe('email_taken');
      expect(await tenants.getTenant('ten_2')).toBeUndefined();
      expect([await count('tenants'), await count('people'), await count('api_keys'), await count('sandbox_signups')]).toEqual([1, 1, 1, 1]);
    });

    it('writes nothing of a sandbox whose key cannot be stored', async () => {
      await tenants.createSandboxTenant(sandbox(1, 1));
      const clash = { ...sandbox(2, 2), key: key('key_2', 'ten_2', 101) }; // ten_1's key hash
      await expect(tenants.createSandboxTenant(clash)).rejects.toThrow();
      expect(await tenants.getTenant('ten_2')).toBeUndefined();
      expect([await count('tenants'), await count('people'), await count('api_keys'), await count('sandbox_signups')]).toEqual([1, 1, 1, 1]);
      // The email was not taken by the failed attempt.
      expect(await tenants.createSandboxTenant(sandbox(3, 2))).toBe('created');
    });

    it('rolls a sandbox back with the transaction it was created in', async () => {
      await expect(
        db.transaction(async (tx) => {
          expect(await tx.store(TENANTS).createSandboxTenant(sandbox(1, 1))).toBe('created');
          expect(await tx.store(TENANTS).getTenant('ten_1')).toBeDefined();
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      expect(await tenants.getTenant('ten_1')).toBeUndefined();
      expect(await count('sandbox_signups')).toBe(0);
      expect(await tenants.createSandboxTenant(sandbox(2, 1))).toBe('created');
    });

    it("answers 'email_taken' inside a transaction and leaves it usable", async () => {
      await tenants.createSandboxTenant(sandbox(1, 1));
      const outcome = await db.transaction(async (tx) => {
        const t = tx.store(TENANTS);
        const taken = await t.createSandboxTenant(sandbox(2, 1));
        expect(await t.createSandboxTenant(sandbox(3, 3))).toBe('created');
        return taken;
      });
      expect(outcome).toBe('email_taken');
      expect(await tenants.getTenant('ten_2')).toBeUndefined();
      expect((await tenants.getTenant('ten_3'))?.id).toBe('ten_3');
    });

    it('adds keys and lists them by id, oldest first', async () => {
      await tenants.createSandboxTenant(sandbox(1, 1));
      await tenants.createSandboxTenant(sandbox(2, 2));
      await tenants.addApiKey(key('key_3', 'ten_1', 3, { lastFour: 'zzzz', createdAt: LATER }));
      await tenants.addApiKey(key('key_0', 'ten_1', 4, { prefix: 'svc_live_', lastFour: 'aaaa' }));
      expect((await tenants.listApiKeys('ten_1')).map((k) => [k.id, k.prefix, k.lastFour, k.createdAt])).toEqual([
        ['key_0', 'svc_live_', 'aaaa', AT],
        ['key_1', 'svc_test_', 'ey_1', AT],
        ['key_3', 'svc_test_', 'zzzz', LATER],
      ]);
      expect((await tenants.listApiKeys('ten_2')).map((k) => k.id)).toEqual(['key_2']);
      expect(await tenants.listApiKeys('ten_nope')).toEqual([]);
      // A key minted with no person stores NULL.
      expect(await db.rows('SELECT person_id FROM api_keys WHERE id = ?', 'key_3')).toEqual([{ person_id: null }]);
      await expect(tenants.addApiKey(key('key_9', 'ten_1', 3))).rejects.toThrow(); // its hash is taken
    });

    it('finds only active keys by hash, with the tenant kind', async () => {
      await tenants.createSandboxTenant(sandbox(1, 1));
      const match = await tenants.findActiveApiKeyByHash(digest(101));
      expect(match).toEqual({ keyId: 'key_1', tenantId: 'ten_1', tenantKind: 'sandbox', keyHash: digest(101) });
      expect(match?.keyHash).toBeInstanceOf(Uint8Array);
      expect(await tenants.findActiveApiKeyByHash(digest(99))).toBeUndefined();
      // A revocation is seen by the next lookup, even after a hit (SQLite caches hits).
      expect(await tenants.revokeApiKey('ten_1', 'key_1', LATER)).toBe(true);
      expect(await tenants.findActiveApiKeyByHash(digest(101))).toBeUndefined();
    });

    it('revokes a key of its own tenant once', async () => {
      await tenants.createSandboxTenant(sandbox(1, 1));
      await tenants.createSandboxTenant(sandbox(2, 2));
      expect(await tenants.revokeApiKey('ten_2', 'key_1', LATER)).toBe(false); // another tenant's key
      expect(await tenants.revokeApiKey('ten_1', 'key_nope', LATER)).toBe(false);
      expect(await tenants.revokeApiKey('ten_1', 'key_1', LATER)).toBe(true);
      expect(await tenants.revokeApiKey('ten_1', 'key_1', LATEST)).toBe(false);
      expect(await tenants.listApiKeys('ten_1')).toEqual([
        { id: 'key_1', tenantId: 'ten_1', prefix: 'svc_test_', lastFour: 'ey_1', status: 'revoked', createdAt: AT, revokedAt: LATER },
      ]);
      expect((await tenants.listApiKeys('ten_2'))[0]?.status).toBe('active');
    });

    if (engine.name === 'postgres') it('gives one of two concurrent signups for one email the sandbox', async () => {
      const { meet, done } = race(db);
      const signup = (n: number) =>
        db.transaction(async (tx) => {
          const t = tx.store(TENANTS);
          expect(await t.getTenant(`ten_${n}`)).toBeUndefined();
          await meet(); // both transactions are open before either signs up
          const outcome = await t.createSandboxTenant(sandbox(n, 5));
          await done();
          return outcome;
        });
      const outcomes = await Promise.all([signup(1), signup(2)]);
      expect([...outcomes].sort()).toEqual(['created', 'email_taken']);
      const winner = outcomes[0] === 'created' ? 'ten_1' : 'ten_2';
      expect(await db.rows('SELECT id FROM tenants')).toEqual([{ id: winner }]);
      expect(await db.rows('SELECT tenant_id FROM sandbox_signups')).toEqual([{ tenant_id: winner }]);
      expect([await count('people'), await count('api_keys')]).toEqual([1, 1]);
    });

    if (engine.name === 'postgres') it('revokes a key for only one of two concurrent revocations', async () => {
      await tenants.createSandboxTenant(sandbox(1, 1));
      const { meet, done } = race(db);
      const revoke = (at: string) =>
        db.transaction(async (tx) => {
          const t = tx.store(TENANTS);
          expect((await t.listApiKeys('ten_1'))[0]?.status).toBe('active');
          await meet();
          const revoked = await t.revokeApiKey('ten_1', 'key_1', at);
          await done();
          return revoked;
        });
      const outcomes = await Promise.all([revoke(LATER), revoke(LATEST)]);
      expect([...outcomes].sort()).toEqual([false, true]);
      expect((await tenants.listApiKeys('ten_1'))[0]?.revokedAt).toBe(outcomes[0] ? LATER : LATEST);
    });
  });

  describe('people', () => {
    beforeEach(async () => {
      await tenants.createSandboxTenant(sandbox(1, 1));
      await tenants.createSandboxTenant(sandbox(2, 2));
    });

    it('adds a person with a key, once per email and tenant', async () => {
      expect(await account.addPerson(person('per_a', 'ten_1', 9), key('key_a', 'ten_1', 9, { personId: 'per_a' }))).toBe('created');
      expect(await account.getKeyPerson('key_a')).toEqual({
        id: 'per_a',
        tenantId: 'ten_1',
        emailDigest: digest(9),
        role: 'member',
        capabilities: ['records:read', 'policy:write'],
        createdAt: AT,
      });
      // The same email in the same tenant: nothing written, the key included.
      expect(await account.addPerson(person('per_b', 'ten_1', 9), key('key_b', 'ten_1', 10, { personId: 'per_b' }))).toBe('email_taken');
      expect(await db.rows('SELECT id FROM people WHERE id = ?', 'per_b')).toEqual([]);
      expect((await tenants.listApiKeys('ten_1')).map((k) => k.id)).toEqual(['key_1', 'key_a']);
      // The owner's email too.
      expect(await account.addPerson(person('per_c', 'ten_1', 1), key('key_c', 'ten_1', 11, { personId: 'per_c' }))).toBe('email_taken');
      // The same email in another tenant is another person.
      expect(await account.addPerson(person('per_d', 'ten_2', 9), key('key_d', 'ten_2', 12, { personId: 'per_d' }))).toBe('created');
      expect((await account.getKeyPerson('key_d'))?.tenantId).toBe('ten_2');
    });

    it('writes no person whose key cannot be stored', async () => {
      await expect(account.addPerson(person('per_a', 'ten_1', 9), key('key_a', 'ten_1', 101, { personId: 'per_a' }))).rejects.toThrow();
      expect(await db.rows('SELECT id FROM people WHERE id = ?', 'per_a')).toEqual([]);
      expect(await account.addPerson(person('per_a', 'ten_1', 9), key('key_a', 'ten_1', 9, { personId: 'per_a' }))).toBe('created');
    });

    it('rolls a person back with the transaction', async () => {
      await expect(
        db.transaction(async (tx) => {
          expect(await tx.store(ACCOUNT).addPerson(person('per_a', 'ten_1', 9), key('key_a', 'ten_1', 9, { personId: 'per_a' }))).toBe('created');
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      expect(await account.getKeyPerson('key_a')).toBeNull();
      expect(await count('people')).toBe(2);
    });

    it('has no person for a key minted without one, or for an unknown key', async () => {
      await tenants.addApiKey(key('key_x', 'ten_1', 20));
      expect(await account.getKeyPerson('key_x')).toBeNull();
      expect(await account.getKeyPerson('key_nope')).toBeNull();
    });

    if (engine.name === 'postgres') it('adds only one of two concurrent people with one email', async () => {
      const { meet, done } = race(db);
      const add = (id: string, hash: number) =>
        db.transaction(async (tx) => {
          const a = tx.store(ACCOUNT);
          expect(await a.getKeyPerson(`key_${id}`)).toBeNull();
          await meet();
          const outcome = await a.addPerson(person(`per_${id}`, 'ten_1', 9), key(`key_${id}`, 'ten_1', hash, { personId: `per_${id}` }));
          await done();
          return outcome;
        });
      const outcomes = await Promise.all([add('a', 30), add('b', 31)]);
      expect([...outcomes].sort()).toEqual(['created', 'email_taken']);
      const winner = outcomes[0] === 'created' ? 'a' : 'b';
      expect(await db.rows('SELECT id FROM people WHERE tenant_id = ? AND id <> ?', 'ten_1', 'per_1')).toEqual([{ id: `per_${winner}` }]);
      expect((await tenants.listApiKeys('ten_1')).map((k) => k.id)).toEqual(['key_1', `key_${winner}`]);
    });
  });

  describe('sessions', () => {
    beforeEach(async () => {
      await tenants.createSandboxTenant(sandbox(1, 1));
      await tenants.addApiKey(key('key_x', 'ten_1', 20));
    });

    it('finds a live session with its person, read fresh', async () => {
      await account.createSession(session('ses_1', 'ten_1', 'per_1', 'key_1', 40));
      expect(await account.findLiveSession(digest(40), AT)).toEqual({
        sessionId: 'ses_1',
        tenantId: 'ten_1',
        tenantKind: 'sandbox',
        person: { id: 'per_1', tenantId: 'ten_1', emailDigest: digest(1), role: 'owner', capabilities: ['owner'], createdAt: AT },
        tokenHash: digest(40),
        csrfHash: digest(41),
        expiresAt: LATER,
      });
      const found = await account.findLiveSession(digest(40), AT);
      expect(found?.tokenHash).toBeInstanceOf(Uint8Array);
      expect(found?.person?.emailDigest).toBeInstanceOf(Uint8Array);
      expect(await account.findLiveSession(digest(41), AT)).toBeUndefined(); // the CSRF digest is no token
    });

    it('has person null for a session of a key minted without one', async () => {
      await account.createSession(session('ses_2', 'ten_1', null, 'key_x', 50));
      expect(await account.findLiveSession(digest(50), AT)).toEqual({
        sessionId: 'ses_2',
        tenantId: 'ten_1',
        tenantKind: 'sandbox',
        person: null,
        tokenHash: digest(50),
        csrfHash: digest(51),
        expiresAt: LATER,
      });
    });

    it('finds no expired or revoked session', async () => {
      await account.createSession(session('ses_1', 'ten_1', 'per_1', 'key_1', 40, LATER));
      expect((await account.findLiveSession(digest(40), '2025-01-01T23:59:59.999Z'))?.sessionId).toBe('ses_1');
      expect(await account.findLiveSession(digest(40), LATER)).toBeUndefined(); // expiry is exclusive
      expect(await account.findLiveSession(digest(40), LATEST)).toBeUndefined();
      await account.createSession(session('ses_2', 'ten_1', 'per_1', 'key_1', 60, LATEST));
      await account.revokeSession('ses_2', LATER);
      expect(await account.findLiveSession(digest(60), AT)).toBeUndefined();
      // Revoking again keeps the first revocation time; revoking an unknown session is a no-op.
      await account.revokeSession('ses_2', LATEST);
      await account.revokeSession('ses_nope', LATEST);
      expect(await db.rows('SELECT id, revoked_at FROM account_sessions ORDER BY id')).toEqual([
        { id: 'ses_1', revoked_at: null },
        { id: 'ses_2', revoked_at: LATER },
      ]);
      expect((await account.findLiveSession(digest(40), AT))?.sessionId).toBe('ses_1');
    });
  });

  describe('tenant settings', () => {
    beforeEach(() => tenants.createSandboxTenant(sandbox(1, 1)).then(() => undefined));

    it('changes only what it is given', async () => {
      await account.updateTenant('ten_1', { displayName: 'Renamed' }, LATER);
      expect(await tenants.getTenant('ten_1')).toMatchObject({ displayName: 'Renamed', retainStatutoryMetadata: false, updatedAt: LATER });
      await account.updateTenant('ten_1', { retainStatutoryMetadata: true }, LATEST);
      expect(await tenants.getTenant('ten_1')).toMatchObject({ displayName: 'Renamed', retainStatutoryMetadata: true, updatedAt: LATEST });
      await account.updateTenant('ten_1', { displayName: 'Both', retainStatutoryMetadata: false }, AT);
      expect(await tenants.getTenant('ten_1')).toMatchObject({ displayName: 'Both', retainStatutoryMetadata: false, updatedAt: AT });
      await account.updateTenant('ten_1', {}, LATEST);
      expect(await tenants.getTenant('ten_1')).toMatchObject({ displayName: 'Both', retainStatutoryMetadata: false, updatedAt: AT });
      await account.updateTenant('ten_1', { displayName: undefined, retainStatutoryMetadata: true }, LATER);
      expect(await tenants.getTenant('ten_1')).toMatchObject({ displayName: 'Both', retainStatutoryMetadata: true, updatedAt: LATER });
      await account.updateTenant('ten_nope', { displayName: 'X' }, LATER);
      expect(await tenants.getTenant('ten_nope')).toBeUndefined();
      expect(await db.rows('SELECT retain_statutory_metadata AS r FROM tenants')).toEqual([{ r: 1 }]);
    });
  });

  describe('checkouts and the upgrade', () => {
    beforeEach(async () => {
      await tenants.createSandboxTenant(sandbox(1, 1));
      await tenants.createSandboxTenant(sandbox(2, 2));
    });

    it('keeps checkouts per tenant and finds them by provider reference', async () => {
      const chk = checkout('chk_1', 'ten_1', 'per_1');
      await account.createCheckout(chk);
      await account.createCheckout(checkout('chk_2', 'ten_2', 'per_2', { provider: 'local', providerRef: 'chk_2' }));
      expect(await account.getCheckout('ten_1', 'chk_1')).toEqual(chk);
      expect(await account.getCheckout('ten_2', 'chk_1')).toBeUndefined(); // another tenant's
      expect(await account.getCheckout('ten_1', 'chk_nope')).toBeUndefined();
      expect(await account.findCheckoutByProviderRef('stripe', 'cs_chk_1')).toEqual(chk);
      expect((await account.findCheckoutByProviderRef('local', 'chk_2'))?.tenantId).toBe('ten_2');
      expect(await account.findCheckoutByProviderRef('local', 'cs_chk_1')).toBeUndefined(); // another provider
      await expect(account.createCheckout(checkout('chk_3', 'ten_1', 'per_1', { providerRef: 'cs_chk_1' }))).rejects.toThrow();
    });

    it('verifies only an open checkout, keeping a customer it already has', async () => {
      await account.createCheckout(checkout('chk_1', 'ten_1', 'per_1', { customerRef: 'cus_early' }));
      await account.createCheckout(checkout('chk_2', 'ten_1', 'per_1'));
      await account.markCheckoutVerified('chk_1', null);
      expect(await account.getCheckout('ten_1', 'chk_1')).toMatchObject({ status: 'verified', customerRef: 'cus_early' });
      await account.markCheckoutVerified('chk_1', 'cus_other'); // no longer open
      expect((await account.getCheckout('ten_1', 'chk_1'))?.customerRef).toBe('cus_early');
      await account.markCheckoutVerified('chk_2', 'cus_2');
      expect(await account.getCheckout('ten_1', 'chk_2')).toMatchObject({ status: 'verified', customerRef: 'cus_2', completedAt: null });
      await account.markCheckoutVerified('chk_nope', 'cus_x');
    });

    it('upgrades a sandbox once: kind, billing, keys and checkout together', async () => {
      await tenants.addApiKey(key('key_old', 'ten_1', 21));
      expect(await tenants.revokeApiKey('ten_1', 'key_old', AT)).toBe(true);
      await tenants.addApiKey(key('key_t2', 'ten_1', 22));
      await account.createCheckout(checkout('chk_1', 'ten_1', 'per_1'));
      await account.markCheckoutVerified('chk_1', 'cus_1');
      expect(await account.getTenantBilling('ten_1')).toEqual({ provider: null, customerRef: null });

      const upgrade = {
        tenantId: 'ten_1',
        checkoutId: 'chk_1',
        customerRef: 'cus_1',
        provider: 'stripe' as const,
        newKey: key('key_live', 'ten_1', 23, { prefix: 'svc_live_', personId: 'per_1', createdAt: LATER }),
        at: LATER,
      };
      expect(await account.upgradeToProduction(upgrade)).toBe('upgraded');
      expect(await tenants.getTenant('ten_1')).toMatchObject({ kind: 'production', updatedAt: LATER });
      expect(await account.getTenantBilling('ten_1')).toEqual({ provider: 'stripe', customerRef: 'cus_1' });
      expect((await tenants.listApiKeys('ten_1')).map((k) => [k.id, k.status, k.revokedAt])).toEqual([
        ['key_1', 'revoked', LATER],
        ['key_live', 'active', null],
        ['key_old', 'revoked', AT], // already revoked: keeps its time
        ['key_t2', 'revoked', LATER],
      ]);
      expect(await account.getCheckout('ten_1', 'chk_1')).toMatchObject({ status: 'completed', completedAt: LATER, customerRef: 'cus_1' });
      expect(await tenants.findActiveApiKeyByHash(digest(23))).toMatchObject({ keyId: 'key_live', tenantKind: 'production' });
      expect(await account.getKeyPerson('key_live')).toMatchObject({ id: 'per_1' });
      // The other tenant is untouched.
      expect((await tenants.getTenant('ten_2'))?.kind).toBe('sandbox');
      expect(await account.getTenantBilling('ten_2')).toEqual({ provider: null, customerRef: null });

      // Again: already production, nothing written.
      await account.createCheckout(checkout('chk_2', 'ten_1', 'per_1'));
      const again = { ...upgrade, checkoutId: 'chk_2', newKey: key('key_live2', 'ten_1', 24, { prefix: 'svc_live_' }), at: LATEST };
      expect(await account.upgradeToProduction(again)).toBe('not_sandbox');
      expect((await tenants.listApiKeys('ten_1')).map((k) => k.id)).not.toContain('key_live2');
      expect(await account.getCheckout('ten_1', 'chk_2')).toMatchObject({ status: 'open', completedAt: null });
      expect((await tenants.getTenant('ten_1'))?.updatedAt).toBe(LATER);
      // An unknown tenant is no sandbox either.
      expect(await account.upgradeToProduction({ ...again, tenantId: 'ten_nope' })).toBe('not_sandbox');
    });

    it('upgrades with a provider that made no customer', async () => {
      await account.createCheckout(checkout('chk_1', 'ten_1', 'per_1', { provider: 'local', providerRef: 'chk_1' }));
      const newKey = key('key_live', 'ten_1', 23, { prefix: 'svc_live_' });
      expect(await account.upgradeToProduction({ tenantId: 'ten_1', checkoutId: 'chk_1', customerRef: null, provider: 'local', newKey, at: LATER })).toBe(
        'upgraded',
      );
      expect(await account.getTenantBilling('ten_1')).toEqual({ provider: 'local', customerRef: null });
    });

    it('writes nothing of an upgrade whose key cannot be stored', async () => {
      await account.createCheckout(checkout('chk_1', 'ten_1', 'per_1'));
      const newKey = key('key_live', 'ten_1', 102, { prefix: 'svc_live_' }); // ten_2's key hash
      await expect(
        account.upgradeToProduction({ tenantId: 'ten_1', checkoutId: 'chk_1', customerRef: 'cus_1', provider: 'stripe', newKey, at: LATER }),
      ).rejects.toThrow();
      expect((await tenants.getTenant('ten_1'))?.kind).toBe('sandbox');
      expect(await account.getTenantBilling('ten_1')).toEqual({ provider: null, customerRef: null });
      expect((await tenants.listApiKeys('ten_1')).map((k) => k.status)).toEqual(['active']);
      expect((await account.getCheckout('ten_1', 'chk_1'))?.status).toBe('open');
    });

    it('rolls an upgrade back with the transaction', async () => {
      await account.createCheckout(checkout('chk_1', 'ten_1', 'per_1'));
      const newKey = key('key_live', 'ten_1', 23, { prefix: 'svc_live_' });
      await expect(
        db.transaction(async (tx) => {
          const a = tx.store(ACCOUNT);
          expect(await a.upgradeToProduction({ tenantId: 'ten_1', checkoutId: 'chk_1', customerRef: null, provider: 'local', newKey, at: LATER })).toBe(
            'upgraded',
          );
          expect((await tx.store(TENANTS).getTenant('ten_1'))?.kind).toBe('production');
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      expect((await tenants.getTenant('ten_1'))?.kind).toBe('sandbox');
      expect(await tenants.findActiveApiKeyByHash(digest(101))).toMatchObject({ keyId: 'key_1', tenantKind: 'sandbox' });
      expect(await tenants.findActiveApiKeyByHash(digest(23))).toBeUndefined();
    });

    if (engine.name === 'postgres') it('upgrades a sandbox for only one of two concurrent upgrades', async () => {
      await account.createCheckout(checkout('chk_a', 'ten_1', 'per_1'));
      await account.createCheckout(checkout('chk_b', 'ten_1', 'per_1'));
      const { meet, done } = race(db);
      const upgrade = (id: 'a' | 'b', hash: number) =>
        db.transaction(async (tx) => {
          const a = tx.store(ACCOUNT);
          expect((await tx.store(TENANTS).getTenant('ten_1'))?.kind).toBe('sandbox');
          await meet(); // both have seen a sandbox
          const newKey = key(`key_live_${id}`, 'ten_1', hash, { prefix: 'svc_live_' });
          const outcome = await a.upgradeToProduction({ tenantId: 'ten_1', checkoutId: `chk_${id}`, customerRef: `cus_${id}`, provider: 'stripe', newKey, at: LATER });
          await done();
          return outcome;
        });
      const outcomes = await Promise.all([upgrade('a', 23), upgrade('b', 24)]);
      expect([...outcomes].sort()).toEqual(['not_sandbox', 'upgraded']);
      const [winner, loser] = outcomes[0] === 'upgraded' ? ['a', 'b'] : ['b', 'a'];
      expect(await account.getTenantBilling('ten_1')).toEqual({ provider: 'stripe', customerRef: `cus_${winner}` });
      expect((await tenants.listApiKeys('ten_1')).map((k) => [k.id, k.status])).toEqual([
        ['key_1', 'revoked'],
        [`key_live_${winner}`, 'active'],
      ]);
      expect((await account.getCheckout('ten_1', `chk_${winner}`))?.status).toBe('completed');
      expect((await account.getCheckout('ten_1', `chk_${loser}`))?.status).toBe('open');
    });
  });
});
