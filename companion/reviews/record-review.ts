/**
 * The `review` object of GET /v1/records/{action_key} for a gate action that needed review
 * (companion/REVIEW-CONTRACT.tmp.md): what the employee's client polls while paused.
 * Read-only: the status shown is the lazy one (./state.ts), so an action past its window
 * reads expired before any expiry receipt exists.
 */
import type { RecordPart } from '../evidence/routes.ts';
import type { SealedRecordRow } from '../evidence/store.ts';
import { RecordReview } from './schema.ts';
import { effectiveStatus, nextStepFor } from './state.ts';
import type { ReviewReceiptRow, ReviewStore } from './store.ts';

export interface RecordReviewView {
  status: string;
  reviewer: string | null;
  decided_at: string | null;
  receipt_action_key: string | null;
  expires_at: string | null;
  review_route: string | null;
  escalation_count: number;
  approvals: number;
  approvals_required: number;
  escalation_level: number;
  reminded_at: string | null;
  escalations: { level: number; from_route: string | null; to_route: string; at: string }[];
  next_step: string;
  receipts: { action_key: string; decision: string; reviewer: string | null; recorded_at: string }[];
  approved_by: ApprovedByEntry[];
}

export interface ApprovedByEntry {
  receipt_action_key: string;
  at: string;
  reviewer: string | null;
  principal_id: string | null;
  display_name: string | null;
  asserted_by: { principal_id: string | null; display_name: string | null; route: string | null } | null;
}

/**
 * Who has approved so far, as principals (schema.ts ApprovedBy): each approval receipt's person
 * it counts as (or the principal itself), and who named the reviewer when someone else did.
 */
export function approvedBy(receipts: readonly ReviewReceiptRow[]): ApprovedByEntry[] {
  return receipts
    .filter((r) => r.decision === 'approved')
    .map((r) => ({
      receipt_action_key: r.receiptActionKey,
      at: r.recordedAt,
      reviewer: r.reviewer,
      principal_id: r.countsAs ?? (r.asserted ? null : r.principalId),
      display_name: r.countsAs !== null ? r.countsAsName : r.asserted ? null : r.principalName,
      asserted_by: r.asserted ? { principal_id: r.principalId, display_name: r.principalName, route: r.assertedRoute } : null,
    }));
}

export async function recordReview(reviews: ReviewStore, row: SealedRecordRow, now: string): Promise<RecordReviewView | undefined> {
  if (row.kind !== 'gate' || row.decision !== 'needs_review') return undefined;
  // Asked together, so no review commits between the item and its receipts: they agree.
  const [item, escalations, receipts] = await Promise.all([
    reviews.findItem(row.tenantId, row.actionKey),
    reviews.escalationsFor(row.tenantId, row.actionKey),
    reviews.receiptsFor(row.tenantId, row.actionKey),
  ]);
  if (!item) return undefined;
  const status = effectiveStatus(item, now);
  const lazilyExpired = status === 'expired' && item.status !== 'expired';
  return {
    status,
    reviewer: status === 'expired' ? null : item.reviewer,
    decided_at: lazilyExpired ? item.expiresAt : item.decidedAt,
    receipt_action_key: lazilyExpired ? null : item.receiptActionKey,
    expires_at: item.expiresAt,
    review_route: item.reviewRoute,
    escalation_count: item.escalationCount,
    approvals: item.approvals,
    approvals_required: item.approvalsRequired,
    escalation_level: item.escalationLevel,
    reminded_at: item.remindedAt,
    escalations: escalations.map((e) => ({ level: e.level, from_route: e.fromRoute, to_route: e.toRoute, at: e.at })),
    next_step: nextStepFor(item, status),
    receipts: receipts.map((r) => ({
      action_key: r.receiptActionKey,
      decision: r.decision,
      reviewer: r.reviewer,
      recorded_at: r.recordedAt,
    })),
    approved_by: approvedBy(receipts),
  };
}

/** The review part of GET /v1/records/{action_key} (evidence/routes.ts RecordPart). */
export const reviewRecordPart: RecordPart = {
  name: 'review',
  schema: RecordReview,
  view: (deps, row, now) => recordReview(deps.store.reviews, row, now),
};
