/**
 * TenantStore and AccountStore over PostgreSQL (migrations/postgres/0001, 0007, 0012): the
 * statements of ./sqlite-store.ts. postgres.js binds Uint8Arrays as bytea and reads bytea back
 * as Buffers, hence the `new Uint8Array` at the edges.
 *
 * Several companions may share the database, and PostgreSQL has no single writer to make a
 * check-then-write safe (the SQLite store takes the write lock first, IMMEDIATE). So every
 * outcome a method reports is decided by the one statement that writes it, which PostgreSQL
 * serialises on the row or unique index entry it touches: a second caller waits for the first
 * to commit, then finds the email taken, the key no longer active, the tenant no longer a
 * sandbox. No method holds a lock beyond those rows, and none uses SELECT ... FOR UPDATE.
 * A method that writes several rows runs them `atomically` (its own transaction, or a
 * savepoint inside the caller's), where the SQLite store used db.transaction.
 */
import type { ApiKeyMatch, ResolvedApiKey } from '../core/auth.ts';
import { atomically } from '../core/postgres/connect.ts';
import type { Queryable } from '../core/postgres/connect.ts';
import { PRINCIPAL_COLUMNS, principalFromJoin } from './principals.ts';
import type { PrincipalJoinRow } from './principals.ts';
import { billingFromRow, checkoutFromRow, identityFromRow, keyDetailFromRow, keyFromRow, keyMatchFromRow, personFromRow, resolvedKeyFromRow, sessionFromRow, tenantFromRow } from './rows.ts';
import type { ApiKeyDetailRow, ApiKeyRow, BillingRow, CheckoutRow, IdentityRow, KeyMatchRow, PersonRow, ResolvedKeyRow, SessionRow, TenantRow } from './rows.ts';
import type { AccountStore, NewApiKeyRow, PersonRecord, TenantStore } from './store.ts';

/** The session's person, joined in the same query (all null when it has none). */
interface SessionPersonRow extends SessionRow {
  person_email_digest: Buffer | null;
  person_role: 'owner' | 'member' | null;
  person_capabilities: string | null;
  person_created_at: string | null;
}

async function insertKey(sql: Queryable, key: NewApiKeyRow): Promise<void> {
  await sql`INSERT INTO api_keys (id, tenant_id, key_sha256, prefix, last_four, created_at, person_id, service_account_id, label, capabilities, expires_at)
    VALUES (${key.id}, ${key.tenantId}, ${key.keyHash}, ${key.prefix}, ${key.lastFour}, ${key.createdAt}, ${key.personId ?? null},
      ${key.serviceAccountId ?? null}, ${key.label ?? null}, ${key.capabilities ? JSON.stringify(key.capabilities) : null}, ${key.expiresAt ?? null})`;
}

const KEY_DETAIL_COLUMNS = 'id, tenant_id, prefix, last_four, status, created_at, revoked_at, person_id, service_account_id, label, capabilities, expires_at, last_used_at';

/** Thrown inside `atomically` so that what it wrote rolls back; answered as 'email_taken'. */
class EmailTaken extends Error {}

