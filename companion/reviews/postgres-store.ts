/**
 * PostgreSQL implementation of ReviewStore (migrations/postgres/0004, 0010): the same
 * statements as ./sqlite-store.ts, with these differences.
 *
 * - Transitions (decide, approve, expire, markReminded) stay one conditional UPDATE each: under
 *   READ COMMITTED PostgreSQL re-evaluates the WHERE on the newest committed version of a row a
 *   concurrent transaction changed, so two reviewers on different companions can never both
 *   move the same item (the loser's UPDATE matches no row and the method answers false).
 * - escalateRoute also records the route the item left, which an UPDATE cannot return (RETURNING
 *   sees the new row): it locks the item (SELECT ... FOR UPDATE) in a transaction of its own, or
 *   a savepoint of the caller's, reads the route, then moves the item and records the step in one
 *   statement. The lock makes the route read the one the step really left.
 * - A boolean is not a number here: sums over comparisons are count(*) FILTER (WHERE ...).
 * - Insights: the tenant-wide row is GROUP BY ROLLUP (SQLite spells it as a UNION), with the
 *   decision times joined in, one statement; rows come ordered by action type, the tenant-wide
 *   row last. Seconds to decide repeat SQLite's julianday arithmetic (see `decided` below).
 * - Insights are not remembered between calls as the SQLite store does: several companions
 *   write the same items, and a store built over a transaction could not tell the pool's store
 *   it wrote. Every call reads the rows (an index range of the tenant's items).
 */
import { atomically } from '../core/postgres/connect.ts';
import type { PgTransaction, Queryable } from '../core/postgres/connect.ts';
import { writeBehind } from '../core/postgres/write-behind.ts';
import { receiptColumns, toEscalation, toInsights, toItem, toReceipt } from './rows.ts';
import type { DecisionTimes, EscalationDbRow, InsightsDbRow, ItemDbRow, ReceiptDbRow } from './rows.ts';
import type { NewReviewItem, ReviewStore } from './store.ts';

/** The insight counts with their action type's decision times joined in (one statement here). */
interface InsightsWithTimesDbRow extends InsightsDbRow, DecisionTimes {}

/**
 * A seal batch's new review items in one statement, written behind (core/postgres/write-behind.ts),
 * each column a text array cast back to its type; in the seals' order, so ids rise with them.
 */
function openItems(sql: PgTransaction, rows: unknown[][]) {
  const column = (i: number) => sql.array(rows.map((row) => (row[i] === null || row[i] === undefined ? null : String(row[i]))) as string[], 25);
  return sql`INSERT INTO review_items
    (tenant_id, action_key, pack, vertical, action_type, review_route, next_step, status, created_at, expires_at, window_seconds, updated_at,
     rule, approvals_required, schedule_due_at)
    SELECT tenant_id, action_key, pack, vertical, action_type, review_route, next_step, 'pending', created_at, expires_at,
           window_seconds::bigint, created_at, rule, approvals_required::bigint, schedule_due_at
      FROM unnest(${column(0)}::text[], ${column(1)}::text[], ${column(2)}::text[], ${column(3)}::text[], ${column(4)}::text[],
                  ${column(5)}::text[], ${column(6)}::text[], ${column(7)}::text[], ${column(8)}::text[], ${column(9)}::text[],
                  ${column(10)}::text[], ${column(11)}::text[], ${column(12)}::text[])
           WITH ORDINALITY
        AS v(tenant_id, action_key, pack, vertical, action_type, review_route, next_step, created_at, expires_at, window_seconds,
             rule, approvals_required, schedule_due_at, n)
     ORDER BY n`;
}

