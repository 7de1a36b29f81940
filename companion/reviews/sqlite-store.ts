/** SQLite implementation of ReviewStore (migrations 0004, 0010); statements are prepared once. */
import type { Sync } from '../core/async-store.ts';
import type { Db } from '../core/db.ts';
import { receiptColumns, toEscalation, toInsights, toItem, toReceipt } from './rows.ts';
import type { DecisionTimes, EscalationDbRow, InsightsDbRow, ItemDbRow, ReceiptDbRow } from './rows.ts';
import type { InsightsRow, NewReviewItem, ReviewStore } from './store.ts';

const OPEN = "status IN ('pending', 'escalated')";

/** How long remembered insights may be served, in service time; and how many are remembered. */
export const INSIGHTS_TTL_MS = 5_000;
const INSIGHTS_REMEMBERED = 1_000;

/**
 * Counts per action type and tenant-wide (GROUP BY with ROLLUP spelled as a UNION, which
 * SQLite lacks). An open item past its window counts as expired, as every reader sees it.
 */
const INSIGHT_COUNTS = `
  WITH items AS (SELECT * FROM review_items WHERE tenant_id = @tenantId AND created_at >= @since),
  counted AS (
    SELECT action_type,
           count(*) AS total,
           coalesce(sum(${OPEN} AND expires_at > @now), 0) AS pending,
           min(CASE WHEN ${OPEN} AND expires_at > @now THEN created_at END) AS oldest_pending_at,
           coalesce(sum(status = 'approved'), 0) AS approved,
           coalesce(sum(status = 'rejected'), 0) AS rejected,
           coalesce(sum(status = 'expired' OR (${OPEN} AND expires_at <= @now)), 0) AS expired,
           coalesce(sum(escalation_count > 0 OR escalation_level > 0), 0) AS escalated
      FROM items GROUP BY action_type)
  SELECT * FROM counted
  UNION ALL
  SELECT NULL, coalesce(sum(total), 0), coalesce(sum(pending), 0), min(oldest_pending_at), coalesce(sum(approved), 0),
         coalesce(sum(rejected), 0), coalesce(sum(expired), 0), coalesce(sum(escalated), 0) FROM counted`;

/**
 * Time to decide (approved or rejected, from the pause to the deciding receipt), nearest-rank
 * percentiles: the value at rank ceil(p·n), in whole seconds; (n + 1) / 2 and (9n + 9) / 10
 * are those ceilings in integer arithmetic.
 */
const INSIGHT_TIMES = (partition: string) => `
  WITH d AS (
    SELECT ${partition} AS action_type, CAST(round((julianday(decided_at) - julianday(created_at)) * 86400) AS INTEGER) AS s
      FROM review_items WHERE tenant_id = @tenantId AND created_at >= @since AND status IN ('approved', 'rejected')),
  r AS (SELECT action_type, s, row_number() OVER (PARTITION BY action_type ORDER BY s) AS rn, count(*) OVER (PARTITION BY action_type) AS n FROM d)
  SELECT action_type, max(CASE WHEN rn = (n + 1) / 2 THEN s END) AS p50, max(CASE WHEN rn = (9 * n + 9) / 10 THEN s END) AS p90
    FROM r GROUP BY action_type`;

