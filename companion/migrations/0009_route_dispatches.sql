-- 0009: review route dispatches (interface-spec "Route dispatch (outbox item)", States and
-- transitions "Route dispatch …", "Review callback body"). One row per paused action whose
-- review route names an enabled chat, workflow or webhook target, written in the seal's own
-- transaction. The row is a leased job (companion/core/jobs/queue.ts): the send worker claims
-- it only under the explicit external-send flag. Raw-safe: the body holds keys, hrefs, the
-- pack's fixed next step and the platform blueprint, never prompt or document text.
-- Runs inside one transaction opened by companion/core/migrations.ts: no BEGIN/COMMIT here.

CREATE TABLE route_dispatches (
  id               TEXT PRIMARY KEY,                  -- dispatch_key, dsp_<ULID>
  tenant_id        TEXT NOT NULL REFERENCES tenants (id),
  action_key       TEXT NOT NULL,                     -- the paused gate action
  channel          TEXT NOT NULL CHECK (channel IN ('chat', 'workflow', 'webhook')),
  target           TEXT NOT NULL,
  body             TEXT NOT NULL,                     -- the delivery payload, the exact bytes sent
  status           TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'failed', 'dead')),
  prepared_at      TEXT,                              -- POST …/deliver: prepared for inspection, never posted
  attempt_count    INTEGER NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
  run_at           INTEGER NOT NULL,                  -- Unix ms
  lease_owner      TEXT,
  lease_expires_at INTEGER,
  last_error       TEXT,
  last_attempt_at  TEXT,
  created_at       TEXT NOT NULL,
  completed_at     TEXT,                              -- sent or dead-lettered
  -- The review decision that resolved the item (POST /v1/reviews or a signed callback):
  -- decision metadata and the caller's external_reference only.
  resolved_at      TEXT,
  resolution       TEXT,                              -- JSON
  UNIQUE (tenant_id, action_key),
  CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL))
) STRICT;
CREATE INDEX route_dispatches_due ON route_dispatches (run_at) WHERE status IN ('pending', 'failed') AND resolved_at IS NULL;
CREATE INDEX route_dispatches_by_tenant ON route_dispatches (tenant_id, id);

-- Signed callbacks already accepted, by SHA-256 of their signature: a replayed request (same
-- signature, same bytes) is refused, whatever the signature scheme's own replay window.
CREATE TABLE route_callback_signatures (
  tenant_id      TEXT NOT NULL,
  signature_hash TEXT NOT NULL CHECK (length(signature_hash) = 64),
  received_at    TEXT NOT NULL,
  PRIMARY KEY (tenant_id, signature_hash)
) STRICT, WITHOUT ROWID;
