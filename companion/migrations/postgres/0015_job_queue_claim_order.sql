-- 0015 for PostgreSQL: ../0015_job_queue_claim_order.sql (claims read the due rows in
-- (run_at, id) order). Conventions: ./0001_tenants.sql.

DROP INDEX webhook_deliveries_due;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (run_at, id) WHERE status IN ('pending', 'failed');
DROP INDEX route_dispatches_due;
CREATE INDEX route_dispatches_due ON route_dispatches (run_at, id) WHERE status IN ('pending', 'failed') AND resolved_at IS NULL;
