-- 0003: tenant policy (reserved for the tenant-policy capability; filled in by its change).
SELECT 1;
