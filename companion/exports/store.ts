/**
 * What the exports capability needs from storage, independent of the engine (the SQLite
 * implementation is ./sqlite-store.ts). Every read takes the tenant id from the credential
 * (interface-spec Authentication 6). Exports read the evidence tables and write only the
 * hash-only receipts of migration 0008.
 */
import type { SealedRecordRow } from '../evidence/store.ts';

/**
 * A sealed record as the records export reads it, straight from the row: the signed
 * attestation as its UTF-8 bytes, which the export writes out verbatim and never decodes, and
 * dev_key as stored (0 or 1).
 */
/** A sealed record as the export reads it: its tenant is the caller's, so it is not read again. */
export type ExportRecordRow = Omit<SealedRecordRow, 'tenantId' | 'devKey'> & { devKey: 0 | 1 };

/** A position in a tenant's chronological order: (signed recorded_at, tenant_seq). */
export interface RecordPosition {
  recordedAt: string;
  tenantSeq: number;
}

/** Sealed records of one pack, grouped by what they decided or recorded. */
export interface CoverageRow {
  pack: string;
  kind: string;
  /** The middle segment of action_key: the gate action type or the record event type. */
  actionType: string;
  decision: string | null;
  status: string;
  count: number;
  firstRecordedAt: string;
  lastRecordedAt: string;
}

export interface ReviewCoverageRow {
  pack: string;
  /** The item status as stored (lazy expiry is applied by the reader). */
  status: string;
  count: number;
  /** Open items whose window has ended by `now`: they fail closed (reviews/state.ts). */
  overdue: number;
}

export interface RecentRecord {
  actionKey: string;
  vertical: string;
  kind: string;
  recordedAt: string;
}

export interface BindingRow {
  bindingKey: string;
  tenantId: string;
  exportKind: string;
  adapterKey: string;
  schemaProfileKey: string;
  schemaDigest: string;
  bindingDigest: string;
  active: boolean;
  createdAt: string;
  supersededAt: string | null;
}

export interface RunRow {
  runKey: string;
  tenantId: string;
  exportKind: string;
  adapterKey: string;
  bindingKey: string | null;
  schemaProfileKey: string;
  schemaDigest: string;
  exportDigest: string;
  validationStatus: 'passed' | 'failed';
  errorCount: number;
  createdAt: string;
}

export interface RunFilter {
  exportKind?: string | undefined;
  adapterKey?: string | undefined;
  bindingKey?: string | undefined;
  validationStatus?: string | undefined;
}

/** Only records matching every field given (exact values of the stored columns). */
export interface RecordFilter {
  pack?: string | undefined;
  kind?: string | undefined;
  decision?: string | undefined;
}

export interface ExportStore {
  /**
   * The last position of the next page: the `limit`-th record after `after` (or from `from`)
   * with recorded_at < `to`, or the last such record when fewer remain; undefined when none.
   */
  pageEnd(tenantId: string, range: { from: string; to: string; after: RecordPosition | undefined; filter?: RecordFilter }, limit: number): Promise<RecordPosition | undefined>;
  /** Records strictly after `after` (or from `from`) up to and including `end`, in order, at most `limit`. */
  records(tenantId: string, range: { from: string; after: RecordPosition | undefined; end: RecordPosition; filter?: RecordFilter }, limit: number): Promise<ExportRecordRow[]>;
  /** Records with from <= recorded_at < to (the first page's X-Total-Count). */
  countRange(tenantId: string, from: string, to: string, filter?: RecordFilter): Promise<number>;
  coverage(tenantId: string): Promise<CoverageRow[]>;
  /**
   * Gate decisions with from <= recorded_at < to, counted per bucket (the first `bucketChars`
   * characters of recorded_at: 13 is the hour, 10 the day) and decision.
   */
  decisionCounts(tenantId: string, from: string, to: string, bucketChars: 10 | 13): Promise<{ bucket: string; decision: string; count: number }[]>;
  /** Records per pack with tenant_seq < `seq` (the anchored prefix of the tenant log). */
  recordsByPackBelowSeq(tenantId: string, seq: number): Promise<Map<string, number>>;
  reviewCoverage(tenantId: string, now: string): Promise<ReviewCoverageRow[]>;
  /** The newest records of a pack, newest first. */
  recentRecords(tenantId: string, pack: string, limit: number): Promise<RecentRecord[]>;

  insertBinding(row: BindingRow): Promise<void>;
  activeBinding(tenantId: string, exportKind: string, adapterKey: string): Promise<BindingRow | undefined>;
  findBinding(tenantId: string, bindingKey: string): Promise<BindingRow | undefined>;
  /** Marks a binding superseded; false when it was not active. */
  supersedeBinding(tenantId: string, bindingKey: string, at: string): Promise<boolean>;
  listBindings(tenantId: string, filter: { exportKind?: string | undefined; adapterKey?: string | undefined; activeOnly: boolean }): Promise<BindingRow[]>;

  insertRun(row: RunRow): Promise<void>;
  findRun(tenantId: string, runKey: string): Promise<RunRow | undefined>;
  /** Runs newest first, at most `limit`. */
  listRuns(tenantId: string, filter: RunFilter, limit: number): Promise<RunRow[]>;
  countRuns(tenantId: string, filter: RunFilter): Promise<{ total: number; passed: number; failed: number }>;
}

/** This capability's member of every store (core/stores.ts: each owner declares its own). */
declare module '../core/stores.ts' {
  interface Stores {
    /** Export reads over the evidence, and validation bindings and runs (exports capability). */
    readonly exports: ExportStore;
  }
}
