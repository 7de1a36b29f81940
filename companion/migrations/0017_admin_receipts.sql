-- 0017: admin receipts (companion/account/admin-receipts.ts). Every change to people, service
-- accounts and keys is sealed like a policy receipt (kind policy, action type admin); this
-- table indexes those sealed records by tenant for GET /account/audit. It is written in the
-- seal's own transaction, so a receipt never exists without its row, nor the reverse.
-- Runs inside one transaction opened by companion/core/migrations.ts: no BEGIN/COMMIT here.

CREATE TABLE admin_receipts (
  action_key TEXT PRIMARY KEY REFERENCES sealed_records (action_key),  -- account:admin:<ULID>
  tenant_id  TEXT NOT NULL REFERENCES tenants (id),
  action     TEXT NOT NULL,
  actor_id   TEXT NOT NULL,
  subject_id TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- Newest first per tenant: action keys end in a ULID, so they sort by time.
CREATE INDEX admin_receipts_by_tenant ON admin_receipts (tenant_id, action_key);
