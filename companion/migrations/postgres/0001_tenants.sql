-- 0001 for PostgreSQL: ../0001_tenants.sql expressed for the scale-out engine, table for table
-- and column for column (test/companion/postgres-schema.test.ts holds the two in step).
-- Conventions in every file here: SQLite INTEGER is bigint, BLOB is bytea, a rowid key is an
-- identity column, 0/1 flags stay integers (the queries are shared), STRICT and WITHOUT ROWID
-- have no counterpart. Runs inside one transaction, like the SQLite file.

CREATE TABLE tenants (
  id                        text PRIMARY KEY,
  kind                      text NOT NULL CHECK (kind IN ('sandbox', 'production')),
  display_name              text NOT NULL,
  retain_statutory_metadata bigint NOT NULL DEFAULT 0 CHECK (retain_statutory_metadata IN (0, 1)),
  created_at                text NOT NULL,
  updated_at                text NOT NULL
);

CREATE TABLE sandbox_signups (
  email_digest bytea PRIMARY KEY CHECK (octet_length(email_digest) = 32),
  tenant_id    text NOT NULL UNIQUE REFERENCES tenants (id),
  created_at   text NOT NULL
);

CREATE TABLE api_keys (
  id         text PRIMARY KEY,
  tenant_id  text NOT NULL REFERENCES tenants (id),
  key_sha256 bytea NOT NULL UNIQUE CHECK (octet_length(key_sha256) = 32),
  prefix     text NOT NULL CHECK (prefix IN ('svc_test_', 'svc_live_')),
  last_four  text NOT NULL CHECK (length(last_four) = 4),
  status     text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
  created_at text NOT NULL,
  revoked_at text,
  CHECK ((status = 'revoked') = (revoked_at IS NOT NULL))
);

CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id, id);
