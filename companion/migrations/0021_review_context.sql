-- 0021: review context sealed to reviewers' devices (companion/review-context/). The service
-- stores reviewers' X25519 public keys and, while a paused action is open, one HPKE ciphertext
-- (RFC 9180) of its context per reviewer device. It never holds a key that opens them.
-- Runs inside one transaction opened by companion/core/migrations.ts: no BEGIN/COMMIT here.

-- A device key a person registered to receive review context: the raw 32-byte X25519 public key
-- (RFC 7748 §5), its device label, and its use. Keys are revoked, never deleted, so a listing
-- shows what a person ever registered.
CREATE TABLE review_keys (
  id           TEXT PRIMARY KEY,                          -- rvk_<ULID>
  tenant_id    TEXT NOT NULL REFERENCES tenants (id),
  person_id    TEXT NOT NULL REFERENCES people (id),
  public_key   BLOB NOT NULL CHECK (length(public_key) = 32),
  label        TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  last_used_at TEXT,
  revoked_at   TEXT,
  UNIQUE (tenant_id, public_key)
) STRICT;

CREATE INDEX review_keys_by_person ON review_keys (tenant_id, person_id, id);

-- One ciphertext per (paused action, recipient device key): RFC 9180 §6.1 Seal's enc and ct.
-- Held only while the action's review is open: deleted in the transaction that seals its end
-- (decision, expiry) and by a sweep for anything left over (companion/review-context/sweep.ts).
CREATE TABLE review_contexts (
  tenant_id     TEXT NOT NULL REFERENCES tenants (id),
  action_key    TEXT NOT NULL,
  review_key_id TEXT NOT NULL REFERENCES review_keys (id),
  enc           BLOB NOT NULL CHECK (length(enc) = 32),
  ct            BLOB NOT NULL CHECK (length(ct) > 16),
  created_at    TEXT NOT NULL,
  PRIMARY KEY (tenant_id, action_key, review_key_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX review_contexts_by_recipient ON review_contexts (review_key_id);

-- Who submitted each paused gate request (the principal and the credential it used), written in
-- the gate seal's transaction: only they may share or withdraw the action's review context.
-- Identifiers only; kept while the review is open, erased with the contexts when it ends.
CREATE TABLE review_context_submitters (
  tenant_id     TEXT NOT NULL REFERENCES tenants (id),
  action_key    TEXT NOT NULL,
  principal_id  TEXT,                                     -- per_… or sva_…
  credential_id TEXT,                                     -- key_… or ses_…
  PRIMARY KEY (tenant_id, action_key)
) STRICT, WITHOUT ROWID;
