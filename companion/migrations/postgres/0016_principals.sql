-- 0016 for PostgreSQL: ../0016_principals.sql (service accounts; people's name, email and
-- status; keys' principal, label, capability subset, expiry and last use). Conventions:
-- ./0001_tenants.sql.

ALTER TABLE people ADD COLUMN display_name text;
ALTER TABLE people ADD COLUMN email text;
ALTER TABLE people ADD COLUMN status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'deactivated'));
ALTER TABLE people ADD COLUMN updated_at text;

UPDATE people SET capabilities = (
  SELECT jsonb_agg(DISTINCT v)::text FROM (
    SELECT jsonb_array_elements_text(people.capabilities::jsonb) AS v
    UNION SELECT jsonb_array_elements_text('["gate:submit","records:write","records:read"]'::jsonb)
  ) AS merged
);

CREATE TABLE service_accounts (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants (id),
  name         text NOT NULL,
  capabilities text NOT NULL CHECK (jsonb_typeof(capabilities::jsonb) = 'array'),
  status       text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'deactivated')),
  created_at   text NOT NULL,
  updated_at   text NOT NULL
);

CREATE INDEX service_accounts_by_tenant ON service_accounts (tenant_id, id);

ALTER TABLE api_keys ADD COLUMN service_account_id text REFERENCES service_accounts (id);
ALTER TABLE api_keys ADD COLUMN label text;
ALTER TABLE api_keys ADD COLUMN capabilities text CHECK (capabilities IS NULL OR jsonb_typeof(capabilities::jsonb) = 'array');
ALTER TABLE api_keys ADD COLUMN expires_at text;
ALTER TABLE api_keys ADD COLUMN last_used_at text;

INSERT INTO service_accounts (id, tenant_id, name, capabilities, status, created_at, updated_at)
SELECT 'sva_' || substr(tenant_id, 5), tenant_id, 'Tenant keys',
       '["gate:submit","records:write","records:read","reviews:decide","reviews:delegate","policy:manage","integrations:manage","exports:read"]',
       'active', min(created_at), min(created_at)
FROM api_keys WHERE person_id IS NULL GROUP BY tenant_id;

UPDATE api_keys SET service_account_id = 'sva_' || substr(tenant_id, 5) WHERE person_id IS NULL;

CREATE FUNCTION api_keys_join_tenant_keys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.person_id IS NULL AND NEW.service_account_id IS NULL THEN
    INSERT INTO service_accounts (id, tenant_id, name, capabilities, status, created_at, updated_at)
    VALUES ('sva_' || substr(NEW.tenant_id, 5), NEW.tenant_id, 'Tenant keys',
            '["gate:submit","records:write","records:read","reviews:decide","reviews:delegate","policy:manage","integrations:manage","exports:read"]',
            'active', NEW.created_at, NEW.created_at)
    ON CONFLICT (id) DO NOTHING;
    NEW.service_account_id := 'sva_' || substr(NEW.tenant_id, 5);
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER api_keys_without_principal_join_tenant_keys BEFORE INSERT ON api_keys
  FOR EACH ROW EXECUTE FUNCTION api_keys_join_tenant_keys();

DROP TRIGGER api_keys_update_bumps_credential_version ON api_keys;
CREATE TRIGGER api_keys_update_bumps_credential_version
  AFTER UPDATE OF tenant_id, key_sha256, prefix, status, revoked_at, capabilities, expires_at ON api_keys
  FOR EACH ROW EXECUTE FUNCTION bump_credential_version();

CREATE TRIGGER people_update_bumps_credential_version AFTER UPDATE OF role, capabilities, status, display_name, email ON people
  FOR EACH ROW EXECUTE FUNCTION bump_credential_version();

CREATE TRIGGER service_accounts_update_bumps_credential_version AFTER UPDATE ON service_accounts
  FOR EACH ROW EXECUTE FUNCTION bump_credential_version();
