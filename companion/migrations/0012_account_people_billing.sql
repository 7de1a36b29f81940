-- 0012: people and their capabilities, account sessions, and billing checkouts
-- (interface-spec Authentication 2, Account table, States "Sandbox tenant → production").
-- Runs inside one transaction opened by companion/core/migrations.ts: no BEGIN/COMMIT here.

-- A person acting for a tenant. Like the signup marker, only a digest of the normalised email is
-- kept (companion/account/signup.ts emailDigest), never the address. Capabilities are a JSON
-- array of names from companion/account/people.ts CAPABILITIES.
CREATE TABLE people (
  id           TEXT PRIMARY KEY,                          -- per_<ULID>
  tenant_id    TEXT NOT NULL REFERENCES tenants (id),
  email_digest BLOB NOT NULL CHECK (length(email_digest) = 32),
  role         TEXT NOT NULL CHECK (role IN ('owner', 'member')),
  capabilities TEXT NOT NULL CHECK (json_valid(capabilities) AND json_type(capabilities) = 'array'),
  created_at   TEXT NOT NULL,
  UNIQUE (tenant_id, email_digest)
) STRICT;

-- Keys minted before this migration belong to no person (NULL): their sessions carry person null.
ALTER TABLE api_keys ADD COLUMN person_id TEXT REFERENCES people (id);

-- Account sessions (DESIGN.md §6). Only SHA-256 digests of the cookie token and of the CSRF
-- token are stored; both tokens carry 256 random bits (the same reasoning as API keys, core/auth.ts).
CREATE TABLE account_sessions (
  id           TEXT PRIMARY KEY,                          -- ses_<ULID>
  token_sha256 BLOB NOT NULL UNIQUE CHECK (length(token_sha256) = 32),
  csrf_sha256  BLOB NOT NULL CHECK (length(csrf_sha256) = 32),
  tenant_id    TEXT NOT NULL REFERENCES tenants (id),
  person_id    TEXT REFERENCES people (id),
  key_id       TEXT NOT NULL REFERENCES api_keys (id),
  created_at   TEXT NOT NULL,
  expires_at   TEXT NOT NULL,
  revoked_at   TEXT
) STRICT;

-- Checkouts of the upgrade to production, one row per attempt. provider_ref is the provider's
-- own id (a Stripe Checkout Session id; the checkout id itself for the local provider).
CREATE TABLE billing_checkouts (
  id            TEXT PRIMARY KEY,                         -- chk_<ULID>
  tenant_id     TEXT NOT NULL REFERENCES tenants (id),
  person_id     TEXT NOT NULL REFERENCES people (id),
  provider      TEXT NOT NULL CHECK (provider IN ('local', 'stripe')),
  provider_ref  TEXT NOT NULL,
  status        TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'verified', 'completed')),
  customer_ref  TEXT,
  created_at    TEXT NOT NULL,
  completed_at  TEXT,
  UNIQUE (provider, provider_ref)
) STRICT;

CREATE INDEX billing_checkouts_by_tenant ON billing_checkouts (tenant_id, id);

-- How a production tenant pays: its provider and that provider's customer (the billing portal
-- needs it; NULL when the provider made none). One row per upgraded tenant.
CREATE TABLE tenant_billing (
  tenant_id    TEXT PRIMARY KEY REFERENCES tenants (id),
  provider     TEXT NOT NULL CHECK (provider IN ('local', 'stripe')),
  customer_ref TEXT,
  created_at   TEXT NOT NULL
) STRICT, WITHOUT ROWID;
