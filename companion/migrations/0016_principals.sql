-- 0016: principals. Every credential belongs to a person or to a named service account, and a
-- key may carry a narrower capability set, an expiry, a label and its last use
-- (interface-spec Authentication 1, 2; companion/account/principals.ts).
-- Runs inside one transaction opened by companion/core/migrations.ts: no BEGIN/COMMIT here.

-- A person's name and address for people reading listings and receipts (both optional; the
-- email digest stays the uniqueness key), and whether the person may act at all.
ALTER TABLE people ADD COLUMN display_name TEXT;
ALTER TABLE people ADD COLUMN email TEXT;
ALTER TABLE people ADD COLUMN status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'deactivated'));
ALTER TABLE people ADD COLUMN updated_at TEXT;

-- gate:submit, records:write and records:read are what every person holds by default; until
-- now keys did not check capabilities at all, so the people who exist keep today's flows.
UPDATE people SET capabilities = (
  SELECT json_group_array(value) FROM (
    SELECT value FROM json_each(people.capabilities)
    UNION SELECT value FROM json_each('["gate:submit","records:write","records:read"]')
  )
);

-- A named, tenant-scoped principal for automation and integrations.
CREATE TABLE service_accounts (
  id           TEXT PRIMARY KEY,                          -- sva_<ULID>
  tenant_id    TEXT NOT NULL REFERENCES tenants (id),
  name         TEXT NOT NULL,
  capabilities TEXT NOT NULL CHECK (json_valid(capabilities) AND json_type(capabilities) = 'array'),
  status       TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'deactivated')),
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL
) STRICT;

CREATE INDEX service_accounts_by_tenant ON service_accounts (tenant_id, id);

-- capabilities NULL: the key may do what its principal may; otherwise a JSON array, intersected
-- with the principal's on every request. expires_at NULL: no expiry (rotation sets one on the
-- old key for the overlap).
ALTER TABLE api_keys ADD COLUMN service_account_id TEXT REFERENCES service_accounts (id);
ALTER TABLE api_keys ADD COLUMN label TEXT;
ALTER TABLE api_keys ADD COLUMN capabilities TEXT CHECK (capabilities IS NULL OR (json_valid(capabilities) AND json_type(capabilities) = 'array'));
ALTER TABLE api_keys ADD COLUMN expires_at TEXT;
ALTER TABLE api_keys ADD COLUMN last_used_at TEXT;

-- Keys minted before people existed (and keys an operator inserts without a principal) belong to
-- the tenant's "Tenant keys" service account, one per tenant with an id derived from the tenant's
-- (sva_ + the tenant's ULID). It holds what those keys could do before capabilities applied to
-- keys: every tenant-API capability (gate, records, reviews including delegation, policy,
-- integrations, exports), and none of the account ones (people, billing, rename, retention),
-- which such keys never had. An owner can narrow it or deactivate it like any service account.
INSERT INTO service_accounts (id, tenant_id, name, capabilities, status, created_at, updated_at)
SELECT 'sva_' || substr(tenant_id, 5), tenant_id, 'Tenant keys',
       '["gate:submit","records:write","records:read","reviews:decide","reviews:delegate","policy:manage","integrations:manage","exports:read"]',
       'active', min(created_at), min(created_at)
FROM api_keys WHERE person_id IS NULL GROUP BY tenant_id;

UPDATE api_keys SET service_account_id = 'sva_' || substr(tenant_id, 5) WHERE person_id IS NULL;

CREATE TRIGGER api_keys_without_principal_join_tenant_keys AFTER INSERT ON api_keys
WHEN NEW.person_id IS NULL AND NEW.service_account_id IS NULL
BEGIN
  INSERT INTO service_accounts (id, tenant_id, name, capabilities, status, created_at, updated_at)
  SELECT 'sva_' || substr(NEW.tenant_id, 5), NEW.tenant_id, 'Tenant keys',
         '["gate:submit","records:write","records:read","reviews:decide","reviews:delegate","policy:manage","integrations:manage","exports:read"]',
         'active', NEW.created_at, NEW.created_at
  WHERE NOT EXISTS (SELECT 1 FROM service_accounts WHERE id = 'sva_' || substr(NEW.tenant_id, 5));
  UPDATE api_keys SET service_account_id = 'sva_' || substr(NEW.tenant_id, 5) WHERE id = NEW.id;
END;

-- Cached key lookups (migrations/0007) now carry the principal, its capabilities and status and
-- the key's expiry: a change to any of them must reach every process's next request. Recording
-- a key's last use must not, or every request would empty every cache. A key's principal is set
-- once, when it is written (by the trigger above for keys written without one), never changed.
DROP TRIGGER api_keys_update_bumps_credential_version;
CREATE TRIGGER api_keys_update_bumps_credential_version
AFTER UPDATE OF tenant_id, key_sha256, prefix, status, revoked_at, capabilities, expires_at ON api_keys
BEGIN
  UPDATE credential_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER people_update_bumps_credential_version AFTER UPDATE OF role, capabilities, status, display_name, email ON people
BEGIN
  UPDATE credential_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER service_accounts_update_bumps_credential_version AFTER UPDATE ON service_accounts
BEGIN
  UPDATE credential_version SET version = version + 1 WHERE id = 1;
END;
