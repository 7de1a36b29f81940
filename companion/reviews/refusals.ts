/**
 * The 409 `review_not_pending` answers of POST /v1/reviews: reviewing an action that is not
 * paused, or twice, is refused clearly. Each says which case it is in `detail` and in
 * the extension members `review_status` and `receipt_action_key` (RFC 9457 §3.2), so a client
 * can act without parsing prose.
 */
import { ProblemError } from '../core/errors.ts';
import type { SealedRecordRow } from '../evidence/store.ts';
import { effectiveStatus } from './state.ts';
import type { ReviewItem } from './store.ts';

/** A sealed record that never paused: an allow or blocked gate decision, a record, a receipt. */
export function neverPaused(row: SealedRecordRow): ProblemError {
  const what =
    row.kind === 'gate'
      ? `was decided ${row.decision ?? row.status}; only needs_review actions pause for review`
      : `is a ${row.kind} record, not a gate action; only needs_review gate actions pause for review`;
  return ProblemError.conflict('review_not_pending', `${row.actionKey} ${what}`, {
    reviewed_action_key: row.actionKey,
    review_status: 'not_paused',
    action_decision: row.decision,
    receipt_action_key: null,
  });
}

/** An item that is no longer open at `now`: decided, or past its review window. */
export function notOpen(item: ReviewItem, now: string): ProblemError {
  const status = effectiveStatus(item, now);
  const receipt = item.receiptActionKey;
  let detail: string;
  switch (status) {
    case 'approved':
    case 'rejected':
      detail = `${item.actionKey} was already ${status} by ${item.reviewer ?? 'a reviewer'} at ${item.decidedAt} (receipt ${receipt}); a review decision is final`;
      break;
    case 'expired':
      detail =
        `the review window of ${item.actionKey} ended at ${item.expiresAt} without a decision; it failed closed and can no longer be reviewed` +
        (item.status === 'expired' ? ` (expiry receipt ${receipt})` : '');
      break;
    default:
      // Open items are not refused; reaching this is a bug in the caller.
      throw new Error(`review item ${item.actionKey} is ${status}, not refused`);
  }
  return ProblemError.conflict('review_not_pending', detail, {
    reviewed_action_key: item.actionKey,
    review_status: status,
    receipt_action_key: status === 'expired' && item.status !== 'expired' ? null : receipt,
  });
}
