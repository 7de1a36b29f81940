-- 0007: a version counter for credentials, so every process that caches API key lookups sees a
-- revocation on its very next request (companion/account/sqlite-store.ts). Triggers bump it on
-- any change that can invalidate a cached key, whichever connection or process makes it.
-- Runs inside one transaction opened by companion/core/migrations.ts: no BEGIN/COMMIT here.

CREATE TABLE credential_version (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  version INTEGER NOT NULL
) STRICT;

INSERT INTO credential_version (id, version) VALUES (1, 0);

-- A new key cannot invalidate a cached one (only hits are cached), so inserts do not bump.
CREATE TRIGGER api_keys_update_bumps_credential_version AFTER UPDATE ON api_keys
BEGIN
  UPDATE credential_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER api_keys_delete_bumps_credential_version AFTER DELETE ON api_keys
BEGIN
  UPDATE credential_version SET version = version + 1 WHERE id = 1;
END;

-- A cached match carries the tenant's kind (core/auth.ts refuses a sandbox key for a production tenant).
CREATE TRIGGER tenants_kind_bumps_credential_version AFTER UPDATE OF kind ON tenants
BEGIN
  UPDATE credential_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER tenants_delete_bumps_credential_version AFTER DELETE ON tenants
BEGIN
  UPDATE credential_version SET version = version + 1 WHERE id = 1;
END;
