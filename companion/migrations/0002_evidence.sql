-- 0002: sealed evidence, the per-tenant log, metering, idempotency and the event outbox
-- (interface-spec "Evidence packet", "Usage ledger", Events rule 2; DESIGN.md §3, §4).
-- Hash commitments only: no prompt, document, or secret ever lands in these tables.

-- Every sealed record. (tenant_id, tenant_seq) is the tenant's append-only log
-- (DESIGN.md §4: leaf data = attestation hash, tenant_seq = leaf index).
CREATE TABLE sealed_records (
  id               INTEGER PRIMARY KEY,          -- insertion order across tenants
  tenant_id        TEXT NOT NULL REFERENCES tenants (id),
  tenant_seq       INTEGER NOT NULL CHECK (tenant_seq >= 0),
  action_key       TEXT NOT NULL UNIQUE,         -- <vertical>:<action-type>:<ULID>
  vertical         TEXT NOT NULL,
  pack             TEXT NOT NULL,
  kind             TEXT NOT NULL,
  decision         TEXT,
  status           TEXT NOT NULL,
  review_route     TEXT,
  payload_hash     TEXT NOT NULL CHECK (length(payload_hash) = 64),
  packet_hash      TEXT NOT NULL CHECK (length(packet_hash) = 64),
  attestation      TEXT NOT NULL,                -- the signed JCS text, byte for byte
  attestation_hash TEXT NOT NULL CHECK (length(attestation_hash) = 64),
  signature        TEXT NOT NULL,                -- base64url Ed25519 signature
  key_id           TEXT NOT NULL,
  dev_key          INTEGER NOT NULL CHECK (dev_key IN (0, 1)),
  recorded_at      TEXT NOT NULL,                -- server clock, RFC 3339 UTC with ms
  credits          INTEGER NOT NULL CHECK (credits >= 0),
  details          TEXT NOT NULL,                -- raw-safe response extras (next_step, catalog_refs)
  UNIQUE (tenant_id, tenant_seq)
) STRICT;

CREATE INDEX sealed_records_by_time ON sealed_records (tenant_id, recorded_at, tenant_seq);

-- Metering (interface-spec "Usage ledger", Limits): one row per tenant, updated in the
-- same transaction as the seal it counts.
CREATE TABLE usage_counters (
  tenant_id    TEXT PRIMARY KEY REFERENCES tenants (id),
  actions_used INTEGER NOT NULL DEFAULT 0 CHECK (actions_used >= 0),
  credits_used INTEGER NOT NULL DEFAULT 0 CHECK (credits_used >= 0),
  updated_at   TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- A retry with the same idempotency_key returns the original response body and is metered
-- once (interface-spec Gate request). request_hash tells a retry from a key reused for
-- another body.
CREATE TABLE idempotency_keys (
  tenant_id     TEXT NOT NULL REFERENCES tenants (id),
  scope         TEXT NOT NULL,                   -- the endpoint, e.g. "POST /v1/gate"
  key_hash      TEXT NOT NULL,                   -- SHA-256 of the caller's key (keys may carry meaning)
  request_hash  TEXT NOT NULL,
  action_key    TEXT NOT NULL,
  status        INTEGER NOT NULL,
  response      TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  PRIMARY KEY (tenant_id, scope, key_hash)
) STRICT, WITHOUT ROWID;

-- The event outbox: enqueued in the same transaction as what caused it, drained later by the
-- webhook worker (interface-spec Events rule 2). dedupe_key makes "at most once per
-- underlying event" a constraint, not a hope.
CREATE TABLE events (
  id          TEXT PRIMARY KEY,                  -- evt_<ULID>
  tenant_id   TEXT NOT NULL REFERENCES tenants (id),
  type        TEXT NOT NULL,
  dedupe_key  TEXT UNIQUE,
  payload     TEXT NOT NULL,                     -- JSON, raw-safe
  created_at  TEXT NOT NULL
) STRICT;

