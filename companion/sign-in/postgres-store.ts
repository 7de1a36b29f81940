/**
 * SignInStore over PostgreSQL (migrations/postgres/0019): the statements of ./sqlite-store.ts.
 * Every outcome is decided by the statement that writes it (a conditional UPDATE, an INSERT …
 * ON CONFLICT DO NOTHING, a DELETE … RETURNING), so two companions on one database cannot both
 * use one state, decide one request twice or issue two keys for one approval.
 */
import { atomically } from '../core/postgres/connect.ts';
import type { Queryable } from '../core/postgres/connect.ts';
import { deviceFromRow, deviceTokenFromRow, identityProviderFromRow, loginFromRow } from './rows.ts';
import type { DeviceRow, DeviceTokenRow, IdentityProviderRow, OidcLoginDbRow } from './rows.ts';
import type { SignInStore } from './store.ts';

/** Thrown inside `atomically` so that what it wrote rolls back; answered as 'domain_taken'. */
class DomainTaken extends Error {}

export function createPostgresSignInStore(sql: Queryable): SignInStore {
  return {
    async putIdentityProvider(row) {
      try {
        await atomically(sql, async (tx) => {
          await tx`INSERT INTO identity_providers (tenant_id, issuer, client_id, client_secret_ref, created_at, updated_at)
            VALUES (${row.tenantId}, ${row.issuer}, ${row.clientId}, ${row.clientSecretRef}, ${row.createdAt}, ${row.updatedAt})
            ON CONFLICT (tenant_id) DO UPDATE SET issuer = excluded.issuer, client_id = excluded.client_id,
              client_secret_ref = excluded.client_secret_ref, updated_at = excluded.updated_at`;
          await tx`DELETE FROM identity_provider_domains WHERE tenant_id = ${row.tenantId}`;
          for (const d of row.emailDomains) {
            // The primary key decides between two tenants claiming one domain.
            const added = await tx`INSERT INTO identity_provider_domains (domain, tenant_id) VALUES (${d}, ${row.tenantId}) ON CONFLICT (domain) DO NOTHING`;
            if (added.count === 0) throw new DomainTaken();
          }
        });
      } catch (err) {
        if (err instanceof DomainTaken) return 'domain_taken';
        throw err;
      }
      return 'saved';
    },
    async getIdentityProvider(tenantId) {
      const [row] = await sql<IdentityProviderRow[]>`SELECT * FROM identity_providers WHERE tenant_id = ${tenantId}`;
      if (!row) return undefined;
      const domains = await sql<{ domain: string }[]>`SELECT domain FROM identity_provider_domains WHERE tenant_id = ${tenantId}`;
      return identityProviderFromRow(row, domains.map((d) => d.domain));
    },
    deleteIdentityProvider: (tenantId) =>
      atomically(sql, async (tx) => {
        await tx`DELETE FROM identity_provider_domains WHERE tenant_id = ${tenantId}`;
        await tx`DELETE FROM oidc_subjects WHERE tenant_id = ${tenantId}`;
        await tx`DELETE FROM oidc_logins WHERE tenant_id = ${tenantId}`;
        const removed = await tx`DELETE FROM identity_providers WHERE tenant_id = ${tenantId}`;
        return removed.count > 0;
      }),
    async tenantForDomain(domain) {
      const [row] = await sql<{ tenant_id: string }[]>`SELECT tenant_id FROM identity_provider_domains WHERE domain = ${domain}`;
      return row?.tenant_id;
    },
    async personByEmailDigest(tenantId, digest) {
      const [row] = await sql<{ id: string }[]>`SELECT id FROM people WHERE tenant_id = ${tenantId} AND email_digest = ${digest}`;
      return row?.id;
    },
    async linkedPerson(tenantId, issuer, subject) {
      const [row] = await sql<{ person_id: string; session_key_id: string }[]>`SELECT person_id, session_key_id FROM oidc_subjects
        WHERE tenant_id = ${tenantId} AND issuer = ${issuer} AND subject = ${subject}`;
      return row && { personId: row.person_id, sessionKeyId: row.session_key_id };
    },
    async linkSubject(tenantId, issuer, subject, link, at) {
      const r = await sql`INSERT INTO oidc_subjects (tenant_id, issuer, subject, person_id, session_key_id, created_at)
        VALUES (${tenantId}, ${issuer}, ${subject}, ${link.personId}, ${link.sessionKeyId}, ${at}) ON CONFLICT DO NOTHING`;
      return r.count > 0;
    },
    async createLogin(row) {
      await sql`INSERT INTO oidc_logins (state_sha256, tenant_id, nonce, code_verifier, created_at, expires_at)
        VALUES (${row.stateHash}, ${row.tenantId}, ${row.nonce}, ${row.codeVerifier}, ${row.createdAt}, ${row.expiresAt})`;
    },
    async takeLogin(stateHash, now) {
      const [row] = await sql<OidcLoginDbRow[]>`DELETE FROM oidc_logins WHERE state_sha256 = ${stateHash} AND expires_at > ${now} RETURNING *`;
      return row && loginFromRow(row);
    },
    async createDeviceAuthorization(row) {
      const r = await sql`INSERT INTO device_authorizations (id, device_code_sha256, user_code, client_id, scope, status, poll_interval, created_at, expires_at)
        VALUES (${row.id}, ${row.deviceCodeHash}, ${row.userCode}, ${row.clientId}, ${JSON.stringify(row.scope)}, 'pending', ${row.pollInterval}, ${row.createdAt}, ${row.expiresAt})
        ON CONFLICT (user_code) DO NOTHING`;
      return r.count > 0 ? 'created' : 'user_code_taken';
    },
    async deviceByCode(hash) {
      const [row] = await sql<DeviceRow[]>`SELECT * FROM device_authorizations WHERE device_code_sha256 = ${hash}`;
      return row && deviceFromRow(row);
    },
    async deviceByUserCode(userCode) {
      const [row] = await sql<DeviceRow[]>`SELECT * FROM device_authorizations WHERE user_code = ${userCode}`;
      return row && deviceFromRow(row);
    },
    async recordPoll(id, at, pollInterval) {
      await sql`UPDATE device_authorizations SET last_polled_at = ${at}, poll_interval = ${pollInterval} WHERE id = ${id}`;
    },
    async decideDevice(id, d, now) {
      const grantedScope = d.grantedScope === null ? null : JSON.stringify(d.grantedScope);
      const r = await sql`UPDATE device_authorizations SET status = ${d.status}, tenant_id = ${d.tenantId}, person_id = ${d.personId},
          granted_scope = ${grantedScope}, decided_at = ${d.at}
        WHERE id = ${id} AND status = 'pending' AND expires_at > ${now}`;
      return r.count > 0;
    },
    async markIssued(id, keyId) {
      const r = await sql`UPDATE device_authorizations SET status = 'issued', key_id = ${keyId} WHERE id = ${id} AND status = 'approved'`;
      return r.count > 0;
    },
    async listDeviceTokens(tenantId, personId) {
      const rows = await sql<DeviceTokenRow[]>`SELECT d.key_id, d.client_id, d.granted_scope, k.created_at, k.expires_at, k.last_used_at, k.status, k.revoked_at
        FROM device_authorizations d JOIN api_keys k ON k.id = d.key_id
        WHERE d.tenant_id = ${tenantId} AND d.person_id = ${personId} AND d.status = 'issued' ORDER BY k.id DESC`;
      return rows.map(deviceTokenFromRow);
    },
    async purgeExpired(now) {
      await sql`DELETE FROM oidc_logins WHERE expires_at <= ${now}`;
      await sql`DELETE FROM device_authorizations WHERE expires_at <= ${now} AND status <> 'issued'`;
    },
  };
}
