-- 0010 for PostgreSQL: ../0010_review_rules.sql (N-of-M approvals, reminders, escalation
-- chains). Conventions: ./0001_tenants.sql.

ALTER TABLE review_items ADD COLUMN rule text;
ALTER TABLE review_items ADD COLUMN approvals_required bigint NOT NULL DEFAULT 1 CHECK (approvals_required BETWEEN 1 AND 5);
ALTER TABLE review_items ADD COLUMN approvals bigint NOT NULL DEFAULT 0 CHECK (approvals >= 0);
UPDATE review_items SET approvals = 1 WHERE status = 'approved';
ALTER TABLE review_items ADD COLUMN reminded_at text;
ALTER TABLE review_items ADD COLUMN escalation_level bigint NOT NULL DEFAULT 0 CHECK (escalation_level BETWEEN 0 AND 5);
ALTER TABLE review_items ADD COLUMN schedule_due_at text;

CREATE INDEX review_items_schedule ON review_items (schedule_due_at)
  WHERE schedule_due_at IS NOT NULL AND status IN ('pending', 'escalated');
CREATE INDEX review_items_by_tenant ON review_items (tenant_id, created_at);

CREATE UNIQUE INDEX review_receipts_one_approval ON review_receipts (tenant_id, reviewed_action_key, reviewer)
  WHERE decision = 'approved';

CREATE TABLE review_escalations (
  action_key text NOT NULL REFERENCES review_items (action_key),
  level      bigint NOT NULL CHECK (level BETWEEN 1 AND 5),
  tenant_id  text NOT NULL REFERENCES tenants (id),
  from_route text,
  to_route   text NOT NULL,
  at         text NOT NULL,
  PRIMARY KEY (action_key, level)
);
