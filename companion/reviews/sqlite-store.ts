/** SQLite implementation of ReviewStore (migration 0004); statements are prepared once. */
import type { Db } from '../core/db.ts';
import type { NewReviewItem, ReceiptDecision, ReviewItem, ReviewReceiptRow, ReviewStatus, ReviewStore } from './store.ts';

interface ItemDbRow {
  tenant_id: string;
  action_key: string;
  pack: string;
  vertical: string;
  action_type: string;
  review_route: string | null;
  next_step: string;
  status: ReviewStatus;
  created_at: string;
  expires_at: string;
  window_seconds: number;
  escalation_count: number;
  reviewer: string | null;
  decided_at: string | null;
  receipt_action_key: string | null;
}

interface ReceiptDbRow {
  receipt_action_key: string;
  tenant_id: string;
  reviewed_action_key: string;
  decision: ReceiptDecision;
  reviewer: string | null;
  recorded_at: string;
}

const toItem = (r: ItemDbRow): ReviewItem => ({
  tenantId: r.tenant_id,
  actionKey: r.action_key,
  pack: r.pack,
  vertical: r.vertical,
  actionType: r.action_type,
  reviewRoute: r.review_route,
  nextStep: r.next_step,
  status: r.status,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  windowSeconds: r.window_seconds,
  escalationCount: r.escalation_count,
  reviewer: r.reviewer,
  decidedAt: r.decided_at,
  receiptActionKey: r.receipt_action_key,
});

const toReceipt = (r: ReceiptDbRow): ReviewReceiptRow => ({
  receiptActionKey: r.receipt_action_key,
  tenantId: r.tenant_id,
  reviewedActionKey: r.reviewed_action_key,
  decision: r.decision,
  reviewer: r.reviewer,
  recordedAt: r.recorded_at,
});

const OPEN = "status IN ('pending', 'escalated')";

export function createSqliteReviewStore(db: Db): ReviewStore {
  const insertItem = db.prepare(`INSERT INTO review_items
    (tenant_id, action_key, pack, vertical, action_type, review_route, next_step, status, created_at, expires_at, window_seconds, updated_at)
    VALUES (@tenantId, @actionKey, @pack, @vertical, @actionType, @reviewRoute, @nextStep, 'pending', @createdAt, @expiresAt, @windowSeconds, @createdAt)`);
  const findItem = db.prepare<[string, string], ItemDbRow>('SELECT * FROM review_items WHERE action_key = ? AND tenant_id = ?');
  // An escalation keeps the item open and counts; approve and reject close it. Either way the
  // window must still be running at the receipt's signed recorded_at (fail closed).
  const decide = db.prepare(`UPDATE review_items
    SET status = @decision, reviewer = @reviewer, decided_at = @at, receipt_action_key = @receiptActionKey, updated_at = @at,
        escalation_count = escalation_count + (@decision = 'escalated')
    WHERE tenant_id = @tenantId AND action_key = @actionKey AND ${OPEN} AND expires_at > @at`);
  const expire = db.prepare(`UPDATE review_items
    SET status = 'expired', reviewer = NULL, decided_at = expires_at, receipt_action_key = @receiptActionKey, updated_at = @at
    WHERE tenant_id = @tenantId AND action_key = @actionKey AND ${OPEN} AND expires_at <= @at`);
  const insertReceipt = db.prepare(`INSERT INTO review_receipts
    (receipt_action_key, tenant_id, reviewed_action_key, decision, reviewer, recorded_at)
    VALUES (@receiptActionKey, @tenantId, @reviewedActionKey, @decision, @reviewer, @recordedAt)`);
  const receipts = db.prepare<[string, string], ReceiptDbRow>(
    'SELECT * FROM review_receipts WHERE tenant_id = ? AND reviewed_action_key = ? ORDER BY recorded_at, receipt_action_key',
  );
  const open = db.prepare<[string, string, number], ItemDbRow>(
    `SELECT * FROM review_items WHERE tenant_id = ? AND ${OPEN} AND expires_at > ? ORDER BY created_at, id LIMIT ?`,
  );
  const openOnRoute = db.prepare<[string, string, string, number], ItemDbRow>(
    `SELECT * FROM review_items WHERE tenant_id = ? AND ${OPEN} AND expires_at > ? AND review_route = ? ORDER BY created_at, id LIMIT ?`,
  );
  const due = db.prepare<[string, number], ItemDbRow>(`SELECT * FROM review_items WHERE ${OPEN} AND expires_at <= ? ORDER BY expires_at, id LIMIT ?`);

  return {
    openItem(item: NewReviewItem) {
      insertItem.run(item);
    },
    findItem(tenantId, actionKey) {
      const r = findItem.get(actionKey, tenantId);
      return r && toItem(r);
    },
    decide(tenantId, actionKey, d) {
      return decide.run({ tenantId, actionKey, ...d }).changes === 1;
    },
    expire(tenantId, actionKey, at, receiptActionKey) {
      return expire.run({ tenantId, actionKey, at, receiptActionKey }).changes === 1;
    },
    addReceipt(row) {
      insertReceipt.run(row);
    },
    receiptsFor(tenantId, actionKey) {
      return receipts.all(tenantId, actionKey).map(toReceipt);
    },
    listOpen(tenantId, now, { route, limit }) {
      const rows = route === undefined ? open.all(tenantId, now, limit) : openOnRoute.all(tenantId, now, route, limit);
      return rows.map(toItem);
    },
    listDue(now, limit) {
      return due.all(now, limit).map(toItem);
    },
  };
}
