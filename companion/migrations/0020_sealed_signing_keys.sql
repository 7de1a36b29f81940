-- 0020: the webhook signing keys the service mints are stored sealed (envelope encryption,
-- companion/core/secrets/envelope.ts: AES-256-GCM under a key-encryption key that never enters
-- the database, bound to its tenant, row and column), and the route send worker keeps its run
-- receipts per tenant, so a tenant's GET /routing/outbox/ticks shows its own dispatches' runs
-- and nothing of other tenants'.
-- Runs inside one transaction opened by companion/core/migrations.ts: no BEGIN/COMMIT here.

-- The rows the table held are copied in clear (kek_id NULL); the service seals them at its next
-- start, before it serves (webhooks/sealed-keys.ts). Freed pages are overwritten with zeros
-- from here on in this connection, so the dropped table's pages keep no clear key
-- (sqlite.org/pragma.html#pragma_secure_delete); the start turns it back off once sealed.
PRAGMA secure_delete = ON;

-- SQLite cannot drop a CHECK constraint: the table is rebuilt (sqlite.org/lang_altertable.html
-- §7), every row kept with its id, since each sealed value is bound to its row id.
CREATE TABLE webhook_signing_keys_sealed (
  id          INTEGER PRIMARY KEY,
  tenant_id   TEXT NOT NULL REFERENCES tenants (id),
  target      TEXT NOT NULL,
  key         TEXT NOT NULL,                          -- sealed: "v1." base64url(nonce ‖ ciphertext ‖ tag)
  created_at  TEXT NOT NULL,
  retires_at  TEXT,                                   -- null: the current key
  kek_id      TEXT,                                   -- the KEK that sealed key; null: key is a clear derived key awaiting its seal
  CHECK ((kek_id IS NULL AND length(key) = 64) OR (kek_id IS NOT NULL AND length(key) BETWEEN 20 AND 400))
) STRICT;
INSERT INTO webhook_signing_keys_sealed (id, tenant_id, target, key, created_at, retires_at, kek_id)
  SELECT id, tenant_id, target, key, created_at, retires_at, NULL FROM webhook_signing_keys;
DROP TABLE webhook_signing_keys;
ALTER TABLE webhook_signing_keys_sealed RENAME TO webhook_signing_keys;
CREATE INDEX webhook_signing_keys_by_target ON webhook_signing_keys (tenant_id, target, id);
CREATE INDEX webhook_signing_keys_to_seal ON webhook_signing_keys (kek_id, id);

-- One row per tenant per stored batch of the route send worker's outcomes (routing/service.ts):
-- what job_ticks says for the whole queue, cut down to one tenant's dispatches.
CREATE TABLE route_send_receipts (
  id           INTEGER PRIMARY KEY,
  tenant_id    TEXT NOT NULL REFERENCES tenants (id),
  worker       TEXT NOT NULL,
  started_at   TEXT NOT NULL,                         -- when the earliest of these attempts was claimed
  finished_at  TEXT NOT NULL,                         -- when their outcomes were stored
  claimed      INTEGER NOT NULL CHECK (claimed >= 0),
  succeeded    INTEGER NOT NULL CHECK (succeeded >= 0),
  retrying     INTEGER NOT NULL CHECK (retrying >= 0),
  dead         INTEGER NOT NULL CHECK (dead >= 0),
  lease_lost   INTEGER NOT NULL CHECK (lease_lost >= 0)
) STRICT;
CREATE INDEX route_send_receipts_by_tenant ON route_send_receipts (tenant_id, id);
