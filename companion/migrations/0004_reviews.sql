-- 0004: reviews (interface-spec "Review request", States and transitions "needs_review →
-- review decision recorded", Endpoints GET /active-manifest). Raw-safe: no proposed text, no
-- reviewer reason (the reason is committed only through the receipt's payload_hash).
-- Runs inside one transaction opened by companion/core/migrations.ts: no BEGIN/COMMIT here.

-- One pending-review item per gate action that needed review, written in the same transaction
-- as the gate seal (companion/gate/seal-gate.ts onSealed). The item is the paused action's
-- live state; every transition is itself a sealed review receipt (review_receipts below).
CREATE TABLE review_items (
  id                 INTEGER PRIMARY KEY,          -- insertion order
  tenant_id          TEXT NOT NULL REFERENCES tenants (id),
  action_key         TEXT NOT NULL UNIQUE REFERENCES sealed_records (action_key),
  pack               TEXT NOT NULL,
  vertical           TEXT NOT NULL,
  action_type        TEXT NOT NULL,                -- a manifest id, never caller text
  review_route       TEXT,                         -- <channel>:<target>
  next_step          TEXT NOT NULL,                -- the pack's fixed employee-safe text
  status             TEXT NOT NULL CHECK (status IN ('pending', 'escalated', 'approved', 'rejected', 'expired')),
  created_at         TEXT NOT NULL,                -- = the gate seal's recorded_at
  expires_at         TEXT NOT NULL,                -- end of the review window; fail closed after it
  window_seconds     INTEGER NOT NULL CHECK (window_seconds > 0),
  escalation_count   INTEGER NOT NULL DEFAULT 0 CHECK (escalation_count >= 0),
  reviewer           TEXT,                         -- who set the current status (null: pending, expired)
  decided_at         TEXT,                         -- when the current status was set (expired: expires_at)
  receipt_action_key TEXT REFERENCES sealed_records (action_key),
  updated_at         TEXT NOT NULL,
  CHECK (expires_at > created_at),
  -- Every status but pending was set by a sealed receipt (review or expiry).
  CHECK ((status = 'pending') = (decided_at IS NULL)),
  CHECK ((status = 'pending') = (receipt_action_key IS NULL))
) STRICT;

-- The board (GET /active-manifest): a tenant's open items, oldest first.
CREATE INDEX review_items_open ON review_items (tenant_id, created_at, id) WHERE status IN ('pending', 'escalated');
-- The expiry sweep: open items by deadline, across tenants.
CREATE INDEX review_items_due ON review_items (expires_at) WHERE status IN ('pending', 'escalated');

-- Every review receipt (approved, rejected, escalated, expired) linked to the action it
-- reviewed: the history behind an item's current status.
CREATE TABLE review_receipts (
  receipt_action_key  TEXT PRIMARY KEY REFERENCES sealed_records (action_key),
  tenant_id           TEXT NOT NULL REFERENCES tenants (id),
  reviewed_action_key TEXT NOT NULL REFERENCES review_items (action_key),
  decision            TEXT NOT NULL CHECK (decision IN ('approved', 'rejected', 'escalated', 'expired')),
  reviewer            TEXT,                        -- null for an expiry
  recorded_at         TEXT NOT NULL
) STRICT, WITHOUT ROWID;

CREATE INDEX review_receipts_by_action ON review_receipts (tenant_id, reviewed_action_key, recorded_at);

-- needs_review gate actions sealed before this migration get their item too, with the default
-- window (72 h: CONFIG_DEFAULTS.reviewTimeoutSeconds, companion/core/config.ts), so every
-- paused action has exactly one item and fails closed the same way. recorded_at is RFC 3339
-- UTC with milliseconds; %f keeps them.
INSERT INTO review_items
  (tenant_id, action_key, pack, vertical, action_type, review_route, next_step, status,
   created_at, expires_at, window_seconds, updated_at)
SELECT tenant_id, action_key, pack, vertical,
       coalesce(json_extract(details, '$.action_type'), 'proposed-action'),
       review_route,
       coalesce(json_extract(details, '$.next_step'), 'Pause here until a reviewer decides.'),
       'pending', recorded_at,
       strftime('%Y-%m-%dT%H:%M:%fZ', recorded_at, '+259200 seconds'),
       259200, recorded_at
  FROM sealed_records
 WHERE kind = 'gate' AND decision = 'needs_review'
 ORDER BY id;
