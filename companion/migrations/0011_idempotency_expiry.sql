-- 0011: idempotency keys expire after a window (companion/idempotency/replay.ts), so the
-- expired ones are found, oldest first, by an index rather than a scan of every key.
-- Runs inside one transaction opened by companion/core/migrations.ts: no BEGIN/COMMIT here.

CREATE INDEX idempotency_keys_by_created_at ON idempotency_keys (created_at);
