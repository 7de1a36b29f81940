/**
 * SignInStore over SQLite (migrations/0019_sign_in.sql). Statements are prepared once; a method
 * that writes several rows runs them in one transaction (a savepoint inside the caller's).
 */
import type { Sync } from '../core/async-store.ts';
import type { Db } from '../core/db.ts';
import { deviceFromRow, deviceTokenFromRow, identityProviderFromRow, loginFromRow } from './rows.ts';
import type { DeviceRow, DeviceTokenRow, IdentityProviderRow, OidcLoginDbRow } from './rows.ts';
import type { SignInStore } from './store.ts';

const DEVICE_TOKENS = `SELECT d.key_id, d.client_id, d.granted_scope, k.created_at, k.expires_at, k.last_used_at, k.status, k.revoked_at
  FROM device_authorizations d JOIN api_keys k ON k.id = d.key_id
  WHERE d.tenant_id = ? AND d.person_id = ? AND d.status = 'issued' ORDER BY k.id DESC`;

export function createSqliteSignInStore(db: Db): Sync<SignInStore> {
  const upsertProvider = db.prepare(
    `INSERT INTO identity_providers (tenant_id, issuer, client_id, client_secret_ref, created_at, updated_at)
     VALUES (@tenantId, @issuer, @clientId, @clientSecretRef, @createdAt, @updatedAt)
     ON CONFLICT (tenant_id) DO UPDATE SET issuer = excluded.issuer, client_id = excluded.client_id,
       client_secret_ref = excluded.client_secret_ref, updated_at = excluded.updated_at`,
  );
  const domainOwner = db.prepare<[string], string>('SELECT tenant_id FROM identity_provider_domains WHERE domain = ?').pluck();
  const deleteDomains = db.prepare('DELETE FROM identity_provider_domains WHERE tenant_id = ?');
  const insertDomain = db.prepare('INSERT INTO identity_provider_domains (domain, tenant_id) VALUES (?, ?)');
  const selectProvider = db.prepare<[string], IdentityProviderRow>('SELECT * FROM identity_providers WHERE tenant_id = ?');
  const selectDomains = db.prepare<[string], string>('SELECT domain FROM identity_provider_domains WHERE tenant_id = ?').pluck();
  const deleteSubjects = db.prepare('DELETE FROM oidc_subjects WHERE tenant_id = ?');
  const deleteLogins = db.prepare('DELETE FROM oidc_logins WHERE tenant_id = ?');
  const deleteProvider = db.prepare('DELETE FROM identity_providers WHERE tenant_id = ?');
  const personByDigest = db.prepare<[string, Buffer], string>('SELECT id FROM people WHERE tenant_id = ? AND email_digest = ?').pluck();
  const selectLinked = db.prepare<[string, string, string], { person_id: string; session_key_id: string }>(
    'SELECT person_id, session_key_id FROM oidc_subjects WHERE tenant_id = ? AND issuer = ? AND subject = ?',
  );
  const insertLink = db.prepare('INSERT INTO oidc_subjects (tenant_id, issuer, subject, person_id, session_key_id, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING');
  const insertLogin = db.prepare('INSERT INTO oidc_logins (state_sha256, tenant_id, nonce, code_verifier, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)');
  const takeLogin = db.prepare<[Buffer, string], OidcLoginDbRow>('DELETE FROM oidc_logins WHERE state_sha256 = ? AND expires_at > ? RETURNING *');
  const insertDevice = db.prepare(
    `INSERT INTO device_authorizations (id, device_code_sha256, user_code, client_id, scope, status, poll_interval, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?) ON CONFLICT (user_code) DO NOTHING`,
  );
  const deviceByCode = db.prepare<[Buffer], DeviceRow>('SELECT * FROM device_authorizations WHERE device_code_sha256 = ?');
  const deviceByUserCode = db.prepare<[string], DeviceRow>('SELECT * FROM device_authorizations WHERE user_code = ?');
  const recordPoll = db.prepare('UPDATE device_authorizations SET last_polled_at = ?, poll_interval = ? WHERE id = ?');
  const decide = db.prepare(
    `UPDATE device_authorizations SET status = @status, tenant_id = @tenantId, person_id = @personId, granted_scope = @grantedScope, decided_at = @at
     WHERE id = @id AND status = 'pending' AND expires_at > @now`,
  );
  const markIssued = db.prepare("UPDATE device_authorizations SET status = 'issued', key_id = ? WHERE id = ? AND status = 'approved'");
  const deviceTokens = db.prepare<[string, string], DeviceTokenRow>(DEVICE_TOKENS);
  const purgeLogins = db.prepare('DELETE FROM oidc_logins WHERE expires_at <= ?');
  const purgeDevices = db.prepare("DELETE FROM device_authorizations WHERE expires_at <= ? AND status <> 'issued'");

  const saveProvider = db.transaction((row: Parameters<SignInStore['putIdentityProvider']>[0]): 'saved' | 'domain_taken' => {
    for (const d of row.emailDomains) {
      const owner = domainOwner.get(d);
      if (owner !== undefined && owner !== row.tenantId) return 'domain_taken';
    }
    upsertProvider.run({ ...row });
    deleteDomains.run(row.tenantId);
    for (const d of row.emailDomains) insertDomain.run(d, row.tenantId);
    return 'saved';
  });
  const removeProvider = db.transaction((tenantId: string): boolean => {
    deleteDomains.run(tenantId);
    deleteSubjects.run(tenantId);
    deleteLogins.run(tenantId);
    return deleteProvider.run(tenantId).changes > 0;
  });

  return {
    putIdentityProvider: (row) => saveProvider(row),
    getIdentityProvider(tenantId) {
      const row = selectProvider.get(tenantId);
      return row && identityProviderFromRow(row, selectDomains.all(tenantId));
    },
    deleteIdentityProvider: (tenantId) => removeProvider(tenantId),
    tenantForDomain: (domain) => domainOwner.get(domain),
    personByEmailDigest: (tenantId, digest) => personByDigest.get(tenantId, Buffer.from(digest)),
    linkedPerson(tenantId, issuer, subject) {
      const row = selectLinked.get(tenantId, issuer, subject);
      return row && { personId: row.person_id, sessionKeyId: row.session_key_id };
    },
    linkSubject: (tenantId, issuer, subject, link, at) => insertLink.run(tenantId, issuer, subject, link.personId, link.sessionKeyId, at).changes > 0,
    createLogin(row) {
      insertLogin.run(Buffer.from(row.stateHash), row.tenantId, row.nonce, row.codeVerifier, row.createdAt, row.expiresAt);
    },
    takeLogin(stateHash, now) {
      const row = takeLogin.get(Buffer.from(stateHash), now);
      return row && loginFromRow(row);
    },
    createDeviceAuthorization(row) {
      const r = insertDevice.run(row.id, Buffer.from(row.deviceCodeHash), row.userCode, row.clientId, JSON.stringify(row.scope), row.pollInterval, row.createdAt, row.expiresAt);
      return r.changes > 0 ? 'created' : 'user_code_taken';
    },
    deviceByCode(hash) {
      const row = deviceByCode.get(Buffer.from(hash));
      return row && deviceFromRow(row);
    },
    deviceByUserCode(userCode) {
      const row = deviceByUserCode.get(userCode);
      return row && deviceFromRow(row);
    },
    recordPoll(id, at, pollInterval) {
      recordPoll.run(at, pollInterval, id);
    },
    decideDevice(id, d, now) {
      const grantedScope = d.grantedScope === null ? null : JSON.stringify(d.grantedScope);
      return decide.run({ id, status: d.status, tenantId: d.tenantId, personId: d.personId, grantedScope, at: d.at, now }).changes > 0;
    },
    markIssued: (id, keyId) => markIssued.run(keyId, id).changes > 0,
    listDeviceTokens: (tenantId, personId) => deviceTokens.all(tenantId, personId).map(deviceTokenFromRow),
    purgeExpired(now) {
      purgeLogins.run(now);
      purgeDevices.run(now);
    },
  };
}
