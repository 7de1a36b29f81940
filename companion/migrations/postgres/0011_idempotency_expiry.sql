-- 0011 for PostgreSQL: ../0011_idempotency_expiry.sql. Conventions: ./0001_tenants.sql.

CREATE INDEX idempotency_keys_by_created_at ON idempotency_keys (created_at);
