-- Every production public key that has signed here, so receipts and epoch headers signed by
-- an earlier key (before a move to another custody, e.g. file → PKCS#11) keep verifying: the
-- JWKS publishes the running key as active and every earlier one as retired (DESIGN.md §3).
-- Public keys only; private material never enters the database.
CREATE TABLE production_keys (
  key_id       TEXT PRIMARY KEY,
  public_key   BLOB NOT NULL CHECK (length(public_key) = 32),
  custody      TEXT NOT NULL,
  first_used_at TEXT NOT NULL,
  retired_at   TEXT
) STRICT;
