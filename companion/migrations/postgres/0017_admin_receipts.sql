-- 0017 for PostgreSQL: ../0017_admin_receipts.sql (the index of sealed admin receipts).
-- Conventions: ./0001_tenants.sql.

CREATE TABLE admin_receipts (
  action_key text PRIMARY KEY REFERENCES sealed_records (action_key),
  tenant_id  text NOT NULL REFERENCES tenants (id),
  action     text NOT NULL,
  actor_id   text NOT NULL,
  subject_id text NOT NULL,
  created_at text NOT NULL
);

CREATE INDEX admin_receipts_by_tenant ON admin_receipts (tenant_id, action_key);
