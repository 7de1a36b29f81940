-- 0019 for PostgreSQL: ../0019_sign_in.sql (identity providers, linked IdP subjects, OpenID
-- Connect logins in flight, device authorizations). Conventions: ./0001_tenants.sql.

CREATE TABLE identity_providers (
  tenant_id         text PRIMARY KEY REFERENCES tenants (id),
  issuer            text NOT NULL,
  client_id         text NOT NULL,
  client_secret_ref text,
  created_at        text NOT NULL,
  updated_at        text NOT NULL
);

CREATE TABLE identity_provider_domains (
  domain    text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES identity_providers (tenant_id) ON DELETE CASCADE
);

CREATE INDEX identity_provider_domains_by_tenant ON identity_provider_domains (tenant_id);

CREATE TABLE oidc_subjects (
  tenant_id  text NOT NULL REFERENCES tenants (id),
  issuer     text NOT NULL,
  subject    text NOT NULL,
  person_id      text NOT NULL REFERENCES people (id),
  session_key_id text NOT NULL REFERENCES api_keys (id),
  created_at     text NOT NULL,
  PRIMARY KEY (tenant_id, issuer, subject)
);

CREATE TABLE oidc_logins (
  state_sha256  bytea PRIMARY KEY CHECK (octet_length(state_sha256) = 32),
  tenant_id     text NOT NULL REFERENCES tenants (id),
  nonce         text NOT NULL,
  code_verifier text NOT NULL,
  created_at    text NOT NULL,
  expires_at    text NOT NULL
);

CREATE TABLE device_authorizations (
  id                 text PRIMARY KEY,
  device_code_sha256 bytea NOT NULL UNIQUE CHECK (octet_length(device_code_sha256) = 32),
  user_code          text NOT NULL UNIQUE,
  client_id          text NOT NULL,
  scope              text NOT NULL CHECK (jsonb_typeof(scope::jsonb) = 'array'),
  status             text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'issued')),
  tenant_id          text REFERENCES tenants (id),
  person_id          text REFERENCES people (id),
  granted_scope      text CHECK (granted_scope IS NULL OR jsonb_typeof(granted_scope::jsonb) = 'array'),
  key_id             text REFERENCES api_keys (id),
  poll_interval      bigint NOT NULL,
  last_polled_at     text,
  created_at         text NOT NULL,
  expires_at         text NOT NULL,
  decided_at         text
);

CREATE INDEX device_authorizations_by_person ON device_authorizations (tenant_id, person_id);
