/**
 * The reviews tables' rows as both engines read them (review_items, review_receipts,
 * review_escalations, and the insight counts over the items; bigint columns arrive as numbers on
 * PostgreSQL too), and how they map to the store's records: shared by ./sqlite-store.ts and
 * ./postgres-store.ts, so the two cannot drift apart.
 */
import type { ReviewRule } from './rules.ts';
import type { EscalationRow, InsightsRow, NewReviewReceipt, ReceiptDecision, ReviewItem, ReviewReceiptRow, ReviewStatus } from './store.ts';

export interface ItemDbRow {
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
  rule: string | null;
  approvals_required: number;
  approvals: number;
  reminded_at: string | null;
  escalation_level: number;
  schedule_due_at: string | null;
}

export interface ReceiptDbRow {
  receipt_action_key: string;
  tenant_id: string;
  reviewed_action_key: string;
  decision: ReceiptDecision;
  reviewer: string | null;
  recorded_at: string;
  principal_id: string | null;
  principal_name: string | null;
  counts_as: string | null;
  counts_as_name: string | null;
  asserted: number;
  asserted_route: string | null;
  identity_provider: string | null;
  identity_subject: string | null;
  principal_person_id: string | null;
}

export interface EscalationDbRow {
  level: number;
  from_route: string | null;
  to_route: string;
  at: string;
}

/** One row of insight counts: per action type, or tenant-wide (action_type NULL). */
export interface InsightsDbRow {
  action_type: string | null;
  total: number;
  pending: number;
  oldest_pending_at: string | null;
  approved: number;
  rejected: number;
  expired: number;
  escalated: number;
}

/** Nearest-rank percentiles of the seconds to decide, in whole seconds (null: nothing decided). */
export interface DecisionTimes {
  p50: number | null;
  p90: number | null;
}

export const toItem = (r: ItemDbRow): ReviewItem => ({
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
  rule: r.rule === null ? null : (JSON.parse(r.rule) as ReviewRule),
  approvalsRequired: r.approvals_required,
  approvals: r.approvals,
  remindedAt: r.reminded_at,
  escalationLevel: r.escalation_level,
  scheduleDueAt: r.schedule_due_at,
});

export const toReceipt = (r: ReceiptDbRow): ReviewReceiptRow => ({
  receiptActionKey: r.receipt_action_key,
  tenantId: r.tenant_id,
  reviewedActionKey: r.reviewed_action_key,
  decision: r.decision,
  reviewer: r.reviewer,
  recordedAt: r.recorded_at,
  principalId: r.principal_id,
  principalName: r.principal_name,
  countsAs: r.counts_as,
  countsAsName: r.counts_as_name,
  asserted: Number(r.asserted) === 1,
  assertedRoute: r.asserted_route,
  identityProvider: r.identity_provider,
  identitySubject: r.identity_subject,
  actingPerson: r.principal_person_id,
});

/** A receipt's columns for INSERT, as both engines bind them. */
export const receiptColumns = (row: NewReviewReceipt) => ({
  receiptActionKey: row.receiptActionKey,
  tenantId: row.tenantId,
  reviewedActionKey: row.reviewedActionKey,
  decision: row.decision,
  reviewer: row.reviewer,
  recordedAt: row.recordedAt,
  principalId: row.principalId ?? null,
  principalName: row.principalName ?? null,
  countsAs: row.countsAs ?? null,
  countsAsName: row.countsAsName ?? null,
  asserted: row.asserted ? 1 : 0,
  assertedRoute: row.assertedRoute ?? null,
  identityProvider: row.identityProvider ?? null,
  identitySubject: row.identitySubject ?? null,
  actingPerson: row.actingPerson ?? null,
});

export const toEscalation = (r: EscalationDbRow): EscalationRow => ({ level: r.level, fromRoute: r.from_route, toRoute: r.to_route, at: r.at });

/** A row of counts with its action type's decision times (none when no item of it was decided). */
export const toInsights = (r: InsightsDbRow, times: DecisionTimes | undefined): InsightsRow => ({
  actionType: r.action_type,
  total: r.total,
  pending: r.pending,
  oldestPendingAt: r.oldest_pending_at,
  approved: r.approved,
  rejected: r.rejected,
  expired: r.expired,
  escalated: r.escalated,
  medianSecondsToDecide: times?.p50 ?? null,
  p90SecondsToDecide: times?.p90 ?? null,
});
