/**
 * TenantStore over SQLite (migrations/0001_tenants.sql). Statements are prepared once.
 * better-sqlite3 binds Buffers, not plain Uint8Arrays, hence the Buffer.from at the edges.
 */
import type { Sync } from '../core/async-store.ts';
import type { ApiKeyMatch, ResolvedApiKey } from '../core/auth.ts';
import type { Db } from '../core/db.ts';
import { PRINCIPAL_COLUMNS, principalFromJoin } from './principals.ts';
import type { PrincipalJoinRow, PrincipalRecord } from './principals.ts';
import { billingFromRow, checkoutFromRow, identityFromRow, keyDetailFromRow, keyFromRow, keyMatchFromRow, personFromRow, resolvedKeyFromRow, sessionFromRow, tenantFromRow } from './rows.ts';
import type { ApiKeyDetailRow, ApiKeyRow, BillingRow, CheckoutRow, IdentityRow, KeyMatchRow, PersonRow, ResolvedKeyRow, SessionRow, TenantRow } from './rows.ts';
import type { AccountStore, AdminReceiptRow, NewApiKeyRow, NewSandboxTenant, PersonRecord, PrincipalChange, PrincipalChangeOutcome, TenantStore } from './store.ts';

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

  const selectResolvedKey = db.prepare<[Buffer], ResolvedKeyRow>(
    `SELECT k.id, t.kind, k.key_sha256, k.expires_at, k.last_used_at, ${PRINCIPAL_COLUMNS}
     FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
     LEFT JOIN people p ON p.id = k.person_id
     LEFT JOIN service_accounts a ON a.id = k.service_account_id
     WHERE k.key_sha256 = ? AND k.status = 'active'`,
  );
  // The same cache discipline as activeKeys: the credential version (migrations/0007, 0016) is
  // bumped by every change to a key, person or service account that a cached answer carries.
  const resolvedKeys = new Map<string, ResolvedApiKey>();
  let resolvedVersion = -1;
  const touchKey = db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?');

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

    resolveApiKey(keyHash): ResolvedApiKey | undefined {
      const version = selectCredentialVersion.get() ?? -1;
      if (version !== resolvedVersion) {
        resolvedKeys.clear();
        resolvedVersion = version;
      }
      const id = Buffer.from(keyHash).toString('hex');
      const cached = resolvedKeys.get(id);
      if (cached) return cached;
      const row = selectResolvedKey.get(Buffer.from(keyHash));
      if (!row) return undefined;
      const match = resolvedKeyFromRow(row);
      if (resolvedKeys.size >= ACTIVE_KEY_CACHE_LIMIT) resolvedKeys.clear();
      resolvedKeys.set(id, match);
      return match;
    },

    touchApiKey(keyId, at) {
      touchKey.run(at, keyId);
    },

    credentialVersion() {
      return selectCredentialVersion.get() ?? -1;
    },
  };
}

function prepareKeyInsert(db: Db): (key: NewApiKeyRow) => void {
  const insert = db.prepare(
    `INSERT INTO api_keys (id, tenant_id, key_sha256, prefix, last_four, created_at, person_id, service_account_id, label, capabilities, expires_at)
     VALUES (@id, @tenantId, @keyHash, @prefix, @lastFour, @createdAt, @personId, @serviceAccountId, @label, @capabilities, @expiresAt)`,
  );
  return (key) =>
    insert.run({
      id: key.id,
      tenantId: key.tenantId,
      keyHash: Buffer.from(key.keyHash),
      prefix: key.prefix,
      lastFour: key.lastFour,
      createdAt: key.createdAt,
      personId: key.personId ?? null,
      serviceAccountId: key.serviceAccountId ?? null,
      label: key.label ?? null,
      capabilities: key.capabilities ? JSON.stringify(key.capabilities) : null,
      expiresAt: key.expiresAt ?? null,
    });
}

function preparePersonInsert(db: Db): (p: PersonRecord) => void {
  const insert = db.prepare(
    `INSERT INTO people (id, tenant_id, email_digest, role, capabilities, created_at, display_name, email)
     VALUES (@id, @tenantId, @emailDigest, @role, @capabilities, @createdAt, @displayName, @email)`,
  );
  return (p) =>
    insert.run({
      id: p.id,
      tenantId: p.tenantId,
      emailDigest: Buffer.from(p.emailDigest),
      role: p.role,
      capabilities: JSON.stringify(p.capabilities),
      createdAt: p.createdAt,
      displayName: p.displayName ?? null,
      email: p.email ?? null,
    });
}

