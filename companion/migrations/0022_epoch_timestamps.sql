-- 0022: RFC 3161 timestamps of every epoch (README "Anchoring and portable evidence").
-- When an epoch closes, its close transaction writes one request row per configured time-stamp
-- authority (SVC_TSA_URLS). The row is a leased job (companion/core/jobs/queue.ts): a worker
-- sends a TimeStampReq over SHA-256 of the epoch's checkpoint body, retried with backoff; a
-- process killed mid-request leaves a lease that expires, and the row is claimed again.
-- Each token that verifies (status granted, imprint, nonce, signature, chain to the configured
-- roots at genTime, timeStamping EKU) is stored as its DER bytes in epoch_timestamps, one per
-- epoch and authority. Runs inside one transaction opened by companion/core/migrations.ts.

CREATE TABLE epoch_timestamp_requests (
  id               TEXT PRIMARY KEY,                  -- tsq_<ULID>
  epoch_seq        INTEGER NOT NULL REFERENCES epochs (epoch_seq),
  tsa_url          TEXT NOT NULL,
  status           TEXT NOT NULL CHECK (status IN ('pending', 'timestamped', 'failed', 'dead')),
  attempt_count    INTEGER NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
  run_at           INTEGER NOT NULL,                  -- Unix ms
  lease_owner      TEXT,
  lease_expires_at INTEGER,
  last_error       TEXT,
  last_attempt_at  TEXT,
  created_at       TEXT NOT NULL,
  completed_at     TEXT,
  UNIQUE (epoch_seq, tsa_url),
  CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL))
) STRICT;
CREATE INDEX epoch_timestamp_requests_due ON epoch_timestamp_requests (run_at, id) WHERE status IN ('pending', 'failed');

CREATE TABLE epoch_timestamps (
  epoch_seq  INTEGER NOT NULL REFERENCES epochs (epoch_seq),
  tsa_url    TEXT NOT NULL,
  gen_time   TEXT NOT NULL,                         -- TSTInfo genTime, RFC 3339 UTC
  token      BLOB NOT NULL,                         -- the TimeStampToken (CMS ContentInfo), DER
  stored_at  TEXT NOT NULL,
  PRIMARY KEY (epoch_seq, tsa_url)
) STRICT;
