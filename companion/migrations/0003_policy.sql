-- 0003: tenant policy versions (interface-spec "What the service does" 3, "Tenant policy
-- (query policy_pack)"). Runs inside one transaction opened by companion/core/migrations.ts.
--
-- Append-only: a PUT makes a new version, never an edit in place, and each version is written
-- in the same transaction as the policy receipt sealed for it (action_key). The document holds
-- action type ids, review routes and a short label/note only; companion/policy/secrets.ts
-- refuses raw prompt, document, key or secret material before anything reaches this table.
CREATE TABLE policy_versions (
  tenant_id       TEXT NOT NULL REFERENCES tenants (id),
  policy_pack     TEXT NOT NULL,                         -- a gate pack name (law, defense, ...)
  version         INTEGER NOT NULL CHECK (version >= 1), -- 1, 2, 3, ... per tenant and pack
  digest          TEXT NOT NULL CHECK (length(digest) = 64),  -- SHA-256 of the document's JCS bytes
  previous_digest TEXT CHECK (previous_digest IS NULL OR length(previous_digest) = 64),
  document        TEXT NOT NULL,                         -- the normalised document, JCS text
  actor           TEXT NOT NULL,                         -- API key id (key_<ULID>), never the key
  created_at      TEXT NOT NULL,                         -- the receipt's signed recorded_at
  action_key      TEXT NOT NULL UNIQUE REFERENCES sealed_records (action_key),
  PRIMARY KEY (tenant_id, policy_pack, version),
  CHECK ((version = 1) = (previous_digest IS NULL))
) STRICT, WITHOUT ROWID;

-- History is fixed: the receipts already sealed commit to these rows.
CREATE TRIGGER policy_versions_no_update BEFORE UPDATE ON policy_versions
BEGIN
  SELECT RAISE(ABORT, 'policy_versions is append-only: PUT /tenant/policy makes a new version');
END;

CREATE TRIGGER policy_versions_no_delete BEFORE DELETE ON policy_versions
BEGIN
  SELECT RAISE(ABORT, 'policy_versions is append-only: PUT /tenant/policy makes a new version');
END;
