-- 0023: witnessed checkpoints (c2sp.org/tlog-witness, c2sp.org/tlog-cosignature). For every
-- closed epoch and every configured witness, one leased job (companion/core/jobs/queue.ts)
-- that POSTs the epoch's checkpoint to the witness's add-checkpoint endpoint; the size of the
-- epoch log each witness last cosigned, per checkpoint origin (the consistency proof starts
-- there); and the cosignature lines the witnesses answered with, verified before they are kept.
-- Runs inside one transaction opened by companion/core/migrations.ts: no BEGIN/COMMIT here.

CREATE TABLE witness_submissions (
  id               TEXT PRIMARY KEY,                  -- wsub_<ULID>
  witness          TEXT NOT NULL,                     -- the witness's key name
  epoch_seq        INTEGER NOT NULL REFERENCES epochs (epoch_seq),
  status           TEXT NOT NULL CHECK (status IN ('pending', 'done', 'failed', 'dead')),
  outcome          TEXT,                              -- cosigned | superseded, once done
  attempt_count    INTEGER NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
  run_at           INTEGER NOT NULL,                  -- Unix ms
  lease_owner      TEXT,
  lease_expires_at INTEGER,
  last_error       TEXT,
  last_attempt_at  TEXT,
  created_at       TEXT NOT NULL,
  completed_at     TEXT,
  UNIQUE (witness, epoch_seq),
  CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL))
) STRICT;
CREATE INDEX witness_submissions_due ON witness_submissions (run_at, id) WHERE status IN ('pending', 'failed');

-- The tree size of the latest checkpoint the witness cosigned for an origin (0: none yet).
CREATE TABLE witness_states (
  witness    TEXT NOT NULL,
  origin     TEXT NOT NULL,
  size       INTEGER NOT NULL CHECK (size >= 0),
  updated_at TEXT NOT NULL,
  PRIMARY KEY (witness, origin)
) STRICT;

-- Cosignature lines as the witness sent them ("— <name> base64(key ID || timestamp || sig)").
CREATE TABLE epoch_cosignatures (
  epoch_seq  INTEGER NOT NULL REFERENCES epochs (epoch_seq),
  key_name   TEXT NOT NULL,
  key_id     TEXT NOT NULL CHECK (length(key_id) = 8),  -- hex
  witness    TEXT NOT NULL,
  cosigned_at INTEGER NOT NULL,                          -- the cosignature's POSIX timestamp
  line       TEXT NOT NULL,
  stored_at  TEXT NOT NULL,
  PRIMARY KEY (epoch_seq, key_name, key_id)
) STRICT;
