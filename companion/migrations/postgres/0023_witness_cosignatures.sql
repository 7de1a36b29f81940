-- 0023 for PostgreSQL: ../0023_witness_cosignatures.sql (witness submissions, each witness's
-- last cosigned size, the stored cosignature lines). Conventions: ./0001_tenants.sql.

CREATE TABLE witness_submissions (
  id               text PRIMARY KEY,
  witness          text NOT NULL,
  epoch_seq        bigint NOT NULL REFERENCES epochs (epoch_seq),
  status           text NOT NULL CHECK (status IN ('pending', 'done', 'failed', 'dead')),
  outcome          text,
  attempt_count    bigint NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
  run_at           bigint NOT NULL,
  lease_owner      text,
  lease_expires_at bigint,
  last_error       text,
  last_attempt_at  text,
  created_at       text NOT NULL,
  completed_at     text,
  UNIQUE (witness, epoch_seq),
  CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL))
);
CREATE INDEX witness_submissions_due ON witness_submissions (run_at, id) WHERE status IN ('pending', 'failed');

CREATE TABLE witness_states (
  witness    text NOT NULL,
  origin     text NOT NULL,
  size       bigint NOT NULL CHECK (size >= 0),
  updated_at text NOT NULL,
  PRIMARY KEY (witness, origin)
);

CREATE TABLE epoch_cosignatures (
  epoch_seq   bigint NOT NULL REFERENCES epochs (epoch_seq),
  key_name    text NOT NULL,
  key_id      text NOT NULL CHECK (length(key_id) = 8),
  witness     text NOT NULL,
  cosigned_at bigint NOT NULL,
  line        text NOT NULL,
  stored_at   text NOT NULL,
  PRIMARY KEY (epoch_seq, key_name, key_id)
);
