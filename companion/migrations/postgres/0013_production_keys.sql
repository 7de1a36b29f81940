-- 0013 for PostgreSQL: ../0013_production_keys.sql (the production keys that have signed here).
-- Conventions: ./0001_tenants.sql.

CREATE TABLE production_keys (
  key_id        text PRIMARY KEY,
  public_key    bytea NOT NULL CHECK (octet_length(public_key) = 32),
  custody       text NOT NULL,
  first_used_at text NOT NULL,
  retired_at    text
);
