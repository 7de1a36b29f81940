-- 0014 for PostgreSQL: ../0014_tenant_log_lower_levels.sql (a tenant log's four lowest levels
-- are computed from its records, not stored). Conventions: ./0001_tenants.sql.

DELETE FROM merkle_nodes WHERE level < 4 AND log_id NOT LIKE '#%';
