-- The job queue claims due rows in (run_at, id) order (core/jobs/queue.ts). With the due
-- indexes on run_at alone, rows sharing a run_at (a burst enqueued in one millisecond, a
-- backlog requeued at once) had to be gathered and sorted on every claim, so each claim cost
-- the whole backlog. Keyed on (run_at, id), a claim reads only the rows it takes.
DROP INDEX webhook_deliveries_due;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (run_at, id) WHERE status IN ('pending', 'failed');
DROP INDEX route_dispatches_due;
CREATE INDEX route_dispatches_due ON route_dispatches (run_at, id) WHERE status IN ('pending', 'failed') AND resolved_at IS NULL;
