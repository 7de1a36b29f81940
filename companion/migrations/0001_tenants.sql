-- 0001: tenants and their API keys (interface-spec "Tenant", Authentication 1, Limits).
-- Runs inside one transaction opened by companion/core/migrations.ts: no BEGIN/COMMIT here.

-- The isolation boundary. The id never changes; display name and the statutory-metadata
-- retention setting are mutable (interface-spec "Tenant").
CREATE TABLE tenants (
  id                        TEXT PRIMARY KEY,            -- ten_<ULID>
  kind                      TEXT NOT NULL CHECK (kind IN ('sandbox', 'production')),
  display_name              TEXT NOT NULL,
  retain_statutory_metadata INTEGER NOT NULL DEFAULT 0 CHECK (retain_statutory_metadata IN (0, 1)),
  created_at                TEXT NOT NULL,               -- RFC 3339 UTC
  updated_at                TEXT NOT NULL
) STRICT;

-- One sandbox per email (interface-spec Limits). Only a digest of the normalised address is
-- kept, never the address: see companion/account/signup.ts for why and how.
CREATE TABLE sandbox_signups (
  email_digest BLOB PRIMARY KEY CHECK (length(email_digest) = 32),
  tenant_id    TEXT NOT NULL UNIQUE REFERENCES tenants (id),
  created_at   TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- API keys are stored only as SHA-256 digests (companion/core/auth.ts); prefix and last four
-- characters let a person tell keys apart in listings.
CREATE TABLE api_keys (
  id         TEXT PRIMARY KEY,                             -- key_<ULID>
  tenant_id  TEXT NOT NULL REFERENCES tenants (id),
  key_sha256 BLOB NOT NULL UNIQUE CHECK (length(key_sha256) = 32),
  prefix     TEXT NOT NULL CHECK (prefix IN ('svc_test_', 'svc_live_')),
  last_four  TEXT NOT NULL CHECK (length(last_four) = 4),
  status     TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
  created_at TEXT NOT NULL,
  revoked_at TEXT,
  CHECK ((status = 'revoked') = (revoked_at IS NOT NULL))
) STRICT;

CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id, id);
