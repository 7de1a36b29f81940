-- 0005: anchoring (DESIGN.md §4; interface-spec "Inclusion proof", Events receipt.anchored).
-- Runs inside one transaction opened by companion/core/migrations.ts: no BEGIN/COMMIT here.
-- Hashes only: roots, digests and tree nodes; nothing a tenant sent.

-- The stored levels of every append-only RFC 9162 tree the service keeps: each tenant's log
-- (log_id = tenant id) and the log of epoch digests (log_id '#epochs'). Node (level, idx) is
-- the hash of the complete subtree of 2^level leaves starting at leaf idx·2^level; in an
-- append-only tree it never changes, so it is written once, when its last leaf arrives.
CREATE TABLE merkle_nodes (
  log_id TEXT NOT NULL,
  level  INTEGER NOT NULL CHECK (level BETWEEN 0 AND 62),
  idx    INTEGER NOT NULL CHECK (idx >= 0),
  hash   BLOB NOT NULL CHECK (length(hash) = 32),
  PRIMARY KEY (log_id, level, idx)
) STRICT, WITHOUT ROWID;

-- Each tenant log's size and how much of it the last epoch anchored. An epoch close visits
-- only the rows where size > anchored_size: O(tenants with new leaves), never O(records).
CREATE TABLE tenant_logs (
  tenant_id     TEXT PRIMARY KEY REFERENCES tenants (id),
  size          INTEGER NOT NULL CHECK (size >= 0),
  anchored_size INTEGER NOT NULL DEFAULT 0 CHECK (anchored_size >= 0 AND anchored_size <= size)
) STRICT, WITHOUT ROWID;

CREATE INDEX tenant_logs_unanchored ON tenant_logs (tenant_id) WHERE size > anchored_size;

-- One row per closed epoch, written with its leaves, the tenants' anchored sizes and the
-- receipt.anchored events in one transaction: an epoch is closed entirely or not at all.
CREATE TABLE epochs (
  epoch_seq         INTEGER PRIMARY KEY CHECK (epoch_seq >= 0),
  period_start      TEXT NOT NULL,                 -- RFC 3339; the epoch covers [start, end)
  period_end        TEXT NOT NULL UNIQUE,          -- the UTC cadence boundary it closed
  cadence_seconds   INTEGER NOT NULL CHECK (cadence_seconds > 0),
  tenant_count      INTEGER NOT NULL CHECK (tenant_count >= 0),
  canonical_root    TEXT NOT NULL CHECK (length(canonical_root) = 64),
  prev_epoch_digest TEXT CHECK (prev_epoch_digest IS NULL OR length(prev_epoch_digest) = 64),
  epoch_digest      TEXT NOT NULL UNIQUE CHECK (length(epoch_digest) = 64),
  anchored_at       TEXT NOT NULL,
  header            TEXT NOT NULL,                 -- the signed JCS text, byte for byte
  signature         TEXT NOT NULL,                 -- base64url Ed25519 over header
  key_id            TEXT NOT NULL,
  checkpoint        TEXT NOT NULL,                 -- C2SP tlog-checkpoint signed note
  CHECK (period_end > period_start)
) STRICT;

-- An epoch's leaves: one per tenant with new leaves, in tenant_id order (leaf_index).
CREATE TABLE epoch_leaves (
  epoch_seq         INTEGER NOT NULL REFERENCES epochs (epoch_seq),
  leaf_index        INTEGER NOT NULL CHECK (leaf_index >= 0),
  tenant_id         TEXT NOT NULL REFERENCES tenants (id),
  tenant_size       INTEGER NOT NULL CHECK (tenant_size > 0),
  tenant_chain_root TEXT NOT NULL CHECK (length(tenant_chain_root) = 64),
  PRIMARY KEY (epoch_seq, leaf_index),
  UNIQUE (tenant_id, tenant_size)
) STRICT, WITHOUT ROWID;
