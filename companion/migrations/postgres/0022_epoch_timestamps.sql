-- 0022 for PostgreSQL: ../0022_epoch_timestamps.sql (RFC 3161 timestamp requests as leased
-- jobs, and the verified tokens). Conventions: ./0001_tenants.sql.

CREATE TABLE epoch_timestamp_requests (
  id               text PRIMARY KEY,
  epoch_seq        bigint NOT NULL REFERENCES epochs (epoch_seq),
  tsa_url          text NOT NULL,
  status           text NOT NULL CHECK (status IN ('pending', 'timestamped', 'failed', 'dead')),
  attempt_count    bigint NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
  run_at           bigint NOT NULL,
  lease_owner      text,
  lease_expires_at bigint,
  last_error       text,
  last_attempt_at  text,
  created_at       text NOT NULL,
  completed_at     text,
  UNIQUE (epoch_seq, tsa_url),
  CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL))
);
CREATE INDEX epoch_timestamp_requests_due ON epoch_timestamp_requests (run_at, id) WHERE status IN ('pending', 'failed');

CREATE TABLE epoch_timestamps (
  epoch_seq  bigint NOT NULL REFERENCES epochs (epoch_seq),
  tsa_url    text NOT NULL,
  gen_time   text NOT NULL,
  token      bytea NOT NULL,
  stored_at  text NOT NULL,
  PRIMARY KEY (epoch_seq, tsa_url)
);
