-- 0012 for PostgreSQL: ../0012_account_people_billing.sql (people, account sessions, billing).
-- Conventions: ./0001_tenants.sql.

CREATE TABLE people (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants (id),
  email_digest bytea NOT NULL CHECK (octet_length(email_digest) = 32),
  role         text NOT NULL CHECK (role IN ('owner', 'member')),
  -- A JSON array (text that is not JSON fails the cast, and so the insert).
  capabilities text NOT NULL CHECK (jsonb_typeof(capabilities::jsonb) = 'array'),
  created_at   text NOT NULL,
  UNIQUE (tenant_id, email_digest)
);

ALTER TABLE api_keys ADD COLUMN person_id text REFERENCES people (id);

CREATE TABLE account_sessions (
  id           text PRIMARY KEY,
  token_sha256 bytea NOT NULL UNIQUE CHECK (octet_length(token_sha256) = 32),
  csrf_sha256  bytea NOT NULL CHECK (octet_length(csrf_sha256) = 32),
  tenant_id    text NOT NULL REFERENCES tenants (id),
  person_id    text REFERENCES people (id),
  key_id       text NOT NULL REFERENCES api_keys (id),
  created_at   text NOT NULL,
  expires_at   text NOT NULL,
  revoked_at   text
);

CREATE TABLE billing_checkouts (
  id            text PRIMARY KEY,
  tenant_id     text NOT NULL REFERENCES tenants (id),
  person_id     text NOT NULL REFERENCES people (id),
  provider      text NOT NULL CHECK (provider IN ('local', 'stripe')),
  provider_ref  text NOT NULL,
  status        text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'verified', 'completed')),
  customer_ref  text,
  created_at    text NOT NULL,
  completed_at  text,
  UNIQUE (provider, provider_ref)
);

CREATE INDEX billing_checkouts_by_tenant ON billing_checkouts (tenant_id, id);

CREATE TABLE tenant_billing (
  tenant_id    text PRIMARY KEY REFERENCES tenants (id),
  provider     text NOT NULL CHECK (provider IN ('local', 'stripe')),
  customer_ref text,
  created_at   text NOT NULL
);
