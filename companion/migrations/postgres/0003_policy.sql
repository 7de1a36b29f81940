-- 0003 for PostgreSQL: ../0003_policy.sql (append-only tenant policy versions).
-- Conventions: ./0001_tenants.sql.

CREATE TABLE policy_versions (
  tenant_id       text NOT NULL REFERENCES tenants (id),
  policy_pack     text NOT NULL,
  version         bigint NOT NULL CHECK (version >= 1),
  digest          text NOT NULL CHECK (length(digest) = 64),
  previous_digest text CHECK (previous_digest IS NULL OR length(previous_digest) = 64),
  document        text NOT NULL,
  actor           text NOT NULL,
  created_at      text NOT NULL,
  action_key      text NOT NULL UNIQUE REFERENCES sealed_records (action_key),
  PRIMARY KEY (tenant_id, policy_pack, version),
  CHECK ((version = 1) = (previous_digest IS NULL))
);

-- History is fixed: the receipts already sealed commit to these rows.
CREATE FUNCTION policy_versions_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'policy_versions is append-only: PUT /tenant/policy makes a new version';
END;
$$;

CREATE TRIGGER policy_versions_no_update BEFORE UPDATE ON policy_versions
  FOR EACH ROW EXECUTE FUNCTION policy_versions_append_only();

CREATE TRIGGER policy_versions_no_delete BEFORE DELETE ON policy_versions
  FOR EACH ROW EXECUTE FUNCTION policy_versions_append_only();
