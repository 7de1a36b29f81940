-- 0005 for PostgreSQL: ../0005_anchoring.sql (tree nodes, tenant logs, epochs and their leaves).
-- Conventions: ./0001_tenants.sql.

CREATE TABLE merkle_nodes (
  log_id text NOT NULL,
  level  bigint NOT NULL CHECK (level BETWEEN 0 AND 62),
  idx    bigint NOT NULL CHECK (idx >= 0),
  hash   bytea NOT NULL CHECK (octet_length(hash) = 32),
  PRIMARY KEY (log_id, level, idx)
);

CREATE TABLE tenant_logs (
  tenant_id        text PRIMARY KEY REFERENCES tenants (id),
  size             bigint NOT NULL CHECK (size >= 0),
  last_recorded_at text NOT NULL,
  anchored_size    bigint NOT NULL DEFAULT 0 CHECK (anchored_size >= 0 AND anchored_size <= size)
);

CREATE INDEX tenant_logs_unanchored ON tenant_logs (tenant_id) WHERE size > anchored_size;

CREATE TABLE epochs (
  epoch_seq         bigint PRIMARY KEY CHECK (epoch_seq >= 0),
  period_start      text NOT NULL,
  period_end        text NOT NULL UNIQUE,
  cadence_seconds   bigint NOT NULL CHECK (cadence_seconds > 0),
  tenant_count      bigint NOT NULL CHECK (tenant_count >= 0),
  canonical_root    text NOT NULL CHECK (length(canonical_root) = 64),
  prev_epoch_digest text CHECK (prev_epoch_digest IS NULL OR length(prev_epoch_digest) = 64),
  epoch_digest      text NOT NULL UNIQUE CHECK (length(epoch_digest) = 64),
  anchored_at       text NOT NULL,
  header            text NOT NULL,
  signature         text NOT NULL,
  key_id            text NOT NULL,
  checkpoint        text NOT NULL,
  CHECK (period_end > period_start)
);

CREATE TABLE epoch_leaves (
  epoch_seq         bigint NOT NULL REFERENCES epochs (epoch_seq),
  leaf_index        bigint NOT NULL CHECK (leaf_index >= 0),
  tenant_id         text NOT NULL REFERENCES tenants (id),
  tenant_size       bigint NOT NULL CHECK (tenant_size > 0),
  tenant_chain_root text NOT NULL CHECK (length(tenant_chain_root) = 64),
  PRIMARY KEY (epoch_seq, leaf_index),
  UNIQUE (tenant_id, tenant_size)
);
