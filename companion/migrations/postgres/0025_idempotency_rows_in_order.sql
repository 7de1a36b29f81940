-- 0025 for PostgreSQL: ../0025_idempotency_rows_in_order.sql moves SQLite's idempotency rows
-- out of their random key's order. A PostgreSQL table is a heap with its primary key in a
-- separate index already, which is what that migration makes of SQLite's: nothing changes here.
-- Conventions: ./0001_tenants.sql.

SELECT 1;
