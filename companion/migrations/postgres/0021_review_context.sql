-- 0021 for PostgreSQL: ../0021_review_context.sql (reviewers' device keys and the review
-- context ciphertexts held while a paused action is open). Conventions: ./0001_tenants.sql.

CREATE TABLE review_keys (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants (id),
  person_id    text NOT NULL REFERENCES people (id),
  public_key   bytea NOT NULL CHECK (octet_length(public_key) = 32),
  label        text NOT NULL,
  created_at   text NOT NULL,
  last_used_at text,
  revoked_at   text,
  UNIQUE (tenant_id, public_key)
);

CREATE INDEX review_keys_by_person ON review_keys (tenant_id, person_id, id);

CREATE TABLE review_contexts (
  tenant_id     text NOT NULL REFERENCES tenants (id),
  action_key    text NOT NULL,
  review_key_id text NOT NULL REFERENCES review_keys (id),
  enc           bytea NOT NULL CHECK (octet_length(enc) = 32),
  ct            bytea NOT NULL CHECK (octet_length(ct) > 16),
  created_at    text NOT NULL,
  PRIMARY KEY (tenant_id, action_key, review_key_id)
);

CREATE INDEX review_contexts_by_recipient ON review_contexts (review_key_id);

CREATE TABLE review_context_submitters (
  tenant_id     text NOT NULL REFERENCES tenants (id),
  action_key    text NOT NULL,
  principal_id  text,
  credential_id text,
  PRIMARY KEY (tenant_id, action_key)
);