export function createPostgresTenantStore(sql: Queryable): TenantStore {
  return {
    async createSandboxTenant(input) {
      const t = input.tenant;
      // A taken email answers without writing anything, as in SQLite (which checks first).
      const [taken] = await sql`SELECT 1 AS found FROM sandbox_signups WHERE email_digest = ${input.emailDigest}`;
      if (taken) return 'email_taken';
      try {
        await atomically(sql, async (tx) => {
          // The marker needs its tenant (a foreign key checked at once), so the tenant goes first.
          await tx`INSERT INTO tenants (id, kind, display_name, retain_statutory_metadata, created_at, updated_at)
            VALUES (${t.id}, ${t.kind}, ${t.displayName}, ${t.retainStatutoryMetadata ? 1 : 0}, ${t.createdAt}, ${t.updatedAt})`;
          // What decides between two signups for one email, on any companion: the second insert
          // waits on the first's index entry and, once that commits, inserts nothing.
          const marked = await tx`INSERT INTO sandbox_signups (email_digest, tenant_id, created_at)
            VALUES (${input.emailDigest}, ${t.id}, ${t.createdAt}) ON CONFLICT (email_digest) DO NOTHING`;
          if (marked.count === 0) throw new EmailTaken();
          await insertPerson(tx, input.owner);
          await insertKey(tx, input.key);
        });
      } catch (err) {
        if (err instanceof EmailTaken) return 'email_taken';
        throw err;
      }
      return 'created';
    },

    async getTenant(tenantId) {
      const [row] = await sql<TenantRow[]>`SELECT * FROM tenants WHERE id = ${tenantId}`;
      return row && tenantFromRow(row);
    },

    addApiKey: (key) => insertKey(sql, key),

    async revokeApiKey(tenantId, keyId, revokedAt) {
      // Conditional: of two concurrent revocations, the second finds the key no longer active.
      const revoked = await sql`UPDATE api_keys SET status = 'revoked', revoked_at = ${revokedAt}
        WHERE tenant_id = ${tenantId} AND id = ${keyId} AND status = 'active'`;
      return revoked.count === 1;
    },

    async listApiKeys(tenantId) {
      const rows = await sql<ApiKeyRow[]>`SELECT id, tenant_id, prefix, last_four, status, created_at, revoked_at
        FROM api_keys WHERE tenant_id = ${tenantId} ORDER BY id`;
      return rows.map(keyFromRow);
    },

    // No cache, unlike SQLite's: there a cached hit saves a join but still reads the credential
    // version; here either is one round trip to the server, so the key row itself is read.
    async findActiveApiKeyByHash(keyHash): Promise<ApiKeyMatch | undefined> {
      const [row] = await sql<KeyMatchRow[]>`SELECT k.id, k.tenant_id, t.kind, k.key_sha256
        FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
        WHERE k.key_sha256 = ${keyHash} AND k.status = 'active'`;
      return row && keyMatchFromRow(row);
    },

    // One round trip, as above: the principal comes in the same query.
    async resolveApiKey(keyHash): Promise<ResolvedApiKey | undefined> {
      const [row] = await sql.unsafe<ResolvedKeyRow[]>(
        `SELECT k.id, t.kind, k.key_sha256, k.expires_at, k.last_used_at, ${PRINCIPAL_COLUMNS}
         FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
         LEFT JOIN people p ON p.id = k.person_id
         LEFT JOIN service_accounts a ON a.id = k.service_account_id
         WHERE k.key_sha256 = $1 AND k.status = 'active'`,
        [keyHash as never],
      );
      return row && resolvedKeyFromRow(row);
    },

    async touchApiKey(keyId, at) {
      await sql`UPDATE api_keys SET last_used_at = ${at} WHERE id = ${keyId}`;
    },

    async credentialVersion() {
      const [row] = await sql<{ version: string | number }[]>`SELECT version FROM credential_version WHERE id = 1`;
      return row ? Number(row.version) : -1;
    },
  };
}

async function insertPerson(sql: Queryable, p: PersonRecord): Promise<number> {
  // Only the email can conflict quietly: a person id already used still fails, as in SQLite.
  const added = await sql`INSERT INTO people (id, tenant_id, email_digest, role, capabilities, created_at, display_name, email)
    VALUES (${p.id}, ${p.tenantId}, ${p.emailDigest}, ${p.role}, ${JSON.stringify(p.capabilities)}, ${p.createdAt},
      ${p.displayName ?? null}, ${p.email ?? null})
    ON CONFLICT (tenant_id, email_digest) DO NOTHING`;
  return added.count;
}

/** People and service accounts as principals: the key columns null, so no subset applies. */
const PRINCIPAL_FROM = 'FROM (SELECT $1::text AS tenant_id, NULL::text AS capabilities) k';