export function createPostgresReviewStore(sql: Queryable): ReviewStore {
  // A fresh fragment for each use: a fragment is a query object, not a string.
  const open = () => sql`status IN ('pending', 'escalated')`;

  return {
    async openItem(item: NewReviewItem) {
      const behind = writeBehind(sql);
      if (behind?.add('review_items', openItems, [
          item.tenantId, item.actionKey, item.pack, item.vertical, item.actionType, item.reviewRoute, item.nextStep, item.createdAt,
          item.expiresAt, item.windowSeconds, item.rule === null ? null : JSON.stringify(item.rule), item.approvalsRequired, item.scheduleDueAt,
        ])) return;
      await sql`INSERT INTO review_items
        (tenant_id, action_key, pack, vertical, action_type, review_route, next_step, status, created_at, expires_at, window_seconds, updated_at,
         rule, approvals_required, schedule_due_at)
        VALUES (${item.tenantId}, ${item.actionKey}, ${item.pack}, ${item.vertical}, ${item.actionType}, ${item.reviewRoute}, ${item.nextStep},
         'pending', ${item.createdAt}, ${item.expiresAt}, ${item.windowSeconds}, ${item.createdAt},
         ${item.rule === null ? null : JSON.stringify(item.rule)}, ${item.approvalsRequired}, ${item.scheduleDueAt})`;
    },
    async findItem(tenantId, actionKey) {
      const [r] = await sql<ItemDbRow[]>`SELECT * FROM review_items WHERE action_key = ${actionKey} AND tenant_id = ${tenantId}`;
      return r && toItem(r);
    },
    async decide(tenantId, actionKey, { decision, reviewer, at, receiptActionKey }) {
      // One conditional statement (see the header): open and window running at `at`.
      const r = await sql`UPDATE review_items
        SET status = ${decision}, reviewer = ${reviewer}, decided_at = ${at}, receipt_action_key = ${receiptActionKey}, updated_at = ${at},
            escalation_count = escalation_count + CASE WHEN ${decision}::text = 'escalated' THEN 1 ELSE 0 END
        WHERE tenant_id = ${tenantId} AND action_key = ${actionKey} AND ${open()} AND expires_at > ${at}`;
      return r.count === 1;
    },
    async approve(tenantId, actionKey, { reviewer, at, receiptActionKey, expected }) {
      // One conditional statement: the item must still be as the approver's receipt says.
      const r = await sql`UPDATE review_items
        SET approvals = approvals + 1, updated_at = ${at},
            status = CASE WHEN approvals + 1 >= approvals_required THEN 'approved' ELSE status END,
            reviewer = CASE WHEN approvals + 1 >= approvals_required THEN ${reviewer} ELSE reviewer END,
            decided_at = CASE WHEN approvals + 1 >= approvals_required THEN ${at} ELSE decided_at END,
            receipt_action_key = CASE WHEN approvals + 1 >= approvals_required THEN ${receiptActionKey} ELSE receipt_action_key END
        WHERE tenant_id = ${tenantId} AND action_key = ${actionKey} AND ${open()} AND expires_at > ${at}
          AND status = ${expected.status} AND approvals = ${expected.approvals}`;
      return r.count === 1;
    },
    async expire(tenantId, actionKey, at, receiptActionKey) {
      const r = await sql`UPDATE review_items
        SET status = 'expired', reviewer = NULL, decided_at = expires_at, receipt_action_key = ${receiptActionKey}, updated_at = ${at}
        WHERE tenant_id = ${tenantId} AND action_key = ${actionKey} AND ${open()} AND expires_at <= ${at}`;
      return r.count === 1;
    },
    async addReceipt(row) {
      const r = receiptColumns(row);
      await sql`INSERT INTO review_receipts (receipt_action_key, tenant_id, reviewed_action_key, decision, reviewer, recorded_at,
          principal_id, principal_name, counts_as, counts_as_name, asserted, asserted_route, identity_provider, identity_subject, principal_person_id)
        VALUES (${r.receiptActionKey}, ${r.tenantId}, ${r.reviewedActionKey}, ${r.decision}, ${r.reviewer}, ${r.recordedAt},
          ${r.principalId}, ${r.principalName}, ${r.countsAs}, ${r.countsAsName}, ${r.asserted}, ${r.assertedRoute}, ${r.identityProvider}, ${r.identitySubject}, ${r.actingPerson})`;
    },
    async receiptsFor(tenantId, actionKey) {
      const rows = await sql<ReceiptDbRow[]>`SELECT * FROM review_receipts WHERE tenant_id = ${tenantId} AND reviewed_action_key = ${actionKey}
        ORDER BY recorded_at, receipt_action_key`;
      return rows.map(toReceipt);
    },
    async listOpen(tenantId, now, { route, pack, actionType, createdBefore, after, limit }) {
      const rows = await sql<ItemDbRow[]>`SELECT * FROM review_items WHERE tenant_id = ${tenantId} AND ${open()} AND expires_at > ${now}
        ${route === undefined ? sql`` : sql`AND review_route = ${route}`} ${pack === undefined ? sql`` : sql`AND pack = ${pack}`}
        ${actionType === undefined ? sql`` : sql`AND action_type = ${actionType}`} ${createdBefore === undefined ? sql`` : sql`AND created_at <= ${createdBefore}`}
        ${after === undefined ? sql`` : sql`AND (created_at, id) > (${after.createdAt}, coalesce((SELECT id FROM review_items WHERE action_key = ${after.actionKey} AND tenant_id = ${tenantId}), -1))`}
        ORDER BY created_at, id LIMIT ${limit}`;
      return rows.map(toItem);
    },
    async listDue(now, limit) {
      const rows = await sql<ItemDbRow[]>`SELECT * FROM review_items WHERE ${open()} AND expires_at <= ${now} ORDER BY expires_at, id LIMIT ${limit}`;
      return rows.map(toItem);
    },
    async listScheduled(now, limit) {
      const rows = await sql<ItemDbRow[]>`SELECT * FROM review_items
        WHERE schedule_due_at IS NOT NULL AND ${open()} AND schedule_due_at <= ${now} AND expires_at > ${now}
        ORDER BY schedule_due_at, id LIMIT ${limit}`;
      return rows.map(toItem);
    },
    async markReminded(tenantId, actionKey, at, scheduleDueAt) {
      // One conditional statement: the reminder is marked once whoever else tries.
      const r = await sql`UPDATE review_items SET reminded_at = ${at}, schedule_due_at = ${scheduleDueAt}, updated_at = ${at}
        WHERE tenant_id = ${tenantId} AND action_key = ${actionKey} AND reminded_at IS NULL AND ${open()} AND expires_at > ${at}`;
      return r.count === 1;
    },
    escalateRoute(tenantId, actionKey, { level, route, at, scheduleDueAt }) {
      // The row lock (held to the end of the transaction, the caller's when there is one) keeps
      // the route read here the one the UPDATE below moves the item from: another companion
      // taking the previous step meanwhile waits, or has committed before the read.
      return atomically(sql, async (tx) => {
        const [before] = await tx<{ review_route: string | null }[]>`SELECT review_route FROM review_items
          WHERE action_key = ${actionKey} AND tenant_id = ${tenantId} FOR UPDATE`;
        if (!before) return false;
        const r = await tx`WITH moved AS (
            UPDATE review_items SET escalation_level = ${level}, review_route = ${route}, schedule_due_at = ${scheduleDueAt}, updated_at = ${at}
             WHERE tenant_id = ${tenantId} AND action_key = ${actionKey} AND escalation_level = ${level}::bigint - 1
               AND ${open()} AND expires_at > ${at}
            RETURNING action_key)
          INSERT INTO review_escalations (action_key, level, tenant_id, from_route, to_route, at)
          SELECT action_key, ${level}::bigint, ${tenantId}::text, ${before.review_route}::text, ${route}::text, ${at}::text FROM moved`;
        return r.count === 1;
      });
    },
    async escalationsFor(tenantId, actionKey) {
      const rows = await sql<EscalationDbRow[]>`SELECT level, from_route, to_route, at
        FROM review_escalations WHERE tenant_id = ${tenantId} AND action_key = ${actionKey} ORDER BY level`;
      return rows.map(toEscalation);
    },
    // Remembers nothing: other companions write the same items.
    async itemsChangedElsewhere() {},
    async insights(tenantId, now, since) {
      // Counts: an open item past its window counts as expired, as every reader sees it. Times
      // to decide (approved or rejected, pause to deciding receipt): nearest-rank percentiles,
      // the value at rank ceil(p·n) in whole seconds, per action type and tenant-wide (NULL).
      // Seconds are SQLite's CAST(round((julianday(decided_at) - julianday(created_at)) * 86400)
      // AS INTEGER) operation for operation: julianday is the Julian day in whole milliseconds
      // (SQLite's iJD) over 86400000.0 as a double, and round() adds 0.5 and truncates (away from
      // zero). Exact arithmetic would differ for durations of exactly n.5 seconds, which the
      // doubles push to one side or the other.
      const rows = await sql<InsightsWithTimesDbRow[]>`
        WITH items AS (SELECT * FROM review_items WHERE tenant_id = ${tenantId} AND created_at >= ${since ?? ''}),
        counted AS (
          SELECT action_type,
                 count(*) AS total,
                 count(*) FILTER (WHERE ${open()} AND expires_at > ${now}) AS pending,
                 min(created_at) FILTER (WHERE ${open()} AND expires_at > ${now}) AS oldest_pending_at,
                 count(*) FILTER (WHERE status = 'approved') AS approved,
                 count(*) FILTER (WHERE status = 'rejected') AS rejected,
                 count(*) FILTER (WHERE status = 'expired' OR (${open()} AND expires_at <= ${now})) AS expired,
                 count(*) FILTER (WHERE escalation_count > 0 OR escalation_level > 0) AS escalated
            FROM items GROUP BY ROLLUP (action_type)),
        decided AS (SELECT action_type, ((ms.decided + 210866760000000)::double precision / 86400000.0
                                         - (ms.created + 210866760000000)::double precision / 86400000.0) * 86400 AS x
                      FROM items, LATERAL (SELECT round(extract(epoch FROM decided_at::timestamptz) * 1000) AS decided,
                                                  round(extract(epoch FROM created_at::timestamptz) * 1000) AS created) AS ms
                     WHERE status IN ('approved', 'rejected')),
        d AS (SELECT action_type, (CASE WHEN x >= 0 THEN floor(x + 0.5) ELSE -floor(-x + 0.5) END)::bigint AS s FROM decided),
        both_partitions AS (SELECT action_type, s FROM d UNION ALL SELECT NULL, s FROM d),
        r AS (SELECT action_type, s, row_number() OVER (PARTITION BY action_type ORDER BY s) AS rn,
                     count(*) OVER (PARTITION BY action_type) AS n FROM both_partitions),
        times AS (SELECT action_type, max(CASE WHEN rn = (n + 1) / 2 THEN s END) AS p50, max(CASE WHEN rn = (9 * n + 9) / 10 THEN s END) AS p90
                    FROM r GROUP BY action_type)
        SELECT c.*, t.p50, t.p90 FROM counted c LEFT JOIN times t ON t.action_type IS NOT DISTINCT FROM c.action_type
         ORDER BY c.action_type NULLS LAST`;
      return rows.map((r) => toInsights(r, r));
    },
  };
}
