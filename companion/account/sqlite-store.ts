/**
 * TenantStore over SQLite (migrations/0001_tenants.sql). Statements are prepared once.
 * better-sqlite3 binds Buffers, not plain Uint8Arrays, hence the Buffer.from at the edges.
 */
import type { ApiKeyMatch, ApiKeyPrefix, TenantKind } from '../core/auth.ts';
import type { Db } from '../core/db.ts';
import type { ApiKeyRecord, ApiKeyStatus, NewApiKeyRow, NewSandboxTenant, TenantRecord, TenantStore } from './store.ts';

interface TenantRow {
  id: string;
  kind: TenantKind;
  display_name: string;
  retain_statutory_metadata: number;
  created_at: string;
  updated_at: string;
}

interface ApiKeyRow {
  id: string;
  tenant_id: string;
  prefix: ApiKeyPrefix;
  last_four: string;
  status: ApiKeyStatus;
  created_at: string;
  revoked_at: string | null;
}

interface KeyMatchRow {
  id: string;
  tenant_id: string;
  kind: TenantKind;
  key_sha256: Buffer;
}

export function createSqliteTenantStore(db: Db): TenantStore {
  const insertTenant = db.prepare(
    `INSERT INTO tenants (id, kind, display_name, retain_statutory_metadata, created_at, updated_at)
     VALUES (@id, @kind, @displayName, @retain, @createdAt, @updatedAt)`,
  );
  const signupExists = db.prepare<[Buffer], { found: number }>('SELECT 1 AS found FROM sandbox_signups WHERE email_digest = ?');
  const insertSignup = db.prepare('INSERT INTO sandbox_signups (email_digest, tenant_id, created_at) VALUES (?, ?, ?)');
  const insertKey = db.prepare(
    `INSERT INTO api_keys (id, tenant_id, key_sha256, prefix, last_four, created_at)
     VALUES (@id, @tenantId, @keyHash, @prefix, @lastFour, @createdAt)`,
  );
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

  const addKey = (key: NewApiKeyRow) => {
    insertKey.run({ ...key, keyHash: Buffer.from(key.keyHash) });
  };

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
      const match: ApiKeyMatch = { keyId: row.id, tenantId: row.tenant_id, tenantKind: row.kind, keyHash: new Uint8Array(row.key_sha256) };
      if (activeKeys.size >= ACTIVE_KEY_CACHE_LIMIT) activeKeys.clear();
      activeKeys.set(id, match);
      return match;
    },
  };
}

function tenantFromRow(row: TenantRow): TenantRecord {
  return {
    id: row.id,
    kind: row.kind,
    displayName: row.display_name,
    retainStatutoryMetadata: row.retain_statutory_metadata === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function keyFromRow(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    prefix: row.prefix,
    lastFour: row.last_four,
    status: row.status,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}
