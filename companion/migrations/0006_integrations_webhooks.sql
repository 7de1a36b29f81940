-- 0006: tenant integrations, webhook signing keys, the webhook delivery outbox and job tick
-- receipts (interface-spec "Webhook integration", "Webhook delivery item", Events rules 1–9,
-- DESIGN.md §5). Secrets never land here: a route stores a secret_ref; a minted whsec_ secret
-- is stored only as its derived key (Events rule 5).
-- Runs inside one transaction opened by companion/core/migrations.ts: no BEGIN/COMMIT here.

-- One row per (tenant, channel, target): PUT /tenant/integrations/{channel}/{target}.
CREATE TABLE tenant_integrations (
  tenant_id            TEXT NOT NULL REFERENCES tenants (id),
  channel              TEXT NOT NULL,
  target               TEXT NOT NULL,
  enabled              INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  config               TEXT NOT NULL,                 -- JSON, validated per channel
  secret_ref           TEXT,                          -- env://, secret://, aws-sm://, gcp-sm://, azure-kv://
  created_at           TEXT NOT NULL,
  updated_at           TEXT NOT NULL,
  -- Delivery health, kept by the sending worker: a streak of failures since failing_since;
  -- the service disables a target after sustained failure (disabled_at, disabled_reason)
  -- until the tenant enables it again.
  consecutive_failures INTEGER NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
  failing_since        TEXT,
  disabled_at          TEXT,
  disabled_reason      TEXT,
  PRIMARY KEY (tenant_id, channel, target)
) STRICT, WITHOUT ROWID;

-- HMAC keys of a webhook target: the derived key of each minted whsec_ secret (Events rule 5).
-- During a rotation the previous key keeps signing beside the new one until retires_at.
CREATE TABLE webhook_signing_keys (
  id          INTEGER PRIMARY KEY,
  tenant_id   TEXT NOT NULL REFERENCES tenants (id),
  target      TEXT NOT NULL,
  key         TEXT NOT NULL CHECK (length(key) = 64),
  created_at  TEXT NOT NULL,
  retires_at  TEXT                                    -- null: the current key
) STRICT;
CREATE INDEX webhook_signing_keys_by_target ON webhook_signing_keys (tenant_id, target, id);

-- The outbox (Events rule 2): one row per event per subscribed target, written in the same
-- transaction as its cause. id is the X-Service-Id, the same on every attempt, so receivers
-- dedupe redeliveries. body is the exact bytes signed and sent.
CREATE TABLE webhook_deliveries (
  id               TEXT PRIMARY KEY,                  -- evt_<ULID>
  tenant_id        TEXT NOT NULL REFERENCES tenants (id),
  target           TEXT NOT NULL,
  event            TEXT NOT NULL,
  event_key        TEXT NOT NULL,                     -- the underlying event: at most one delivery per target
  body             TEXT NOT NULL,
  status           TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'dead')),
  attempt_count    INTEGER NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
  run_at           INTEGER NOT NULL,                  -- Unix ms: due from then on
  lease_owner      TEXT,
  lease_expires_at INTEGER,                           -- Unix ms
  last_error       TEXT,
  last_attempt_at  TEXT,
  created_at       TEXT NOT NULL,
  completed_at     TEXT,                              -- delivered or dead-lettered
  UNIQUE (tenant_id, target, event_key),
  CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL))
) STRICT;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (run_at) WHERE status IN ('pending', 'failed');
CREATE INDEX webhook_deliveries_by_target ON webhook_deliveries (tenant_id, target, id);
CREATE INDEX webhook_deliveries_by_status ON webhook_deliveries (tenant_id, target, status, id);

-- Scheduler tick run receipts of every leased job queue (companion/core/jobs/): what each
-- worker tick claimed and how each job ended. Only ticks that claimed work are recorded.
CREATE TABLE job_ticks (
  id           INTEGER PRIMARY KEY,
  queue        TEXT NOT NULL,
  worker       TEXT NOT NULL,
  started_at   TEXT NOT NULL,
  finished_at  TEXT NOT NULL,
  claimed      INTEGER NOT NULL CHECK (claimed >= 0),
  succeeded    INTEGER NOT NULL CHECK (succeeded >= 0),
  retrying     INTEGER NOT NULL CHECK (retrying >= 0),
  dead         INTEGER NOT NULL CHECK (dead >= 0),
  lease_lost   INTEGER NOT NULL CHECK (lease_lost >= 0)
) STRICT;
CREATE INDEX job_ticks_by_queue ON job_ticks (queue, id);

-- The events table of 0002 is replaced by webhook_deliveries: an event is enqueued only for
-- subscribed targets (Events rule 1), one row per target, and nothing ever read the old table.
DROP TABLE events;
