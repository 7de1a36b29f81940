/**
 * PostgreSQL implementation of ExportStore (migrations/postgres/0008 and the evidence tables),
 * answering as ./sqlite-store.ts does. Every method is one statement; postgres.js prepares each
 * distinct query text once per connection, so a filtered export (its conditions added as
 * fragments, only those given) is a statement of its own and the unfiltered one pays nothing.
 *
 * Where the SQL differs from SQLite's:
 * - coverage orders decision NULLS FIRST: SQLite sorts NULL first, PostgreSQL last by default.
 * - sum() over bigint is numeric (a string from the driver): the overdue count and the run
 *   counts are count(*) FILTER (WHERE ...), bigint like count(*) (and 0, not NULL, on no rows).
 * - the action type's substr length is clamped at 0: PostgreSQL rejects a negative length
 *   (SQLite takes the characters before the start), which only a malformed action_key gives.
 * - recordsByPackBelowSeq orders by pack, the order SQLite's grouping yields, so the Map
 *   iterates the same on both.
 * No method reads then writes: supersedeBinding is one conditional UPDATE (see there).
 */
import type { Queryable } from '../core/postgres/connect.ts';
import { toBinding, toCoverage, toDecisionCount, toPosition, toRecent, toReviewCoverage, toRun } from './rows.ts';
import type { BindingDbRow, CoverageDbRow, DecisionCountDbRow, PositionDbRow, RecentDbRow, ReviewCoverageDbRow, RunDbRow } from './rows.ts';
import type { CoverageRow, ExportRecordRow, ExportStore, RecentRecord, RecordFilter, RecordPosition, ReviewCoverageRow, RunFilter } from './store.ts';