/** People and service accounts as principals (the key columns null: no subset applies). */
const PRINCIPAL_FROM = `FROM (SELECT @tenantId AS tenant_id, NULL AS capabilities) k`;

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

  const selectSessionPrincipal = db.prepare<[string], PrincipalJoinRow>(
    `SELECT ${PRINCIPAL_COLUMNS}
     FROM account_sessions s JOIN api_keys k ON k.id = s.key_id
     LEFT JOIN people p ON p.id = s.person_id
     LEFT JOIN service_accounts a ON s.person_id IS NULL AND a.id = k.service_account_id
     WHERE s.id = ?`,
  );
  const selectPersonPrincipal = db.prepare<{ tenantId: string; id: string }, PrincipalJoinRow>(
    `SELECT ${PRINCIPAL_COLUMNS} ${PRINCIPAL_FROM}
     JOIN people p ON p.tenant_id = k.tenant_id AND p.id = @id
     LEFT JOIN service_accounts a ON 0`,
  );
  const selectServicePrincipal = db.prepare<{ tenantId: string; id: string }, PrincipalJoinRow>(
    `SELECT ${PRINCIPAL_COLUMNS} ${PRINCIPAL_FROM}
     LEFT JOIN people p ON 0
     JOIN service_accounts a ON a.tenant_id = k.tenant_id AND a.id = @id`,
  );
  const selectPeoplePrincipals = db.prepare<{ tenantId: string }, PrincipalJoinRow>(
    `SELECT ${PRINCIPAL_COLUMNS} ${PRINCIPAL_FROM}
     JOIN people p ON p.tenant_id = k.tenant_id
     LEFT JOIN service_accounts a ON 0 ORDER BY p.id`,
  );
  const selectServicePrincipals = db.prepare<{ tenantId: string }, PrincipalJoinRow>(
    `SELECT ${PRINCIPAL_COLUMNS} ${PRINCIPAL_FROM}
     LEFT JOIN people p ON 0
     JOIN service_accounts a ON a.tenant_id = k.tenant_id ORDER BY a.id`,
  );
  const insertServiceAccount = db.prepare(
    `INSERT INTO service_accounts (id, tenant_id, name, capabilities, status, created_at, updated_at)
     VALUES (@id, @tenantId, @name, @capabilities, 'active', @createdAt, @createdAt)`,
  );
  const countOtherActiveOwners = db.prepare<[string, string], number>(
    "SELECT count(*) FROM people WHERE tenant_id = ? AND id <> ? AND role = 'owner' AND status = 'active'",
  ).pluck();
  const updatePerson = db.prepare(
    `UPDATE people SET capabilities = coalesce(@capabilities, capabilities), status = coalesce(@status, status),
       role = coalesce(@role, role), display_name = CASE WHEN @setName THEN @displayName ELSE display_name END, updated_at = @at
     WHERE tenant_id = @tenantId AND id = @id`,
  );
  const updateServiceAccount = db.prepare(
    `UPDATE service_accounts SET capabilities = coalesce(@capabilities, capabilities), status = coalesce(@status, status),
       name = CASE WHEN @setName THEN coalesce(@displayName, name) ELSE name END, updated_at = @at
     WHERE tenant_id = @tenantId AND id = @id`,
  );
  const selectKeyDetails = db.prepare<[string], ApiKeyDetailRow>(
    `SELECT id, tenant_id, prefix, last_four, status, created_at, revoked_at, person_id, service_account_id, label, capabilities, expires_at, last_used_at
     FROM api_keys WHERE tenant_id = ? ORDER BY id`,
  );
  const selectKeyDetail = db.prepare<[string, string], ApiKeyDetailRow>(
    `SELECT id, tenant_id, prefix, last_four, status, created_at, revoked_at, person_id, service_account_id, label, capabilities, expires_at, last_used_at
     FROM api_keys WHERE tenant_id = ? AND id = ?`,
  );
  const endKey = db.prepare(
    `UPDATE api_keys SET
       status = CASE WHEN @expiresAt IS NULL THEN 'revoked' ELSE status END,
       revoked_at = CASE WHEN @expiresAt IS NULL THEN @at ELSE revoked_at END,
       expires_at = CASE WHEN @expiresAt IS NULL THEN expires_at
                         WHEN expires_at IS NOT NULL AND expires_at < @expiresAt THEN expires_at ELSE @expiresAt END
     WHERE tenant_id = @tenantId AND id = @id AND status = 'active' AND (expires_at IS NULL OR expires_at > @at)`,
  );

  const revokeOwnKey = db.prepare(
    `UPDATE api_keys SET status = 'revoked', revoked_at = @at
     WHERE tenant_id = @tenantId AND id = @id AND status = 'active' AND (expires_at IS NULL OR expires_at > @at)`,
  );
  const insertReceipt = db.prepare(
    `INSERT INTO admin_receipts (action_key, tenant_id, action, actor_id, subject_id, created_at)
     VALUES (@actionKey, @tenantId, @action, @actorId, @subjectId, @createdAt)`,
  );
  const selectReceipts = db.prepare<{ tenantId: string; before: string | null; limit: number }, { action_key: string; tenant_id: string; action: string; actor_id: string; subject_id: string; created_at: string }>(
    `SELECT * FROM admin_receipts WHERE tenant_id = @tenantId AND (@before IS NULL OR action_key < @before)
     ORDER BY action_key DESC LIMIT @limit`,
  );

  const insertIdentity = db.prepare(
    `INSERT INTO person_identities (id, tenant_id, person_id, provider, subject, created_at)
     VALUES (@id, @tenantId, @personId, @provider, @subject, @createdAt) ON CONFLICT (tenant_id, provider, subject) DO NOTHING`,
  );
  const selectIdentities = db.prepare<[string, string], IdentityRow>('SELECT * FROM person_identities WHERE tenant_id = ? AND person_id = ? ORDER BY id');
  const deleteIdentity = db.prepare('DELETE FROM person_identities WHERE tenant_id = ? AND person_id = ? AND id = ?');
  const selectPersonIdByDigest = db.prepare<[string, Buffer], string>('SELECT id FROM people WHERE tenant_id = ? AND email_digest = ?').pluck();
  const selectIdentity = db.prepare<[string, string, string], IdentityRow>('SELECT * FROM person_identities WHERE tenant_id = ? AND provider = ? AND subject = ?');

  const changePrincipal = db.transaction((tenantId: string, id: string, change: PrincipalChange, at: string): PrincipalChangeOutcome => {
    const params = {
      tenantId,
      id,
      capabilities: change.capabilities ? JSON.stringify(change.capabilities) : null,
      status: change.status ?? null,
      role: change.role ?? null,
      setName: change.displayName !== undefined ? 1 : 0,
      displayName: change.displayName ?? null,
      at,
    };
    if (id.startsWith('sva_')) return updateServiceAccount.run(params).changes === 1 ? 'updated' : 'not_found';
    const row = selectPersonPrincipal.get({ tenantId, id });
    if (!row) return 'not_found';
    const current = principalFromJoin(row, false)!;
    const stopsBeingActiveOwner =
      current.role === 'owner' && current.status === 'active' && (change.status === 'deactivated' || change.role === 'member');
    if (stopsBeingActiveOwner && countOtherActiveOwners.get(tenantId, id)! === 0) return 'last_owner';
    updatePerson.run(params);
    return 'updated';
  });

  const rotateKey = db.transaction((tenantId: string, oldKeyId: string, next: NewApiKeyRow, oldExpiresAt: string | null, at: string): 'rotated' | 'not_active' => {
    if (endKey.run({ tenantId, id: oldKeyId, expiresAt: oldExpiresAt, at }).changes !== 1) return 'not_active';
    addKey(next);
    return 'rotated';
  });

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

    sessionPrincipal(sessionId): PrincipalRecord | undefined {
      const row = selectSessionPrincipal.get(sessionId);
      return row && principalFromJoin(row);
    },
    getPrincipal(tenantId, principalId): PrincipalRecord | undefined {
      const row = (principalId.startsWith('sva_') ? selectServicePrincipal : selectPersonPrincipal).get({ tenantId, id: principalId });
      return row && principalFromJoin(row, false);
    },
    listPrincipals(tenantId) {
      return [...selectPeoplePrincipals.all({ tenantId }), ...selectServicePrincipals.all({ tenantId })].map((r) => principalFromJoin(r, false)!);
    },
    createServiceAccount(row) {
      insertServiceAccount.run({ ...row, capabilities: JSON.stringify(row.capabilities) });
    },
    // IMMEDIATE: the last-owner check and the write it guards see no other change in between.
    changePrincipal: (tenantId, principalId, change, at) => changePrincipal.immediate(tenantId, principalId, change, at),
    listKeyDetails(tenantId) {
      return selectKeyDetails.all(tenantId).map(keyDetailFromRow);
    },
    getKeyDetail(tenantId, keyId) {
      const row = selectKeyDetail.get(tenantId, keyId);
      return row && keyDetailFromRow(row);
    },
    rotateKey: (tenantId, oldKeyId, next, oldExpiresAt, at) => rotateKey.immediate(tenantId, oldKeyId, next, oldExpiresAt, at),
    addKey(key) {
      addKey(key);
    },
    revokeKey(tenantId, keyId, at) {
      return revokeOwnKey.run({ tenantId, id: keyId, at }).changes === 1;
    },
    insertAdminReceipt(row: AdminReceiptRow) {
      insertReceipt.run(row);
    },
    linkIdentity(row) {
      return insertIdentity.run(row).changes === 1 ? 'linked' : 'taken';
    },
    listIdentities(tenantId, personId) {
      return selectIdentities.all(tenantId, personId).map(identityFromRow);
    },
    unlinkIdentity(tenantId, personId, identityId) {
      return deleteIdentity.run(tenantId, personId, identityId).changes === 1;
    },
    findPersonIdByEmailDigest(tenantId, emailDigest) {
      return selectPersonIdByDigest.get(tenantId, Buffer.from(emailDigest));
    },
    findIdentity(tenantId, provider, subject) {
      const row = selectIdentity.get(tenantId, provider, subject);
      return row && identityFromRow(row);
    },
    listAdminReceipts(tenantId, before, limit) {
      return selectReceipts.all({ tenantId, before, limit }).map((r) => ({
        actionKey: r.action_key,
        tenantId: r.tenant_id,
        action: r.action,
        actorId: r.actor_id,
        subjectId: r.subject_id,
        createdAt: r.created_at,
      }));
    },
  };
}
