/**
 * What anchoring needs from storage (implementations: ./sqlite-store.ts, ./postgres-store.ts):
 * the stored tree levels (the NodeStore methods, read and written by ./stored-tree.ts), each
 * tenant log's size and anchored size, and the closed epochs.
 */
import type { NodeStore } from './stored-tree.ts';
import type { WitnessStore } from './witness-store.ts';
import type { TimestampStore } from './timestamps-store.ts';

export interface TenantLogState {
  tenantId: string;
  size: number;
  anchoredSize: number;
  /** recorded_at of the newest leaf: before an epoch's end, the whole log belongs in it. */
  lastRecordedAt: string;
}

export interface EpochRow {
  epochSeq: number;
  periodStart: string;
  periodEnd: string;
  cadenceSeconds: number;
  tenantCount: number;
  canonicalRoot: string;
  prevEpochDigest: string | null;
  epochDigest: string;
  anchoredAt: string;
  /** The signed JCS text of the epoch header, byte for byte. */
  header: string;
  signature: string;
  keyId: string;
  checkpoint: string;
}

export interface EpochLeafRow {
  epochSeq: number;
  leafIndex: number;
  tenantId: string;
  tenantSize: number;
  tenantChainRoot: string;
}

/**
 * The node store's methods are the store's own (not a member object), so the SQLite store is
 * lifted onto the async boundary, and waits for the connection, like every other method.
 */
export interface AnchoringStore extends NodeStore, TimestampStore, WitnessStore {
  tenantLogSize(tenantId: string): Promise<number>;
  tenantLog(tenantId: string): Promise<TenantLogState | undefined>;
  setTenantLogSize(tenantId: string, size: number, lastRecordedAt: string): Promise<void>;
  /** Tenant logs with leaves no epoch has anchored yet. */
  unanchoredLogs(): Promise<TenantLogState[]>;
  /** Tenants whose records outnumber their log's leaves (records sealed before anchoring existed); O(tenants). */
  logsBehind(): Promise<{ tenantId: string; records: number; size: number }[]>;
  /** The tenant's records with from <= tenant_seq < to, in order. */
  recordLeaves(tenantId: string, from: number, to: number): Promise<{ attestationHash: string; recordedAt: string }[]>;
  /** How many of the tenant's records were sealed before `at` (recorded_at < at). */
  recordsBefore(tenantId: string, at: string): Promise<number>;
  /** The earliest recorded_at of any sealed record, or undefined when there is none. */
  firstRecordedAt(): Promise<string | undefined>;
  lastEpoch(): Promise<EpochRow | undefined>;
  epoch(epochSeq: number): Promise<EpochRow | undefined>;
  /** Epochs with epoch_seq > after, oldest first. */
  epochs(after: number, limit: number): Promise<EpochRow[]>;
  epochLeaves(epochSeq: number): Promise<EpochLeafRow[]>;
  /** The epoch leaf that first anchored the tenant's leaf `tenantSeq`, or undefined. */
  anchoringLeaf(tenantId: string, tenantSeq: number): Promise<EpochLeafRow | undefined>;
  /** The tenant_size an epoch anchored for the tenant before reaching `size`, or 0. */
  anchoredBefore(tenantId: string, size: number): Promise<number>;
  insertEpoch(epoch: EpochRow, leaves: readonly EpochLeafRow[]): Promise<void>;
  /**
   * Inside the close transaction, before it reads the last epoch: waits until no other
   * companion is closing one, and holds them off until this transaction ends (a PostgreSQL
   * advisory lock, released with the connection if this process dies; SQLite's single
   * writer needs none).
   */
  lockEpochClose(): Promise<void>;
}

/** This capability's member of every store (core/stores.ts: each owner declares its own). */
declare module '../core/stores.ts' {
  interface Stores {
    /** Tenant logs' stored tree levels and the closed epochs (anchoring capability). */
    readonly anchoring: AnchoringStore;
  }
}
