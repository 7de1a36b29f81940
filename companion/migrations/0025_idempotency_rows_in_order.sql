-- 0025: an idempotency key's row stored in insertion order, its key only in an index
-- (companion/evidence/idempotency/sqlite-store.ts). A key hash is random: as the primary key of
-- a WITHOUT ROWID table it placed each new row, stored answer and all, on a page somewhere
-- inside the table, so every keyed seal dirtied a page of its own (and split full ones), which
-- its batch's commit then wrote to the WAL. In a rowid table the rows append at the right edge
-- and only the small index entry lands at random: a keyed seal's find, insert and share of the
-- commit measured at about half the CPU (50,000 keys, batches of 25). Same columns, same
-- unique key and expiry index: no statement changes.
-- Runs inside one transaction opened by companion/core/migrations.ts: no BEGIN/COMMIT here.

CREATE TABLE idempotency_keys_in_order (
  tenant_id     TEXT NOT NULL REFERENCES tenants (id),
  scope         TEXT NOT NULL,                   -- the endpoint, e.g. "POST /v1/gate"
  key_hash      TEXT NOT NULL,                   -- SHA-256 of the caller's key (keys may carry meaning)
  request_hash  TEXT NOT NULL,
  action_key    TEXT NOT NULL,
  status        INTEGER NOT NULL,
  response      TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  UNIQUE (tenant_id, scope, key_hash)
) STRICT;

INSERT INTO idempotency_keys_in_order (tenant_id, scope, key_hash, request_hash, action_key, status, response, created_at)
SELECT tenant_id, scope, key_hash, request_hash, action_key, status, response, created_at FROM idempotency_keys ORDER BY created_at;

DROP TABLE idempotency_keys;
ALTER TABLE idempotency_keys_in_order RENAME TO idempotency_keys;
CREATE INDEX idempotency_keys_by_created_at ON idempotency_keys (created_at);
