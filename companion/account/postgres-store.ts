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
import type { ApiKeyMatch } from '../core/auth.ts';
import { atomically } from '../core/postgres/connect.ts';
import type { Queryable } from '../core/postgres/connect.ts';
import { billingFromRow, checkoutFromRow, keyFromRow, keyMatchFromRow, personFromRow, sessionFromRow, tenantFromRow } from './rows.ts';
import type { ApiKeyRow, BillingRow, CheckoutRow, KeyMatchRow, PersonRow, SessionRow, TenantRow } from './rows.ts';
import type { AccountStore, NewApiKeyRow, PersonRecord, TenantStore } from './store.ts';

/** The session's person, joined in the same query (all null when it has none). */
interface SessionPersonRow extends SessionRow {
  person_email_digest: Buffer | null;
  person_role: 'owner' | 'member' | null;
  person_capabilities: string | null;
  person_created_at: string | null;
}

async function insertKey(sql: Queryable, key: NewApiKeyRow): Promise<void> {
  await sql`INSERT INTO api_keys (id, tenant_id, key_sha256, prefix, last_four, created_at, person_id)
    VALUES (${key.id}, ${key.tenantId}, ${key.keyHash}, ${key.prefix}, ${key.lastFour}, ${key.createdAt}, ${key.personId ?? null})`;
}

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
  };
}

async function insertPerson(sql: Queryable, p: PersonRecord): Promise<number> {
  // Only the email can conflict quietly: a person id already used still fails, as in SQLite.
  const added = await sql`INSERT INTO people (id, tenant_id, email_digest, role, capabilities, created_at)
    VALUES (${p.id}, ${p.tenantId}, ${p.emailDigest}, ${p.role}, ${JSON.stringify(p.capabilities)}, ${p.createdAt})
    ON CONFLICT (tenant_id, email_digest) DO NOTHING`;
  return added.count;
}

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
  };
}
