/**
 * The anchoring tables' rows as both engines read them (epochs, epoch_leaves, tenant_logs, and
 * the leaves read from sealed_records; bigint columns arrive as numbers on PostgreSQL too), how
 * they map to the store's records, and which of a log's tree levels have rows in merkle_nodes:
 * shared by ./sqlite-store.ts and ./postgres-store.ts, so the two cannot drift apart.
 */
import type { EpochLeafRow, EpochRow, TenantLogState } from './store.ts';

/** A row of `epochs` as both engines return it (bigint columns as numbers). */
export interface EpochDbRow {
  epoch_seq: number;
  period_start: string;
  period_end: string;
  cadence_seconds: number;
  tenant_count: number;
  canonical_root: string;
  prev_epoch_digest: string | null;
  epoch_digest: string;
  anchored_at: string;
  header: string;
  signature: string;
  key_id: string;
  checkpoint: string;
}

/** A row of `epoch_leaves` as both engines return it. */
export interface LeafDbRow {
  epoch_seq: number;
  leaf_index: number;
  tenant_id: string;
  tenant_size: number;
  tenant_chain_root: string;
}

export const toEpoch = (r: EpochDbRow): EpochRow => ({
  epochSeq: r.epoch_seq,
  periodStart: r.period_start,
  periodEnd: r.period_end,
  cadenceSeconds: r.cadence_seconds,
  tenantCount: r.tenant_count,
  canonicalRoot: r.canonical_root,
  prevEpochDigest: r.prev_epoch_digest,
  epochDigest: r.epoch_digest,
  anchoredAt: r.anchored_at,
  header: r.header,
  signature: r.signature,
  keyId: r.key_id,
  checkpoint: r.checkpoint,
});

export const toLeaf = (r: LeafDbRow): EpochLeafRow => ({
  epochSeq: r.epoch_seq,
  leafIndex: r.leaf_index,
  tenantId: r.tenant_id,
  tenantSize: r.tenant_size,
  tenantChainRoot: r.tenant_chain_root,
});

/**
 * A tenant log's leaves are its records' attestation hashes (DESIGN.md §4), already stored in
 * sealed_records, so its four lowest levels are not stored again: a node there covers at most
 * 8 leaves, read in one range of the (tenant_id, tenant_seq) index. Migration 0014 removed the
 * rows an older version wrote. Other logs (the epoch log, "#epochs") store every level.
 */
export const TENANT_LOG_UNSTORED_LEVELS = 4;
export const isTenantLog = (logId: string) => !logId.startsWith('#');

/** A row of `tenant_logs` as both engines return it. */
export interface LogDbRow {
  tenant_id: string;
  size: number;
  anchored_size: number;
  last_recorded_at: string;
}

export const toLog = (r: LogDbRow): TenantLogState => ({ tenantId: r.tenant_id, size: r.size, anchoredSize: r.anchored_size, lastRecordedAt: r.last_recorded_at });

/** A tenant's record count beside its log's size (logsBehind). */
export interface BehindDbRow {
  tenant_id: string;
  records: number;
  size: number;
}

export const toBehind = (r: BehindDbRow) => ({ tenantId: r.tenant_id, records: r.records, size: r.size });

/** A sealed record as a tenant log's leaf (recordLeaves). */
export interface RecordLeafDbRow {
  attestation_hash: string;
  recorded_at: string;
}

export const toRecordLeaf = (r: RecordLeafDbRow) => ({ attestationHash: r.attestation_hash, recordedAt: r.recorded_at });
