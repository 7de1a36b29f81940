/** SQLite implementation of ExportStore (migration 0008 and the evidence tables); statements are prepared once. */
import type { Sync } from '../core/async-store.ts';
import type { Db } from '../core/db.ts';
import { toBinding, toCoverage, toDecisionCount, toPosition, toRecent, toReviewCoverage, toRun } from './rows.ts';
import type { BindingDbRow, CoverageDbRow, DecisionCountDbRow, PositionDbRow, RecentDbRow, ReviewCoverageDbRow, RunDbRow } from './rows.ts';
import type { CoverageRow, ExportRecordRow, ExportStore, RecentRecord, RecordFilter, RecordPosition, ReviewCoverageRow, RunFilter } from './store.ts';

// Keyset on the sealed_records_by_time index (tenant_id, recorded_at, tenant_seq). The first
// page starts at `from` inclusive; later pages strictly after the cursor's row value (SQLite
// row-value comparison, which the planner serves from the index).
const AFTER = '(recorded_at, tenant_seq) > (@afterAt, @afterSeq)';
const FROM = 'recorded_at >= @from';

// The middle segment of <vertical>:<type>:<ULID>: a ULID is 26 characters.
const ACTION_TYPE = 'substr(action_key, length(vertical) + 2, length(action_key) - length(vertical) - 28)';

