/**
 * The review window and the status a reader must act on.
 *
 * Fail closed (unanswered reviews end as expired): an item whose window has ended
 * is expired from that instant for every reader and writer, whether or not the expiry
 * receipt has been sealed yet (./expiry.ts seals it at first touch or from the sweep). So
 * correctness never depends on a timer having run: `effectiveStatus` is what the board, the
 * record view and POST /v1/reviews all decide on, and the store's UPDATEs repeat the same
 * deadline condition inside the transaction.
 */
import type { SealedRecord } from '../evidence/sealer.ts';
import { scheduleDueAt } from './rules.ts';
import type { ReviewRule } from './rules.ts';
import type { NewReviewItem, ReviewItem, ReviewStatus, ReviewStore } from './store.ts';

/** The last whole-second sum addSeconds worked out: the seals of one second share it. */
let lastSum = { second: '', seconds: NaN, sum: '' };

/** RFC 3339 UTC with milliseconds, like every timestamp of the evidence format (DESIGN.md §3). */
export function addSeconds(at: string, seconds: number): string {
  // A whole number of seconds leaves the milliseconds as they are: in the form every seal's
  // recorded_at takes (YYYY-MM-DDTHH:MM:SS.mmmZ, core/clock.ts rfc3339), only the whole second
  // needs date arithmetic, and seals sealed within one second share its answer.
  if (at.length === 24 && at.charCodeAt(19) === 46 /* . */ && at.charCodeAt(23) === 90 /* Z */ && Number.isInteger(seconds)) {
    const second = at.slice(0, 19);
    if (lastSum.second !== second || lastSum.seconds !== seconds) {
      const ms = Date.parse(`${second}.000Z`);
      const sum = Number.isNaN(ms) ? '' : new Date(ms + seconds * 1000).toISOString();
      // Past year 9999 toISOString takes another form: left to the general case below.
      if (sum.length !== 24) return new Date(Date.parse(at) + seconds * 1000).toISOString();
      lastSum = { second, seconds, sum: sum.slice(0, 19) };
    }
    return lastSum.sum + at.slice(19);
  }
  return new Date(Date.parse(at) + seconds * 1000).toISOString();
}

/** What the gate knows about a paused action besides its sealed record. */
export interface PausedAction {
  actionType: string;
  reviewRoute: string | null;
  nextStep: string;
  /** The policy's rule for this action type, or null for the default (one approval, no schedule). */
  rule: ReviewRule | null;
}

/**
 * Opens the pending item of a needs_review gate action. Called from the gate seal's
 * `onSealed`, so the item commits atomically with the seal or not at all; its window
 * (SVC_REVIEW_TIMEOUT_SECONDS, default 72 h: core/config.ts) starts at the seal's signed
 * recorded_at and is fixed then: an escalation does not extend it. The review rule is copied
 * onto the item here, so the rule in force stays the one of the pause (./rules.ts).
 */
export async function openReviewItem(store: ReviewStore, record: SealedRecord, paused: PausedAction, windowSeconds: number): Promise<void> {
  await store.openItem(newReviewItem(record, paused, windowSeconds));
}

/** The pending item openReviewItem opens. */
export function newReviewItem(record: SealedRecord, paused: PausedAction, windowSeconds: number): NewReviewItem {
  return {
    tenantId: record.tenantId,
    actionKey: record.actionKey,
    pack: record.pack,
    vertical: record.vertical,
    actionType: paused.actionType,
    reviewRoute: paused.reviewRoute,
    nextStep: paused.nextStep,
    createdAt: record.recordedAt,
    expiresAt: addSeconds(record.recordedAt, windowSeconds),
    windowSeconds,
    rule: paused.rule,
    approvalsRequired: paused.rule?.approvals_required ?? 1,
    // Without a rule (one approval, no reminder or escalation) nothing is ever scheduled.
    scheduleDueAt: paused.rule === null ? null : scheduleDueAt({ createdAt: record.recordedAt, rule: paused.rule, remindedAt: null, escalationLevel: 0 }),
  };
}

export function isOpen(status: ReviewStatus): status is 'pending' | 'escalated' {
  return status === 'pending' || status === 'escalated';
}

/** The item's status at `now`: an open item past its deadline is expired (the deadline itself included). */
export function effectiveStatus(item: ReviewItem, now: string): ReviewStatus {
  return isOpen(item.status) && Date.parse(now) >= Date.parse(item.expiresAt) ? 'expired' : item.status;
}

/** Employee-safe instruction for each status (interface-spec Gate response: next_step). */
export function nextStepFor(item: ReviewItem, status: ReviewStatus): string {
  switch (status) {
    case 'pending':
      return item.nextStep;
    case 'escalated':
      return `Still paused: a reviewer escalated this action. Do not proceed until a reviewer approves it (review window ends ${item.expiresAt}).`;
    case 'approved':
      return 'You may proceed: a reviewer approved this action. The approval is sealed as evidence and linked to your action.';
    case 'rejected':
      return 'Do not proceed: a reviewer rejected this action. The rejection is sealed as evidence; ask your reviewer how to continue.';
    case 'expired':
      return 'Do not proceed: the review window ended without a decision, so this action is closed. Submit it through the gate again if it is still needed.';
  }
}
