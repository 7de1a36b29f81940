/**
 * TenantStore over SQLite (migrations/0001_tenants.sql). Statements are prepared once.
 * better-sqlite3 binds Buffers, not plain Uint8Arrays, hence the Buffer.from at the edges.
 */
import type { Sync } from '../core/async-store.ts';
import type { ApiKeyMatch } from '../core/auth.ts';
import type { Db } from '../core/db.ts';
import { billingFromRow, checkoutFromRow, keyFromRow, keyMatchFromRow, personFromRow, sessionFromRow, tenantFromRow } from './rows.ts';
import type { ApiKeyRow, BillingRow, CheckoutRow, KeyMatchRow, PersonRow, SessionRow, TenantRow } from './rows.ts';
import type { AccountStore, NewApiKeyRow, NewSandboxTenant, PersonRecord, TenantStore } from './store.ts';

export function createSqliteTenantStore(db: Db): Sync<TenantStore> {
  const insertTenant = db.prepare(
    `INSERT INTO tenants (id, kind, display_name, retain_statutory_metadata, created_at, updated_at)
     VALUES (@id, @kind, @displayName, @retain, @createdAt, @updatedAt)`,
  );
  const signupExists = db.prepare<[Buffer], { found: number }>('SELECT 1 AS found FROM sandbox_signups WHERE email_digest = ?');
  const insertSignup = db.prepare('INSERT INTO sandbox_signups (email_digest, tenant_id, created_at) VALUES (?, ?, ?)');
  const addKey = prepareKeyInsert(db);
  const insertPerson = preparePersonInsert(db);
  const selectTenant = db.prepare<[string], TenantRow>('SELECT * FROM tenants WHERE id = ?');
  const selectKeys = db.prepare<[string], ApiKeyRow>(
    `SELECT id, tenant_id, prefix, last_four, status, created_at, revoked_at
     FROM api_keys WHERE tenant_id = ? ORDER BY id`,
  );
  const selectActiveKeyByHash = db.prepare<[Buffer], KeyMatchRow>(
    `SELECT k.id, k.tenant_id, t.kind, k.key_sha256
     FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
     WHERE k.key_sha256 = ? AND k.status = 'active'`,
  );

  // Auth resolves a key on every request, so active keys are cached (only hits, so unknown keys
  // cannot fill it). Another process or connection may revoke a key at any time, so before each
  // cached answer the credential version (migrations/0007: bumped by triggers on every key or
  // tenant-kind change) is read, one primary-key row, and a changed version empties the cache:
  // a revocation committed anywhere is seen by the very next request in every process.
  const activeKeys = new Map<string, ApiKeyMatch>();
  const ACTIVE_KEY_CACHE_LIMIT = 10_000;
  const selectCredentialVersion = db.prepare<[], number>('SELECT version FROM credential_version WHERE id = 1').pluck();
  let cachedVersion = -1;
  const forgetIfChanged = () => {
    const version = selectCredentialVersion.get() ?? -1;
    if (version !== cachedVersion) {
      activeKeys.clear();
      cachedVersion = version;
    }
  };

  const revokeKey = db.prepare(
    "UPDATE api_keys SET status = 'revoked', revoked_at = ? WHERE tenant_id = ? AND id = ? AND status = 'active'",
  );

  const createSandbox = db.transaction((input: NewSandboxTenant): 'created' | 'email_taken' => {
    if (signupExists.get(Buffer.from(input.emailDigest))) return 'email_taken';
    const t = input.tenant;
    insertTenant.run({
      id: t.id,
      kind: t.kind,
      displayName: t.displayName,
      retain: t.retainStatutoryMetadata ? 1 : 0,
      createdAt: t.createdAt,
      updatedAt: t.updatedAt,
    });
    insertSignup.run(Buffer.from(input.emailDigest), t.id, t.createdAt);
    insertPerson(input.owner);
    addKey(input.key);
    return 'created';
  });

  return {
    // IMMEDIATE: take the write lock before the existence check, so two signups for one
    // email cannot both pass it (one sandbox per email, interface-spec Limits).
    createSandboxTenant: (input) => createSandbox.immediate(input),

    getTenant(tenantId) {
      const row = selectTenant.get(tenantId);
      return row && tenantFromRow(row);
    },

    addApiKey(key) {
      addKey(key);
    },

    revokeApiKey(tenantId, keyId, revokedAt) {
      return revokeKey.run(revokedAt, tenantId, keyId).changes === 1;
    },

    listApiKeys(tenantId) {
      return selectKeys.all(tenantId).map(keyFromRow);
    },

    findActiveApiKeyByHash(keyHash): ApiKeyMatch | undefined {
      forgetIfChanged();
      const id = Buffer.from(keyHash).toString('hex');
      const cached = activeKeys.get(id);
      if (cached) return cached;
      const row = selectActiveKeyByHash.get(Buffer.from(keyHash));
      if (!row) return undefined;
      const match = keyMatchFromRow(row);
      if (activeKeys.size >= ACTIVE_KEY_CACHE_LIMIT) activeKeys.clear();
      activeKeys.set(id, match);
      return match;
    },
  };
}