export function createSqliteExportStore(db: Db): Sync<ExportStore> {
  // A filtered export adds its conditions to the same keyset scan; the unfiltered statements
  // stay as they were, so the common path pays nothing for the option.
  const statements = (filtered: boolean) => {
    const where = filtered ? ' AND (@pack IS NULL OR pack = @pack) AND (@kind IS NULL OR kind = @kind) AND (@decision IS NULL OR decision = @decision)' : '';
    const pageEnd = (after: boolean) =>
      db.prepare<Record<string, unknown>, PositionDbRow>(
        `SELECT recorded_at, tenant_seq FROM (
           SELECT recorded_at, tenant_seq FROM sealed_records
            WHERE tenant_id = @tenantId AND ${after ? AFTER : FROM} AND recorded_at >= @from AND recorded_at < @to${where}
            ORDER BY recorded_at, tenant_seq LIMIT @limit)
          ORDER BY recorded_at DESC, tenant_seq DESC LIMIT 1`,
      );
    // Rows are read as arrays (better-sqlite3's raw mode builds them much faster than objects
    // with named columns) and shaped into ExportRecordRow literals; the attestation is the stored
    // JCS text, spliced into the line as is.
    const records = (after: boolean) =>
      db
        .prepare<Record<string, unknown>, unknown[]>(
          `SELECT tenant_seq, action_key, vertical, pack, kind, decision, status, review_route, payload_hash, packet_hash,
                  attestation, attestation_hash, signature, key_id, dev_key, recorded_at, credits, details
             FROM sealed_records
            WHERE tenant_id = @tenantId AND ${after ? AFTER : FROM} AND recorded_at >= @from
              AND (recorded_at, tenant_seq) <= (@endAt, @endSeq)${where}
            ORDER BY recorded_at, tenant_seq LIMIT @limit`,
        )
        .raw(true);
    return {
      pageEndFirst: pageEnd(false),
      pageEndNext: pageEnd(true),
      recordsFirst: records(false),
      recordsNext: records(true),
      countRange: db.prepare<Record<string, unknown>, { n: number }>(
        `SELECT count(*) AS n FROM sealed_records WHERE tenant_id = @tenantId AND recorded_at >= @from AND recorded_at < @to${where}`,
      ),
    };
  };
  const plain = statements(false);
  let filteredStatements: ReturnType<typeof statements> | undefined;
  /** The statements for `filter` and its parameters (none when nothing is filtered). */
  const forFilter = (filter: RecordFilter | undefined) => {
    if (!filter || (filter.pack === undefined && filter.kind === undefined && filter.decision === undefined)) return { st: plain, params: {} };
    filteredStatements ??= statements(true);
    return { st: filteredStatements, params: { pack: filter.pack ?? null, kind: filter.kind ?? null, decision: filter.decision ?? null } };
  };
  const decisionCounts = db.prepare<[number, string, string, string], DecisionCountDbRow>(
    `SELECT substr(recorded_at, 1, ?) AS bucket, decision, count(*) AS n FROM sealed_records
      WHERE tenant_id = ? AND recorded_at >= ? AND recorded_at < ? AND decision IS NOT NULL
      GROUP BY bucket, decision ORDER BY bucket, decision`,
  );
  const coverage = db.prepare<[string], CoverageDbRow>(
    `SELECT pack, kind, ${ACTION_TYPE} AS action_type, decision, status, count(*) AS n,
            min(recorded_at) AS first_at, max(recorded_at) AS last_at
       FROM sealed_records WHERE tenant_id = ?
      GROUP BY pack, kind, action_type, decision, status
      ORDER BY pack, kind, action_type, decision, status`,
  );
  const belowSeq = db.prepare<[string, number], { pack: string; n: number }>(
    'SELECT pack, count(*) AS n FROM sealed_records WHERE tenant_id = ? AND tenant_seq < ? GROUP BY pack',
  );
  const reviewCoverage = db.prepare<{ tenantId: string; now: string }, ReviewCoverageDbRow>(
    `SELECT pack, status, count(*) AS n,
            sum(CASE WHEN status IN ('pending', 'escalated') AND expires_at <= @now THEN 1 ELSE 0 END) AS overdue
       FROM review_items WHERE tenant_id = @tenantId GROUP BY pack, status ORDER BY pack, status`,
  );
  const recent = db.prepare<[string, string, number], RecentDbRow>(
    `SELECT action_key, vertical, kind, recorded_at FROM sealed_records
      WHERE tenant_id = ? AND pack = ? ORDER BY recorded_at DESC, tenant_seq DESC LIMIT ?`,
  );

  const insertBinding = db.prepare(`INSERT INTO validation_schema_bindings
    (binding_key, tenant_id, export_kind, adapter_key, schema_profile_key, schema_digest, binding_digest, active, created_at, superseded_at)
    VALUES (@bindingKey, @tenantId, @exportKind, @adapterKey, @schemaProfileKey, @schemaDigest, @bindingDigest, @active, @createdAt, @supersededAt)`);
  const activeBinding = db.prepare<[string, string, string], BindingDbRow>(
    'SELECT * FROM validation_schema_bindings WHERE tenant_id = ? AND export_kind = ? AND adapter_key = ? AND active = 1',
  );
  const findBinding = db.prepare<[string, string], BindingDbRow>('SELECT * FROM validation_schema_bindings WHERE binding_key = ? AND tenant_id = ?');
  const supersede = db.prepare(
    'UPDATE validation_schema_bindings SET active = 0, superseded_at = ? WHERE binding_key = ? AND tenant_id = ? AND active = 1',
  );
  const listBindings = db.prepare<Record<string, unknown>, BindingDbRow>(
    `SELECT * FROM validation_schema_bindings
      WHERE tenant_id = @tenantId
        AND (@exportKind IS NULL OR export_kind = @exportKind)
        AND (@adapterKey IS NULL OR adapter_key = @adapterKey)
        AND (@activeOnly = 0 OR active = 1)
      ORDER BY created_at DESC, binding_key DESC`,
  );

  const insertRun = db.prepare(`INSERT INTO validation_runs
    (run_key, tenant_id, export_kind, adapter_key, binding_key, schema_profile_key, schema_digest, export_digest, validation_status, error_count, created_at)
    VALUES (@runKey, @tenantId, @exportKind, @adapterKey, @bindingKey, @schemaProfileKey, @schemaDigest, @exportDigest, @validationStatus, @errorCount, @createdAt)`);
  const findRun = db.prepare<[string, string], RunDbRow>('SELECT * FROM validation_runs WHERE run_key = ? AND tenant_id = ?');
  const RUN_WHERE = `tenant_id = @tenantId
        AND (@exportKind IS NULL OR export_kind = @exportKind)
        AND (@adapterKey IS NULL OR adapter_key = @adapterKey)
        AND (@bindingKey IS NULL OR binding_key = @bindingKey)
        AND (@validationStatus IS NULL OR validation_status = @validationStatus)`;
  const listRuns = db.prepare<Record<string, unknown>, RunDbRow>(`SELECT * FROM validation_runs WHERE ${RUN_WHERE} ORDER BY run_key DESC LIMIT @limit`);
  const countRuns = db.prepare<Record<string, unknown>, { total: number; passed: number | null; failed: number | null }>(
    `SELECT count(*) AS total, sum(validation_status = 'passed') AS passed, sum(validation_status = 'failed') AS failed
       FROM validation_runs WHERE ${RUN_WHERE}`,
  );

  const runParams = (tenantId: string, f: RunFilter) => ({
    tenantId,
    exportKind: f.exportKind ?? null,
    adapterKey: f.adapterKey ?? null,
    bindingKey: f.bindingKey ?? null,
    validationStatus: f.validationStatus ?? null,
  });
  const afterParams = (after: RecordPosition | undefined) => (after ? { afterAt: after.recordedAt, afterSeq: after.tenantSeq } : {});

  return {
    pageEnd(tenantId, { from, to, after, filter }, limit) {
      const { st, params } = forFilter(filter);
      const r = (after ? st.pageEndNext : st.pageEndFirst).get({ tenantId, from, to, limit, ...afterParams(after), ...params });
      return r && toPosition(r);
    },
    records(tenantId, { from, after, end, filter }, limit) {
      const { st, params } = forFilter(filter);
      const stmt = after ? st.recordsNext : st.recordsFirst;
      // One chunk of at most `limit` rows, read whole: no statement stays open between chunks.
      return stmt.all({ tenantId, from, endAt: end.recordedAt, endSeq: end.tenantSeq, limit, ...afterParams(after), ...params }).map((r): ExportRecordRow => ({
        tenantSeq: r[0] as number,
        actionKey: r[1] as string,
        vertical: r[2] as string,
        pack: r[3] as string,
        kind: r[4] as string,
        decision: r[5] as string | null,
        status: r[6] as string,
        reviewRoute: r[7] as string | null,
        payloadHash: r[8] as string,
        packetHash: r[9] as string,
        attestation: r[10] as string,
        attestationHash: r[11] as string,
        signature: r[12] as string,
        keyId: r[13] as string,
        devKey: r[14] as 0 | 1,
        recordedAt: r[15] as string,
        credits: r[16] as number,
        details: r[17] as string,
      }));
    },
    countRange(tenantId, from, to, filter) {
      const { st, params } = forFilter(filter);
      return st.countRange.get({ tenantId, from, to, ...params })!.n;
    },
    decisionCounts(tenantId, from, to, bucketChars) {
      return decisionCounts.all(bucketChars, tenantId, from, to).map(toDecisionCount);
    },
    coverage(tenantId): CoverageRow[] {
      return coverage.all(tenantId).map(toCoverage);
    },
    recordsByPackBelowSeq(tenantId, seq) {
      return new Map(belowSeq.all(tenantId, seq).map((r) => [r.pack, r.n]));
    },
    reviewCoverage(tenantId, now): ReviewCoverageRow[] {
      return reviewCoverage.all({ tenantId, now }).map(toReviewCoverage);
    },
    recentRecords(tenantId, pack, limit): RecentRecord[] {
      return recent.all(tenantId, pack, limit).map(toRecent);
    },
    insertBinding(row) {
      insertBinding.run({ ...row, active: row.active ? 1 : 0 });
    },
    activeBinding(tenantId, exportKind, adapterKey) {
      const r = activeBinding.get(tenantId, exportKind, adapterKey);
      return r && toBinding(r);
    },
    findBinding(tenantId, bindingKey) {
      const r = findBinding.get(bindingKey, tenantId);
      return r && toBinding(r);
    },
    supersedeBinding(tenantId, bindingKey, at) {
      return supersede.run(at, bindingKey, tenantId).changes === 1;
    },
    listBindings(tenantId, f) {
      return listBindings
        .all({ tenantId, exportKind: f.exportKind ?? null, adapterKey: f.adapterKey ?? null, activeOnly: f.activeOnly ? 1 : 0 })
        .map(toBinding);
    },
    insertRun(row) {
      insertRun.run(row);
    },
    findRun(tenantId, runKey) {
      const r = findRun.get(runKey, tenantId);
      return r && toRun(r);
    },
    listRuns(tenantId, filter, limit) {
      return listRuns.all({ ...runParams(tenantId, filter), limit }).map(toRun);
    },
    countRuns(tenantId, filter) {
      const r = countRuns.get(runParams(tenantId, filter))!;
      return { total: r.total, passed: r.passed ?? 0, failed: r.failed ?? 0 };
    },
  };
}
