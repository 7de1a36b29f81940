-- 0010: review rules (companion/reviews/rules.ts): approvals from distinct reviewers before
-- release, a reminder and an escalation chain of review routes, each captured on the item
-- when its action pauses; and what the review insights read.
-- Runs inside one transaction opened by companion/core/migrations.ts: no BEGIN/COMMIT here.

-- The rule in force when the action paused (normalised JSON; null: one approval, no
-- schedule), copied from the policy version the gate seal committed as policy_digest.
ALTER TABLE review_items ADD COLUMN rule TEXT;
ALTER TABLE review_items ADD COLUMN approvals_required INTEGER NOT NULL DEFAULT 1 CHECK (approvals_required BETWEEN 1 AND 5);
-- Approvals sealed so far; the item stays open (pending or escalated) until the last one.
ALTER TABLE review_items ADD COLUMN approvals INTEGER NOT NULL DEFAULT 0 CHECK (approvals >= 0);
-- Items approved before rules existed were approved by their one approval.
UPDATE review_items SET approvals = 1 WHERE status = 'approved';
-- When the one review.reminder event was enqueued (null: not yet, or the rule has none).
ALTER TABLE review_items ADD COLUMN reminded_at TEXT;
-- Escalation steps taken (0: none); review_route is the current step's route.
ALTER TABLE review_items ADD COLUMN escalation_level INTEGER NOT NULL DEFAULT 0 CHECK (escalation_level BETWEEN 0 AND 5);
-- The next reminder or escalation step; null when the rule has nothing left to do.
ALTER TABLE review_items ADD COLUMN schedule_due_at TEXT;

-- The scheduler: open items with work due, across tenants.
CREATE INDEX review_items_schedule ON review_items (schedule_due_at)
  WHERE schedule_due_at IS NOT NULL AND status IN ('pending', 'escalated');
-- Insights: every item of a tenant, whatever its status.
CREATE INDEX review_items_by_tenant ON review_items (tenant_id, created_at);

-- A reviewer approves an action once: the guard behind the 409 review_duplicate_approver,
-- holding under any interleaving.
CREATE UNIQUE INDEX review_receipts_one_approval ON review_receipts (tenant_id, reviewed_action_key, reviewer)
  WHERE decision = 'approved';

-- Each escalation step taken: the route the item left and the one it moved to. The primary
-- key makes a step impossible to record twice.
CREATE TABLE review_escalations (
  action_key TEXT NOT NULL REFERENCES review_items (action_key),
  level      INTEGER NOT NULL CHECK (level BETWEEN 1 AND 5),
  tenant_id  TEXT NOT NULL REFERENCES tenants (id),
  from_route TEXT,
  to_route   TEXT NOT NULL,
  at         TEXT NOT NULL,
  PRIMARY KEY (action_key, level)
) STRICT, WITHOUT ROWID;