export function createPostgresAccountStore(sql: Queryable): AccountStore {
  return {
    async getKeyPerson(keyId) {
      const [row] = await sql<PersonRow[]>`SELECT p.* FROM api_keys k JOIN people p ON p.id = k.person_id WHERE k.id = ${keyId}`;
      return row ? personFromRow(row) : null;
    },

    addPerson: (person, key) =>
      atomically(sql, async (tx) => {
        // The insert decides: of two concurrent adds of one email, the second waits on the
        // first's (tenant, email) index entry and then inserts nothing.
        if ((await insertPerson(tx, person)) === 0) return 'email_taken' as const;
        await insertKey(tx, key);
        return 'created' as const;
      }),

    async createSession(row) {
      await sql`INSERT INTO account_sessions (id, token_sha256, csrf_sha256, tenant_id, person_id, key_id, created_at, expires_at)
        VALUES (${row.id}, ${row.tokenHash}, ${row.csrfHash}, ${row.tenantId}, ${row.personId}, ${row.keyId}, ${row.createdAt}, ${row.expiresAt})`;
    },

    async findLiveSession(tokenHash, now) {
      // The person comes in the same query (SQLite reads it with a second statement): one
      // round trip per authenticated request.
      // RFC 3339 UTC timestamps with fixed-width milliseconds compare correctly as text.
      const [row] = await sql<SessionPersonRow[]>`SELECT s.id, s.tenant_id, t.kind, s.token_sha256, s.csrf_sha256, s.expires_at,
          p.id AS person_id, p.email_digest AS person_email_digest, p.role AS person_role,
          p.capabilities AS person_capabilities, p.created_at AS person_created_at
        FROM account_sessions s JOIN tenants t ON t.id = s.tenant_id LEFT JOIN people p ON p.id = s.person_id
        WHERE s.token_sha256 = ${tokenHash} AND s.revoked_at IS NULL AND s.expires_at > ${now}`;
      if (!row) return undefined;
      const person =
        row.person_id === null
          ? null
          : personFromRow({
              id: row.person_id,
              tenant_id: row.tenant_id,
              email_digest: row.person_email_digest!,
              role: row.person_role!,
              capabilities: row.person_capabilities!,
              created_at: row.person_created_at!,
            });
      return sessionFromRow(row, person);
    },

    async revokeSession(sessionId, at) {
      await sql`UPDATE account_sessions SET revoked_at = ${at} WHERE id = ${sessionId} AND revoked_at IS NULL`;
    },

    async updateTenant(tenantId, changes, at) {
      // One statement for both changes (SQLite runs one per change in a transaction); a change
      // left out keeps its column, and no change at all touches nothing, updated_at included.
      if (changes.displayName === undefined && changes.retainStatutoryMetadata === undefined) return;
      const retain = changes.retainStatutoryMetadata === undefined ? null : changes.retainStatutoryMetadata ? 1 : 0;
      await sql`UPDATE tenants SET display_name = coalesce(${changes.displayName ?? null}::text, display_name),
          retain_statutory_metadata = coalesce(${retain}::bigint, retain_statutory_metadata), updated_at = ${at}
        WHERE id = ${tenantId}`;
    },

    async getTenantBilling(tenantId) {
      const [row] = await sql<BillingRow[]>`SELECT provider, customer_ref FROM tenant_billing WHERE tenant_id = ${tenantId}`;
      return billingFromRow(row);
    },

    async createCheckout(row) {
      await sql`INSERT INTO billing_checkouts (id, tenant_id, person_id, provider, provider_ref, status, customer_ref, created_at, completed_at)
        VALUES (${row.id}, ${row.tenantId}, ${row.personId}, ${row.provider}, ${row.providerRef}, ${row.status},
          ${row.customerRef}, ${row.createdAt}, ${row.completedAt})`;
    },

    async getCheckout(tenantId, checkoutId) {
      const [row] = await sql<CheckoutRow[]>`SELECT * FROM billing_checkouts WHERE id = ${checkoutId} AND tenant_id = ${tenantId}`;
      return row && checkoutFromRow(row);
    },

    async findCheckoutByProviderRef(provider, providerRef) {
      const [row] = await sql<CheckoutRow[]>`SELECT * FROM billing_checkouts WHERE provider = ${provider} AND provider_ref = ${providerRef}`;
      return row && checkoutFromRow(row);
    },

    async markCheckoutVerified(checkoutId, customerRef) {
      await sql`UPDATE billing_checkouts SET status = 'verified', customer_ref = coalesce(${customerRef}::text, customer_ref)
        WHERE id = ${checkoutId} AND status = 'open'`;
    },

    upgradeToProduction: (u) =>
      atomically(sql, async (tx) => {
        // The promotion decides: it holds the tenant's row until commit, and a concurrent
        // upgrade waits for it, then finds the tenant no longer a sandbox (nothing written).
        const promoted = await tx`UPDATE tenants SET kind = 'production', updated_at = ${u.at} WHERE id = ${u.tenantId} AND kind = 'sandbox'`;
        if (promoted.count !== 1) return 'not_sandbox' as const;
        await tx`INSERT INTO tenant_billing (tenant_id, provider, customer_ref, created_at) VALUES (${u.tenantId}, ${u.provider}, ${u.customerRef}, ${u.at})`;
        await tx`UPDATE api_keys SET status = 'revoked', revoked_at = ${u.at}
          WHERE tenant_id = ${u.tenantId} AND prefix = 'svc_test_' AND status = 'active'`;
        await insertKey(tx, u.newKey);
        await tx`UPDATE billing_checkouts SET status = 'completed', completed_at = ${u.at} WHERE id = ${u.checkoutId}`;
        return 'upgraded' as const;
      }),

    async sessionPrincipal(sessionId) {
      const [row] = await sql.unsafe<PrincipalJoinRow[]>(
        `SELECT ${PRINCIPAL_COLUMNS}
         FROM account_sessions s JOIN api_keys k ON k.id = s.key_id
         LEFT JOIN people p ON p.id = s.person_id
         LEFT JOIN service_accounts a ON s.person_id IS NULL AND a.id = k.service_account_id
         WHERE s.id = $1`,
        [sessionId],
      );
      return row && principalFromJoin(row);
    },

    async getPrincipal(tenantId, principalId) {
      const [row] = await sql.unsafe<PrincipalJoinRow[]>(
        principalId.startsWith('sva_')
          ? `SELECT ${PRINCIPAL_COLUMNS} ${PRINCIPAL_FROM} LEFT JOIN people p ON false JOIN service_accounts a ON a.tenant_id = k.tenant_id AND a.id = $2`
          : `SELECT ${PRINCIPAL_COLUMNS} ${PRINCIPAL_FROM} JOIN people p ON p.tenant_id = k.tenant_id AND p.id = $2 LEFT JOIN service_accounts a ON false`,
        [tenantId, principalId],
      );
      return row && principalFromJoin(row, false);
    },

    async listPrincipals(tenantId) {
      const people = await sql.unsafe<PrincipalJoinRow[]>(
        `SELECT ${PRINCIPAL_COLUMNS} ${PRINCIPAL_FROM} JOIN people p ON p.tenant_id = k.tenant_id LEFT JOIN service_accounts a ON false ORDER BY p.id`,
        [tenantId],
      );
      const accounts = await sql.unsafe<PrincipalJoinRow[]>(
        `SELECT ${PRINCIPAL_COLUMNS} ${PRINCIPAL_FROM} LEFT JOIN people p ON false JOIN service_accounts a ON a.tenant_id = k.tenant_id ORDER BY a.id`,
        [tenantId],
      );
      return [...people, ...accounts].map((r) => principalFromJoin(r, false)!);
    },

    async createServiceAccount(row) {
      await sql`INSERT INTO service_accounts (id, tenant_id, name, capabilities, status, created_at, updated_at)
        VALUES (${row.id}, ${row.tenantId}, ${row.name}, ${JSON.stringify(row.capabilities)}, 'active', ${row.createdAt}, ${row.createdAt})`;
    },

    changePrincipal: (tenantId, principalId, change, at) =>
      atomically(sql, async (tx) => {
        const capabilities = change.capabilities ? JSON.stringify(change.capabilities) : null;
        const status = change.status ?? null;
        if (principalId.startsWith('sva_')) {
          const changed = await tx`UPDATE service_accounts SET capabilities = coalesce(${capabilities}::text, capabilities),
              status = coalesce(${status}::text, status), name = coalesce(${change.displayName ?? null}::text, name), updated_at = ${at}
            WHERE tenant_id = ${tenantId} AND id = ${principalId}`;
          return changed.count === 1 ? ('updated' as const) : ('not_found' as const);
        }
        // Changes to one tenant's people queue on its tenant row until commit, so of two owners
        // demoting each other at once the second re-counts after the first committed.
        await tx`UPDATE tenants SET updated_at = updated_at WHERE id = ${tenantId}`;
        const [person] = await tx<{ role: string; status: string }[]>`SELECT role, status FROM people WHERE tenant_id = ${tenantId} AND id = ${principalId}`;
        if (!person) return 'not_found' as const;
        const stops = person.role === 'owner' && person.status === 'active' && (change.status === 'deactivated' || change.role === 'member');
        if (stops) {
          const [others] = await tx<{ n: number }[]>`SELECT count(*)::int AS n FROM people
            WHERE tenant_id = ${tenantId} AND id <> ${principalId} AND role = 'owner' AND status = 'active'`;
          if (others!.n === 0) return 'last_owner' as const;
        }
        await tx`UPDATE people SET capabilities = coalesce(${capabilities}::text, capabilities), status = coalesce(${status}::text, status),
            role = coalesce(${change.role ?? null}::text, role),
            display_name = CASE WHEN ${change.displayName !== undefined} THEN ${change.displayName ?? null}::text ELSE display_name END,
            updated_at = ${at}
          WHERE tenant_id = ${tenantId} AND id = ${principalId}`;
        return 'updated' as const;
      }),

    async listKeyDetails(tenantId) {
      const rows = await sql.unsafe<ApiKeyDetailRow[]>(`SELECT ${KEY_DETAIL_COLUMNS} FROM api_keys WHERE tenant_id = $1 ORDER BY id`, [tenantId]);
      return rows.map(keyDetailFromRow);
    },

    async getKeyDetail(tenantId, keyId) {
      const [row] = await sql.unsafe<ApiKeyDetailRow[]>(`SELECT ${KEY_DETAIL_COLUMNS} FROM api_keys WHERE tenant_id = $1 AND id = $2`, [tenantId, keyId]);
      return row && keyDetailFromRow(row);
    },

    rotateKey: (tenantId, oldKeyId, next, oldExpiresAt, at) =>
      atomically(sql, async (tx) => {
        // The conditional update decides: of two rotations of one key, the second finds it ended.
        const ended = await tx`UPDATE api_keys SET
            status = CASE WHEN ${oldExpiresAt}::text IS NULL THEN 'revoked' ELSE status END,
            revoked_at = CASE WHEN ${oldExpiresAt}::text IS NULL THEN ${at} ELSE revoked_at END,
            expires_at = CASE WHEN ${oldExpiresAt}::text IS NULL THEN expires_at
                              WHEN expires_at IS NOT NULL AND expires_at < ${oldExpiresAt}::text THEN expires_at ELSE ${oldExpiresAt}::text END
          WHERE tenant_id = ${tenantId} AND id = ${oldKeyId} AND status = 'active' AND (expires_at IS NULL OR expires_at > ${at})`;
        if (ended.count !== 1) return 'not_active' as const;
        await insertKey(tx, next);
        return 'rotated' as const;
      }),

    addKey: (key) => insertKey(sql, key),

    async revokeKey(tenantId, keyId, at) {
      const revoked = await sql`UPDATE api_keys SET status = 'revoked', revoked_at = ${at}
        WHERE tenant_id = ${tenantId} AND id = ${keyId} AND status = 'active' AND (expires_at IS NULL OR expires_at > ${at})`;
      return revoked.count === 1;
    },

    async insertAdminReceipt(row) {
      await sql`INSERT INTO admin_receipts (action_key, tenant_id, action, actor_id, subject_id, created_at)
        VALUES (${row.actionKey}, ${row.tenantId}, ${row.action}, ${row.actorId}, ${row.subjectId}, ${row.createdAt})`;
    },

    async linkIdentity(row) {
      const r = await sql`INSERT INTO person_identities (id, tenant_id, person_id, provider, subject, created_at)
        VALUES (${row.id}, ${row.tenantId}, ${row.personId}, ${row.provider}, ${row.subject}, ${row.createdAt})
        ON CONFLICT (tenant_id, provider, subject) DO NOTHING`;
      return r.count === 1 ? 'linked' : 'taken';
    },
    async listIdentities(tenantId, personId) {
      const rows = await sql<IdentityRow[]>`SELECT * FROM person_identities WHERE tenant_id = ${tenantId} AND person_id = ${personId} ORDER BY id`;
      return rows.map(identityFromRow);
    },
    async unlinkIdentity(tenantId, personId, identityId) {
      const r = await sql`DELETE FROM person_identities WHERE tenant_id = ${tenantId} AND person_id = ${personId} AND id = ${identityId}`;
      return r.count === 1;
    },
    async findPersonIdByEmailDigest(tenantId, emailDigest) {
      const [row] = await sql<{ id: string }[]>`SELECT id FROM people WHERE tenant_id = ${tenantId} AND email_digest = ${emailDigest}`;
      return row?.id;
    },
    async findIdentity(tenantId, provider, subject) {
      const [row] = await sql<IdentityRow[]>`SELECT * FROM person_identities
        WHERE tenant_id = ${tenantId} AND provider = ${provider} AND subject = ${subject}`;
      return row && identityFromRow(row);
    },
    async listAdminReceipts(tenantId, before, limit) {
      const rows = await sql<{ action_key: string; tenant_id: string; action: string; actor_id: string; subject_id: string; created_at: string }[]>`
        SELECT * FROM admin_receipts WHERE tenant_id = ${tenantId} AND (${before}::text IS NULL OR action_key < ${before}::text)
        ORDER BY action_key DESC LIMIT ${limit}`;
      return rows.map((r) => ({ actionKey: r.action_key, tenantId: r.tenant_id, action: r.action, actorId: r.actor_id, subjectId: r.subject_id, createdAt: r.created_at }));
    },
  };
}
