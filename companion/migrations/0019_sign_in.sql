-- 0019: sign-in that is not an API key (companion/sign-in/). A tenant's OpenID Connect identity
-- provider, the IdP subjects linked to people, the authorization requests in flight, and the
-- OAuth device authorization grant (RFC 8628) that gives the extension a person-bound key.
-- Runs inside one transaction opened by companion/core/migrations.ts: no BEGIN/COMMIT here.

-- One identity provider per tenant. The client secret is a secret reference (secret://…,
-- resolved through the operator's grants at sign-in), never the secret itself; NULL for a
-- public client that proves itself with PKCE alone.
CREATE TABLE identity_providers (
  tenant_id         TEXT PRIMARY KEY REFERENCES tenants (id),
  issuer            TEXT NOT NULL,
  client_id         TEXT NOT NULL,
  client_secret_ref TEXT,
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- The email domains whose people sign in with that tenant's provider: a domain names at most one
-- tenant, so GET /account/oidc/start?email=… finds exactly one.
CREATE TABLE identity_provider_domains (
  domain    TEXT PRIMARY KEY,                             -- lowercase, e.g. example.com
  tenant_id TEXT NOT NULL REFERENCES identity_providers (tenant_id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

CREATE INDEX identity_provider_domains_by_tenant ON identity_provider_domains (tenant_id);

-- An IdP subject (OpenID Connect Core §2: iss + sub identify the end-user) linked to a person on
-- the first sign-in by verified email; later sign-ins find the person by the subject alone.
-- Every account session names the key it was opened with (0012), and is narrowed by that key's
-- capabilities; a session opened by OpenID Connect names session_key_id, a key of the person with
-- no subset whose secret was never kept and which is revoked as it is made: it anchors sessions
-- and authenticates nothing.
CREATE TABLE oidc_subjects (
  tenant_id      TEXT NOT NULL REFERENCES tenants (id),
  issuer         TEXT NOT NULL,
  subject        TEXT NOT NULL,
  person_id      TEXT NOT NULL REFERENCES people (id),
  session_key_id TEXT NOT NULL REFERENCES api_keys (id),
  created_at     TEXT NOT NULL,
  PRIMARY KEY (tenant_id, issuer, subject)
) STRICT, WITHOUT ROWID;

-- An authorization request in flight: its state (only the digest; the browser holds the value
-- in a short-lived cookie), nonce and PKCE verifier (RFC 7636 §4.1), used once.
CREATE TABLE oidc_logins (
  state_sha256  BLOB PRIMARY KEY CHECK (length(state_sha256) = 32),
  tenant_id     TEXT NOT NULL REFERENCES tenants (id),
  nonce         TEXT NOT NULL,
  code_verifier TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  expires_at    TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- RFC 8628 §3.2: one row per device authorization request. Only the device code's digest is
-- kept; the user code is short and shown to people, and is unique while the row lives. The
-- tenant and person are those of the person who approved or denied it in the console; key_id
-- is the API key issued to the device when it collected the approval (once).
CREATE TABLE device_authorizations (
  id                 TEXT PRIMARY KEY,                    -- dev_<ULID>
  device_code_sha256 BLOB NOT NULL UNIQUE CHECK (length(device_code_sha256) = 32),
  user_code          TEXT NOT NULL UNIQUE,
  client_id          TEXT NOT NULL,
  scope              TEXT NOT NULL CHECK (json_valid(scope) AND json_type(scope) = 'array'),
  status             TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'issued')),
  tenant_id          TEXT REFERENCES tenants (id),
  person_id          TEXT REFERENCES people (id),
  granted_scope      TEXT CHECK (granted_scope IS NULL OR (json_valid(granted_scope) AND json_type(granted_scope) = 'array')),
  key_id             TEXT REFERENCES api_keys (id),
  poll_interval      INTEGER NOT NULL,
  last_polled_at     TEXT,
  created_at         TEXT NOT NULL,
  expires_at         TEXT NOT NULL,
  decided_at         TEXT
) STRICT;

CREATE INDEX device_authorizations_by_person ON device_authorizations (tenant_id, person_id);
