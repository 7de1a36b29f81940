-- 0007 for PostgreSQL: ../0007_credential_version.sql (a counter every credential change bumps,
-- so cached key lookups know when to forget). Conventions: ./0001_tenants.sql.

CREATE TABLE credential_version (
  id      bigint PRIMARY KEY CHECK (id = 1),
  version bigint NOT NULL
);

INSERT INTO credential_version (id, version) VALUES (1, 0);

CREATE FUNCTION bump_credential_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE credential_version SET version = version + 1 WHERE id = 1;
  RETURN NULL;
END;
$$;

CREATE TRIGGER api_keys_update_bumps_credential_version AFTER UPDATE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION bump_credential_version();

CREATE TRIGGER api_keys_delete_bumps_credential_version AFTER DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION bump_credential_version();

CREATE TRIGGER tenants_kind_bumps_credential_version AFTER UPDATE OF kind ON tenants
  FOR EACH ROW EXECUTE FUNCTION bump_credential_version();

CREATE TRIGGER tenants_delete_bumps_credential_version AFTER DELETE ON tenants
  FOR EACH ROW EXECUTE FUNCTION bump_credential_version();