export function createSqliteReviewStore(db: Db): Sync<ReviewStore> {
  // Positional parameters: every paused seal opens an item, and they bind faster than named ones.
  const insertItem = db.prepare(`INSERT INTO review_items
    (tenant_id, action_key, pack, vertical, action_type, review_route, next_step, status, created_at, expires_at, window_seconds, updated_at,
     rule, approvals_required, schedule_due_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?)`);
  const findItem = db.prepare<[string, string], ItemDbRow>('SELECT * FROM review_items WHERE action_key = ? AND tenant_id = ?');
  // An escalation keeps the item open and counts; approve and reject close it. Either way the
  // window must still be running at the receipt's signed recorded_at (fail closed).
  const decide = db.prepare(`UPDATE review_items
    SET status = @decision, reviewer = @reviewer, decided_at = @at, receipt_action_key = @receiptActionKey, updated_at = @at,
        escalation_count = escalation_count + (@decision = 'escalated')
    WHERE tenant_id = @tenantId AND action_key = @actionKey AND ${OPEN} AND expires_at > @at`);
  // One approval: the item must still be as the approver's receipt says (status and count), so
  // the receipt's committed approval number is the true one; the last approval closes it.
  const approve = db.prepare(`UPDATE review_items
    SET approvals = approvals + 1, updated_at = @at,
        status = CASE WHEN approvals + 1 >= approvals_required THEN 'approved' ELSE status END,
        reviewer = CASE WHEN approvals + 1 >= approvals_required THEN @reviewer ELSE reviewer END,
        decided_at = CASE WHEN approvals + 1 >= approvals_required THEN @at ELSE decided_at END,
        receipt_action_key = CASE WHEN approvals + 1 >= approvals_required THEN @receiptActionKey ELSE receipt_action_key END
    WHERE tenant_id = @tenantId AND action_key = @actionKey AND ${OPEN} AND expires_at > @at
      AND status = @status AND approvals = @approvals`);
  const expire = db.prepare(`UPDATE review_items
    SET status = 'expired', reviewer = NULL, decided_at = expires_at, receipt_action_key = @receiptActionKey, updated_at = @at
    WHERE tenant_id = @tenantId AND action_key = @actionKey AND ${OPEN} AND expires_at <= @at`);
  const insertReceipt = db.prepare(`INSERT INTO review_receipts
    (receipt_action_key, tenant_id, reviewed_action_key, decision, reviewer, recorded_at,
     principal_id, principal_name, counts_as, counts_as_name, asserted, asserted_route, identity_provider, identity_subject, principal_person_id)
    VALUES (@receiptActionKey, @tenantId, @reviewedActionKey, @decision, @reviewer, @recordedAt,
     @principalId, @principalName, @countsAs, @countsAsName, @asserted, @assertedRoute, @identityProvider, @identitySubject, @actingPerson)`);
  const receipts = db.prepare<[string, string], ReceiptDbRow>(
    'SELECT * FROM review_receipts WHERE tenant_id = ? AND reviewed_action_key = ? ORDER BY recorded_at, receipt_action_key',
  );
  // One statement for every filter: an absent one is NULL and passes. The page start is a
  // range on created_at (coalesced, so the board's index still serves it), then insertion order
  // after the cursor's item.
  const open = db.prepare<Record<string, string | number | null>, ItemDbRow>(
    `SELECT * FROM review_items WHERE tenant_id = @tenantId AND ${OPEN} AND expires_at > @now
       AND (@route IS NULL OR review_route = @route) AND (@pack IS NULL OR pack = @pack) AND (@actionType IS NULL OR action_type = @actionType)
       AND created_at <= coalesce(@createdBefore, created_at)
       AND created_at >= coalesce(@afterAt, '')
       AND (created_at > coalesce(@afterAt, '') OR id > coalesce((SELECT id FROM review_items WHERE action_key = @afterKey AND tenant_id = @tenantId), -1))
     ORDER BY created_at, id LIMIT @limit`,
  );
  const due = db.prepare<[string, number], ItemDbRow>(`SELECT * FROM review_items WHERE ${OPEN} AND expires_at <= ? ORDER BY expires_at, id LIMIT ?`);
  const scheduled = db.prepare<{ now: string; limit: number }, ItemDbRow>(`SELECT * FROM review_items
    WHERE schedule_due_at IS NOT NULL AND ${OPEN} AND schedule_due_at <= @now AND expires_at > @now ORDER BY schedule_due_at, id LIMIT @limit`);
  const remind = db.prepare(`UPDATE review_items SET reminded_at = @at, schedule_due_at = @scheduleDueAt, updated_at = @at
    WHERE tenant_id = @tenantId AND action_key = @actionKey AND reminded_at IS NULL AND ${OPEN} AND expires_at > @at`);
  const escalate = db.prepare(`UPDATE review_items
    SET escalation_level = @level, review_route = @route, schedule_due_at = @scheduleDueAt, updated_at = @at
    WHERE tenant_id = @tenantId AND action_key = @actionKey AND escalation_level = @level - 1 AND ${OPEN} AND expires_at > @at`);
  const insertEscalation = db.prepare(`INSERT INTO review_escalations (action_key, level, tenant_id, from_route, to_route, at)
    VALUES (@actionKey, @level, @tenantId, @fromRoute, @route, @at)`);
  const escalations = db.prepare<[string, string], EscalationDbRow>(
    'SELECT level, from_route, to_route, at FROM review_escalations WHERE tenant_id = ? AND action_key = ? ORDER BY level',
  );
  const insightCounts = db.prepare<{ tenantId: string; since: string; now: string }, InsightsDbRow>(INSIGHT_COUNTS);
  const timesByType = db.prepare<{ tenantId: string; since: string }, { action_type: string; p50: number | null; p90: number | null }>(
    INSIGHT_TIMES('action_type'),
  );
  const timesOverall = db.prepare<{ tenantId: string; since: string }, { action_type: null; p50: number | null; p90: number | null }>(INSIGHT_TIMES('NULL'));

  // Insights scan every item of the tenant, and the board (which carries them) is polled by
  // every reviewer's browser: answers are remembered per tenant until this store writes one of
  // the tenant's items (or is told the sealing thread's connection did: itemsChangedElsewhere),
  // for at most INSIGHTS_TTL_MS of service time (items that pass their deadline without a
  // write, or writes by another process, show within that).
  const generations = new Map<string, number>();
  const touched = (tenantId: string) => generations.set(tenantId, (generations.get(tenantId) ?? 0) + 1);
  const remembered = new Map<string, { generation: number; atMs: number; rows: InsightsRow[] }>();

  return {
    openItem(item: NewReviewItem) {
      touched(item.tenantId);
      insertItem.run(
        item.tenantId, item.actionKey, item.pack, item.vertical, item.actionType, item.reviewRoute, item.nextStep, item.createdAt, item.expiresAt,
        item.windowSeconds, item.createdAt, item.rule === null ? null : JSON.stringify(item.rule), item.approvalsRequired, item.scheduleDueAt,
      );
    },
    findItem(tenantId, actionKey) {
      const r = findItem.get(actionKey, tenantId);
      return r && toItem(r);
    },
    decide(tenantId, actionKey, d) {
      touched(tenantId);
      return decide.run({ tenantId, actionKey, ...d }).changes === 1;
    },
    approve(tenantId, actionKey, { reviewer, at, receiptActionKey, expected }) {
      touched(tenantId);
      return approve.run({ tenantId, actionKey, reviewer, at, receiptActionKey, ...expected }).changes === 1;
    },
    expire(tenantId, actionKey, at, receiptActionKey) {
      touched(tenantId);
      return expire.run({ tenantId, actionKey, at, receiptActionKey }).changes === 1;
    },
    addReceipt(row) {
      insertReceipt.run(receiptColumns(row));
    },
    receiptsFor(tenantId, actionKey) {
      return receipts.all(tenantId, actionKey).map(toReceipt);
    },
    listOpen(tenantId, now, { route, pack, actionType, createdBefore, after, limit }) {
      const rows = open.all({
        tenantId,
        now,
        route: route ?? null,
        pack: pack ?? null,
        actionType: actionType ?? null,
        createdBefore: createdBefore ?? null,
        afterAt: after?.createdAt ?? null,
        afterKey: after?.actionKey ?? '',
        limit,
      });
      return rows.map(toItem);
    },
    listDue(now, limit) {
      return due.all(now, limit).map(toItem);
    },
    listScheduled(now, limit) {
      return scheduled.all({ now, limit }).map(toItem);
    },
    markReminded(tenantId, actionKey, at, scheduleDueAt) {
      touched(tenantId);
      return remind.run({ tenantId, actionKey, at, scheduleDueAt }).changes === 1;
    },
    escalateRoute(tenantId, actionKey, { level, route, at, scheduleDueAt }) {
      touched(tenantId);
      const before = findItem.get(actionKey, tenantId);
      if (!before || escalate.run({ tenantId, actionKey, level, route, at, scheduleDueAt }).changes !== 1) return false;
      insertEscalation.run({ actionKey, level, tenantId, fromRoute: before.review_route, route, at });
      return true;
    },
    escalationsFor(tenantId, actionKey) {
      return escalations.all(tenantId, actionKey).map(toEscalation);
    },
    itemsChangedElsewhere(tenantId) {
      touched(tenantId);
    },
    insights(tenantId, now, since) {
      const key = `${tenantId}\n${since ?? ''}`;
      const generation = generations.get(tenantId) ?? 0;
      const nowMs = Date.parse(now);
      const hit = remembered.get(key);
      if (hit && hit.generation === generation && nowMs >= hit.atMs && nowMs - hit.atMs < INSIGHTS_TTL_MS) return hit.rows;
      const rows = computeInsights(tenantId, now, since);
      if (remembered.size >= INSIGHTS_REMEMBERED) remembered.delete(remembered.keys().next().value!);
      remembered.delete(key);
      remembered.set(key, { generation, atMs: nowMs, rows });
      return rows;
    },
  };

  function computeInsights(tenantId: string, now: string, since: string | null): InsightsRow[] {
    const params = { tenantId, since: since ?? '' };
    const times = new Map<string | null, DecisionTimes>();
    for (const t of [...timesByType.all(params), ...timesOverall.all(params)]) times.set(t.action_type, t);
    return insightCounts.all({ ...params, now }).map((r) => toInsights(r, times.get(r.action_type)));
  }
}