export function createPostgresExportStore(sql: Queryable): ExportStore {
  const empty = sql``;

  // Keyset on the sealed_records_by_time index (tenant_id, recorded_at, tenant_seq). The first
  // page starts at `from` inclusive; later pages strictly after the cursor's row value, a row
  // comparison PostgreSQL takes as an index condition on the two columns after tenant_id.
  const start = (after: RecordPosition | undefined) =>
    after ? sql`(recorded_at, tenant_seq) > (${after.recordedAt}, ${after.tenantSeq})` : sql`TRUE`;

  // Only the conditions given (a null counts as not given, as the SQLite store's `?? null`).
  const where = (f: RecordFilter | undefined) => {
    if (!f || (f.pack == null && f.kind == null && f.decision == null)) return empty;
    return sql`${f.pack == null ? empty : sql` AND pack = ${f.pack}`}${f.kind == null ? empty : sql` AND kind = ${f.kind}`}${
      f.decision == null ? empty : sql` AND decision = ${f.decision}`
    }`;
  };

  // The filter of the run list and counts: each field given narrows to its exact value.
  const runWhere = (tenantId: string, f: RunFilter) =>
    sql`tenant_id = ${tenantId}${f.exportKind == null ? empty : sql` AND export_kind = ${f.exportKind}`}${
      f.adapterKey == null ? empty : sql` AND adapter_key = ${f.adapterKey}`
    }${f.bindingKey == null ? empty : sql` AND binding_key = ${f.bindingKey}`}${
      f.validationStatus == null ? empty : sql` AND validation_status = ${f.validationStatus}`
    }`;

  return {
    async pageEnd(tenantId, { from, to, after, filter }, limit) {
      // The `limit`-th row of the page, or its last when fewer remain: the page read forward
      // (index-only when unfiltered), then its last row.
      const [r] = await sql<PositionDbRow[]>`SELECT recorded_at, tenant_seq FROM (
          SELECT recorded_at, tenant_seq FROM sealed_records
           WHERE tenant_id = ${tenantId} AND ${start(after)} AND recorded_at >= ${from} AND recorded_at < ${to}${where(filter)}
           ORDER BY recorded_at, tenant_seq LIMIT ${limit}) AS page
         ORDER BY recorded_at DESC, tenant_seq DESC LIMIT 1`;
      return r && toPosition(r);
    },
    async records(tenantId, { from, after, end, filter }, limit) {
      // Columns named as ExportRecordRow's members, in its order, so the driver's rows are the
      // records themselves (no second object per row); bigints arrive as numbers (connect.ts).
      // One chunk of at most `limit` rows, read whole: no cursor stays open between chunks.
      const rows = await sql<ExportRecordRow[]>`SELECT tenant_seq AS "tenantSeq", action_key AS "actionKey", vertical, pack, kind,
              decision, status, review_route AS "reviewRoute", payload_hash AS "payloadHash", packet_hash AS "packetHash",
              attestation, attestation_hash AS "attestationHash", signature, key_id AS "keyId", dev_key AS "devKey",
              recorded_at AS "recordedAt", credits, details
         FROM sealed_records
        WHERE tenant_id = ${tenantId} AND ${start(after)} AND recorded_at >= ${from}
          AND (recorded_at, tenant_seq) <= (${end.recordedAt}, ${end.tenantSeq})${where(filter)}
        ORDER BY recorded_at, tenant_seq LIMIT ${limit}`;
      // A plain array, not the driver's Result subclass.
      return Array.from(rows);
    },
    async countRange(tenantId, from, to, filter) {
      const [r] = await sql<{ n: number }[]>`SELECT count(*) AS n FROM sealed_records
        WHERE tenant_id = ${tenantId} AND recorded_at >= ${from} AND recorded_at < ${to}${where(filter)}`;
      return r!.n;
    },
    async decisionCounts(tenantId, from, to, bucketChars) {
      const rows = await sql<DecisionCountDbRow[]>`SELECT substr(recorded_at, 1, ${bucketChars}) AS bucket,
             decision, count(*) AS n FROM sealed_records
        WHERE tenant_id = ${tenantId} AND recorded_at >= ${from} AND recorded_at < ${to} AND decision IS NOT NULL
        GROUP BY bucket, decision ORDER BY bucket, decision`;
      return rows.map(toDecisionCount);
    },
    async coverage(tenantId): Promise<CoverageRow[]> {
      // The middle segment of <vertical>:<type>:<ULID>: a ULID is 26 characters.
      const rows = await sql<CoverageDbRow[]>`
        SELECT pack, kind, substr(action_key, length(vertical) + 2, greatest(length(action_key) - length(vertical) - 28, 0)) AS action_type,
               decision, status, count(*) AS n, min(recorded_at) AS first_at, max(recorded_at) AS last_at
          FROM sealed_records WHERE tenant_id = ${tenantId}
         GROUP BY pack, kind, action_type, decision, status
         ORDER BY pack, kind, action_type, decision NULLS FIRST, status`;
      return rows.map(toCoverage);
    },
    async recordsByPackBelowSeq(tenantId, seq) {
      const rows = await sql<{ pack: string; n: number }[]>`SELECT pack, count(*) AS n FROM sealed_records
        WHERE tenant_id = ${tenantId} AND tenant_seq < ${seq} GROUP BY pack ORDER BY pack`;
      return new Map(rows.map((r) => [r.pack, r.n]));
    },
    async reviewCoverage(tenantId, now): Promise<ReviewCoverageRow[]> {
      const rows = await sql<ReviewCoverageDbRow[]>`SELECT pack, status, count(*) AS n,
             count(*) FILTER (WHERE status IN ('pending', 'escalated') AND expires_at <= ${now}) AS overdue
        FROM review_items WHERE tenant_id = ${tenantId} GROUP BY pack, status ORDER BY pack, status`;
      return rows.map(toReviewCoverage);
    },
    async recentRecords(tenantId, pack, limit): Promise<RecentRecord[]> {
      const rows = await sql<RecentDbRow[]>`SELECT action_key, vertical, kind, recorded_at
        FROM sealed_records WHERE tenant_id = ${tenantId} AND pack = ${pack} ORDER BY recorded_at DESC, tenant_seq DESC LIMIT ${limit}`;
      return rows.map(toRecent);
    },
    async insertBinding(row) {
      await sql`INSERT INTO validation_schema_bindings
        (binding_key, tenant_id, export_kind, adapter_key, schema_profile_key, schema_digest, binding_digest, active, created_at, superseded_at)
        VALUES (${row.bindingKey}, ${row.tenantId}, ${row.exportKind}, ${row.adapterKey}, ${row.schemaProfileKey}, ${row.schemaDigest},
                ${row.bindingDigest}, ${row.active ? 1 : 0}, ${row.createdAt}, ${row.supersededAt ?? null})`;
    },
    async activeBinding(tenantId, exportKind, adapterKey) {
      const [r] = await sql<BindingDbRow[]>`SELECT * FROM validation_schema_bindings
        WHERE tenant_id = ${tenantId} AND export_kind = ${exportKind} AND adapter_key = ${adapterKey} AND active = 1`;
      return r && toBinding(r);
    },
    async findBinding(tenantId, bindingKey) {
      const [r] = await sql<BindingDbRow[]>`SELECT * FROM validation_schema_bindings WHERE binding_key = ${bindingKey} AND tenant_id = ${tenantId}`;
      return r && toBinding(r);
    },
    async supersedeBinding(tenantId, bindingKey, at) {
      // One conditional statement, no read first: of two concurrent supersessions the second
      // waits on the row lock, re-checks `active = 1` against the committed row and changes
      // nothing (false), as SQLite's single writer would have it.
      const r = await sql`UPDATE validation_schema_bindings SET active = 0, superseded_at = ${at}
        WHERE binding_key = ${bindingKey} AND tenant_id = ${tenantId} AND active = 1`;
      return r.count === 1;
    },
    async listBindings(tenantId, f) {
      const rows = await sql<BindingDbRow[]>`SELECT * FROM validation_schema_bindings
        WHERE tenant_id = ${tenantId}${f.exportKind == null ? empty : sql` AND export_kind = ${f.exportKind}`}${
          f.adapterKey == null ? empty : sql` AND adapter_key = ${f.adapterKey}`
        }${f.activeOnly ? sql` AND active = 1` : empty}
        ORDER BY created_at DESC, binding_key DESC`;
      return rows.map(toBinding);
    },
    async insertRun(row) {
      await sql`INSERT INTO validation_runs
        (run_key, tenant_id, export_kind, adapter_key, binding_key, schema_profile_key, schema_digest, export_digest, validation_status, error_count, created_at)
        VALUES (${row.runKey}, ${row.tenantId}, ${row.exportKind}, ${row.adapterKey}, ${row.bindingKey ?? null}, ${row.schemaProfileKey},
                ${row.schemaDigest}, ${row.exportDigest}, ${row.validationStatus}, ${row.errorCount}, ${row.createdAt})`;
    },
    async findRun(tenantId, runKey) {
      const [r] = await sql<RunDbRow[]>`SELECT * FROM validation_runs WHERE run_key = ${runKey} AND tenant_id = ${tenantId}`;
      return r && toRun(r);
    },
    async listRuns(tenantId, filter, limit) {
      const rows = await sql<RunDbRow[]>`SELECT * FROM validation_runs WHERE ${runWhere(tenantId, filter)} ORDER BY run_key DESC LIMIT ${limit}`;
      return rows.map(toRun);
    },
    async countRuns(tenantId, filter) {
      const [r] = await sql<{ total: number; passed: number; failed: number }[]>`SELECT count(*) AS total,
             count(*) FILTER (WHERE validation_status = 'passed') AS passed, count(*) FILTER (WHERE validation_status = 'failed') AS failed
        FROM validation_runs WHERE ${runWhere(tenantId, filter)}`;
      return { total: r!.total, passed: r!.passed, failed: r!.failed };
    },
  };
}
