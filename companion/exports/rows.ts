/**
 * The exports tables' rows as both engines read them (validation_schema_bindings,
 * validation_runs, and the counts and positions read from sealed_records and review_items;
 * bigint columns and counts arrive as numbers on PostgreSQL too), and how they map to the
 * store's records: shared by ./sqlite-store.ts and ./postgres-store.ts, so the two cannot drift
 * apart.
 */
import type { BindingRow, CoverageRow, RecentRecord, RecordPosition, ReviewCoverageRow, RunRow } from './store.ts';

export interface BindingDbRow {
  binding_key: string;
  tenant_id: string;
  export_kind: string;
  adapter_key: string;
  schema_profile_key: string;
  schema_digest: string;
  binding_digest: string;
  active: number;
  created_at: string;
  superseded_at: string | null;
}

export interface RunDbRow {
  run_key: string;
  tenant_id: string;
  export_kind: string;
  adapter_key: string;
  binding_key: string | null;
  schema_profile_key: string;
  schema_digest: string;
  export_digest: string;
  validation_status: 'passed' | 'failed';
  error_count: number;
  created_at: string;
}

/** A sealed record's place in the (recorded_at, tenant_seq) order. */
export interface PositionDbRow {
  recorded_at: string;
  tenant_seq: number;
}

export interface DecisionCountDbRow {
  bucket: string;
  decision: string;
  n: number;
}

export interface CoverageDbRow {
  pack: string;
  kind: string;
  action_type: string;
  decision: string | null;
  status: string;
  n: number;
  first_at: string;
  last_at: string;
}

export interface ReviewCoverageDbRow {
  pack: string;
  status: string;
  n: number;
  overdue: number;
}

export interface RecentDbRow {
  action_key: string;
  vertical: string;
  kind: string;
  recorded_at: string;
}

export const toBinding = (r: BindingDbRow): BindingRow => ({
  bindingKey: r.binding_key,
  tenantId: r.tenant_id,
  exportKind: r.export_kind,
  adapterKey: r.adapter_key,
  schemaProfileKey: r.schema_profile_key,
  schemaDigest: r.schema_digest,
  bindingDigest: r.binding_digest,
  active: r.active === 1,
  createdAt: r.created_at,
  supersededAt: r.superseded_at,
});

export const toRun = (r: RunDbRow): RunRow => ({
  runKey: r.run_key,
  tenantId: r.tenant_id,
  exportKind: r.export_kind,
  adapterKey: r.adapter_key,
  bindingKey: r.binding_key,
  schemaProfileKey: r.schema_profile_key,
  schemaDigest: r.schema_digest,
  exportDigest: r.export_digest,
  validationStatus: r.validation_status,
  errorCount: r.error_count,
  createdAt: r.created_at,
});

export const toPosition = (r: PositionDbRow): RecordPosition => ({ recordedAt: r.recorded_at, tenantSeq: r.tenant_seq });

export const toDecisionCount = (r: DecisionCountDbRow) => ({ bucket: r.bucket, decision: r.decision, count: r.n });

export const toCoverage = (r: CoverageDbRow): CoverageRow => ({
  pack: r.pack,
  kind: r.kind,
  actionType: r.action_type,
  decision: r.decision,
  status: r.status,
  count: r.n,
  firstRecordedAt: r.first_at,
  lastRecordedAt: r.last_at,
});

export const toReviewCoverage = (r: ReviewCoverageDbRow): ReviewCoverageRow => ({ pack: r.pack, status: r.status, count: r.n, overdue: r.overdue });

export const toRecent = (r: RecentDbRow): RecentRecord => ({ actionKey: r.action_key, vertical: r.vertical, kind: r.kind, recordedAt: r.recorded_at });