function prepareKeyInsert(db: Db): (key: NewApiKeyRow) => void {
  const insert = db.prepare(
    `INSERT INTO api_keys (id, tenant_id, key_sha256, prefix, last_four, created_at, person_id)
     VALUES (@id, @tenantId, @keyHash, @prefix, @lastFour, @createdAt, @personId)`,
  );
  return (key) => insert.run({ ...key, keyHash: Buffer.from(key.keyHash), personId: key.personId ?? null });
}

function preparePersonInsert(db: Db): (p: PersonRecord) => void {
  const insert = db.prepare(
    `INSERT INTO people (id, tenant_id, email_digest, role, capabilities, created_at)
     VALUES (@id, @tenantId, @emailDigest, @role, @capabilities, @createdAt)`,
  );
  return (p) => insert.run({ ...p, emailDigest: Buffer.from(p.emailDigest), capabilities: JSON.stringify(p.capabilities) });
}

export function createSqliteAccountStore(db: Db): Sync<AccountStore> {
  const insertPerson = preparePersonInsert(db);
  const addKey = prepareKeyInsert(db);
  const selectPerson = db.prepare<[string], PersonRow>('SELECT * FROM people WHERE id = ?');
  const selectKeyPerson = db.prepare<[string], PersonRow>('SELECT p.* FROM api_keys k JOIN people p ON p.id = k.person_id WHERE k.id = ?');
  const personExists = db.prepare<[string, Buffer], { found: number }>('SELECT 1 AS found FROM people WHERE tenant_id = ? AND email_digest = ?');
  const insertSession = db.prepare(
    `INSERT INTO account_sessions (id, token_sha256, csrf_sha256, tenant_id, person_id, key_id, created_at, expires_at)
     VALUES (@id, @tokenHash, @csrfHash, @tenantId, @personId, @keyId, @createdAt, @expiresAt)`,
  );
  // RFC 3339 UTC timestamps with fixed-width milliseconds compare correctly as text.
  const selectLiveSession = db.prepare<[Buffer, string], SessionRow>(
    `SELECT s.id, s.tenant_id, t.kind, s.person_id, s.token_sha256, s.csrf_sha256, s.expires_at
     FROM account_sessions s JOIN tenants t ON t.id = s.tenant_id
     WHERE s.token_sha256 = ? AND s.revoked_at IS NULL AND s.expires_at > ?`,
  );
  const revoke = db.prepare('UPDATE account_sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
  const rename = db.prepare('UPDATE tenants SET display_name = ?, updated_at = ? WHERE id = ?');
  const retain = db.prepare('UPDATE tenants SET retain_statutory_metadata = ?, updated_at = ? WHERE id = ?');
  const selectBilling = db.prepare<[string], BillingRow>(
    'SELECT provider, customer_ref FROM tenant_billing WHERE tenant_id = ?',
  );
  const insertBilling = db.prepare('INSERT INTO tenant_billing (tenant_id, provider, customer_ref, created_at) VALUES (?, ?, ?, ?)');
  const insertCheckout = db.prepare(
    `INSERT INTO billing_checkouts (id, tenant_id, person_id, provider, provider_ref, status, customer_ref, created_at, completed_at)
     VALUES (@id, @tenantId, @personId, @provider, @providerRef, @status, @customerRef, @createdAt, @completedAt)`,
  );
  const selectCheckout = db.prepare<[string, string], CheckoutRow>('SELECT * FROM billing_checkouts WHERE id = ? AND tenant_id = ?');
  const selectCheckoutByRef = db.prepare<[string, string], CheckoutRow>('SELECT * FROM billing_checkouts WHERE provider = ? AND provider_ref = ?');
  const verifyCheckout = db.prepare(
    "UPDATE billing_checkouts SET status = 'verified', customer_ref = coalesce(?, customer_ref) WHERE id = ? AND status = 'open'",
  );
  const promote = db.prepare("UPDATE tenants SET kind = 'production', updated_at = ? WHERE id = ? AND kind = 'sandbox'");
  const revokeSandboxKeys = db.prepare(
    "UPDATE api_keys SET status = 'revoked', revoked_at = ? WHERE tenant_id = ? AND prefix = 'svc_test_' AND status = 'active'",
  );
  const completeCheckout = db.prepare("UPDATE billing_checkouts SET status = 'completed', completed_at = ? WHERE id = ?");

  const addPerson = db.transaction((person: PersonRecord, key: NewApiKeyRow): 'created' | 'email_taken' => {
    if (personExists.get(person.tenantId, Buffer.from(person.emailDigest))) return 'email_taken';
    insertPerson(person);
    addKey(key);
    return 'created';
  });

  const upgrade = db.transaction((u: Parameters<AccountStore['upgradeToProduction']>[0]): 'upgraded' | 'not_sandbox' => {
    if (promote.run(u.at, u.tenantId).changes !== 1) return 'not_sandbox';
    insertBilling.run(u.tenantId, u.provider, u.customerRef, u.at);
    revokeSandboxKeys.run(u.at, u.tenantId);
    addKey(u.newKey);
    completeCheckout.run(u.at, u.checkoutId);
    return 'upgraded';
  });

  return {
    getKeyPerson(keyId) {
      const row = selectKeyPerson.get(keyId);
      return row ? personFromRow(row) : null;
    },
    addPerson: (person, key) => addPerson.immediate(person, key),
    createSession(row) {
      insertSession.run({ ...row, tokenHash: Buffer.from(row.tokenHash), csrfHash: Buffer.from(row.csrfHash) });
    },
    findLiveSession(tokenHash, now) {
      const row = selectLiveSession.get(Buffer.from(tokenHash), now);
      if (!row) return undefined;
      const personRow = row.person_id === null ? undefined : selectPerson.get(row.person_id);
      return sessionFromRow(row, personRow ? personFromRow(personRow) : null);
    },
    revokeSession(sessionId, at) {
      revoke.run(at, sessionId);
    },
    updateTenant: db.transaction((tenantId: string, changes: { displayName?: string; retainStatutoryMetadata?: boolean }, at: string) => {
      if (changes.displayName !== undefined) rename.run(changes.displayName, at, tenantId);
      if (changes.retainStatutoryMetadata !== undefined) retain.run(changes.retainStatutoryMetadata ? 1 : 0, at, tenantId);
    }),
    getTenantBilling(tenantId) {
      return billingFromRow(selectBilling.get(tenantId));
    },
    createCheckout(row) {
      insertCheckout.run(row);
    },
    getCheckout(tenantId, checkoutId) {
      const row = selectCheckout.get(checkoutId, tenantId);
      return row && checkoutFromRow(row);
    },
    findCheckoutByProviderRef(provider, providerRef) {
      const row = selectCheckoutByRef.get(provider, providerRef);
      return row && checkoutFromRow(row);
    },
    markCheckoutVerified(checkoutId, customerRef) {
      verifyCheckout.run(customerRef, checkoutId);
    },
    upgradeToProduction: (input) => upgrade.immediate(input),
  };
}
