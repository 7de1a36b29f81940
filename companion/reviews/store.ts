/**
 * What the reviews capability needs from storage, independent of the engine (the SQLite
 * implementation is ./sqlite-store.ts). Every read takes the tenant id from the credential
 * (interface-spec Authentication 6), except the expiry sweep's `listDue`, which works for the
 * service itself across tenants.
 *
 * Raw-safe: an item holds keys, ids, the pack's fixed next-step text and timestamps; never the
 * proposed text and never a reviewer's reason.
 */
import type { ReviewRule } from './rules.ts';

export const OPEN_STATUSES = ['pending', 'escalated'] as const;
export const FINAL_STATUSES = ['approved', 'rejected', 'expired'] as const;
export type OpenStatus = (typeof OPEN_STATUSES)[number];
export type ReviewStatus = OpenStatus | (typeof FINAL_STATUSES)[number];

/** interface-spec "Review request": the decisions a reviewer can post. */
export const REVIEW_DECISIONS = ['approved', 'rejected', 'escalated'] as const;
export type ReviewDecision = (typeof REVIEW_DECISIONS)[number];

/** What a receipt can record: a reviewer's decision, or the service ending an unanswered review. */
export type ReceiptDecision = ReviewDecision | 'expired';

export interface ReviewItem {
  tenantId: string;
  /** The paused gate action. */
  actionKey: string;
  pack: string;
  vertical: string;
  actionType: string;
  reviewRoute: string | null;
  nextStep: string;
  /** As stored; see ./state.ts for the status a reader must act on (lazy expiry). */
  status: ReviewStatus;
  createdAt: string;
  expiresAt: string;
  windowSeconds: number;
  escalationCount: number;
  reviewer: string | null;
  decidedAt: string | null;
  receiptActionKey: string | null;
  /** The rule captured when the action paused (./rules.ts); null: one approval, no schedule. */
  rule: ReviewRule | null;
  approvalsRequired: number;
  /** Approvals sealed so far. */
  approvals: number;
  remindedAt: string | null;
  /** Escalation steps of the rule taken so far; reviewRoute is the last step's route. */
  escalationLevel: number;
  scheduleDueAt: string | null;
}

export type NewReviewItem = Omit<
  ReviewItem,
  'status' | 'escalationCount' | 'reviewer' | 'decidedAt' | 'receiptActionKey' | 'approvals' | 'remindedAt' | 'escalationLevel'
>;

/** One escalation step taken by the scheduler. */
export interface EscalationRow {
  level: number;
  fromRoute: string | null;
  toRoute: string;
  at: string;
}

/** Review insights over one set of items (GET /reviews/insights). */
export interface InsightsRow {
  /** Null for the tenant-wide row. */
  actionType: string | null;
  total: number;
  pending: number;
  oldestPendingAt: string | null;
  approved: number;
  rejected: number;
  expired: number;
  escalated: number;
  medianSecondsToDecide: number | null;
  p90SecondsToDecide: number | null;
}

export interface ReviewReceiptRow {
  receiptActionKey: string;
  tenantId: string;
  reviewedActionKey: string;
  decision: ReceiptDecision;
  reviewer: string | null;
  recordedAt: string;
  /** Who decided (migrations/0018, ./reviewer.ts); null on expiry receipts and receipts sealed before. */
  principalId: string | null;
  principalName: string | null;
  /** The person the decision counts as; null when unmapped (or a service account as itself). */
  countsAs: string | null;
  countsAsName: string | null;
  /** The reviewer was named by someone else: the credential's principal (delegation) or a route. */
  asserted: boolean;
  assertedRoute: string | null;
  identityProvider: string | null;
  identitySubject: string | null;
  /** The person whose own credential made the decision. */
  actingPerson: string | null;
}

/** Who-decided fields of a receipt (./reviewer.ts); absent on a receipt no principal decided (an expiry). */
export type ReceiptAttribution = Pick<
  ReviewReceiptRow,
  'principalId' | 'principalName' | 'countsAs' | 'countsAsName' | 'asserted' | 'assertedRoute' | 'identityProvider' | 'identitySubject' | 'actingPerson'
>;
export type NewReviewReceipt = Omit<ReviewReceiptRow, keyof ReceiptAttribution> & Partial<ReceiptAttribution>;

/** What the board (GET /active-manifest) narrows its open items to, and where a page starts. */
export interface BoardFilter {
  route?: string | undefined;
  pack?: string | undefined;
  actionType?: string | undefined;
  createdBefore?: string | undefined;
  after?: { createdAt: string; actionKey: string } | undefined;
}

export interface ReviewStore {
  /** Opens the item of a needs_review gate action (inside the gate seal's transaction). */
  openItem(item: NewReviewItem): Promise<void>;
  findItem(tenantId: string, actionKey: string): Promise<ReviewItem | undefined>;
  /**
   * Records a reviewer's decision on an open item whose window has not ended at `at`.
   * Returns false (and changes nothing) when the item is not open or its window ended: the
   * caller refuses the review. The condition is in the UPDATE itself, so it holds under any
   * interleaving.
   */
  decide(tenantId: string, actionKey: string, d: { decision: Exclude<ReviewDecision, 'approved'>; reviewer: string; at: string; receiptActionKey: string }): Promise<boolean>;
  /**
   * Records one approval on an open item still in `expected` (status and approvals so far),
   * its window running at `at`; the approval that reaches approvals_required closes it
   * approved. False (nothing changed) when the item moved meanwhile.
   */
  approve(
    tenantId: string,
    actionKey: string,
    d: { reviewer: string; at: string; receiptActionKey: string; expected: { status: OpenStatus; approvals: number } },
  ): Promise<boolean>;
  /** Marks an open item whose window ended by `at` expired; false when it is not (any more). */
  expire(tenantId: string, actionKey: string, at: string, receiptActionKey: string): Promise<boolean>;
  addReceipt(row: NewReviewReceipt): Promise<void>;
  /** The receipts of one reviewed action, oldest first. */
  receiptsFor(tenantId: string, actionKey: string): Promise<ReviewReceiptRow[]>;
  /**
   * Open items whose window is still running at `now`, oldest first (created_at, then the
   * order they were opened in); `route`, `pack` and `actionType` filter exactly,
   * `createdBefore` keeps items paused at or before it, `after` starts past that item (the
   * board's pages).
   */
  listOpen(tenantId: string, now: string, options: BoardFilter & { limit: number }): Promise<ReviewItem[]>;
  /** Open items whose window ended by `now`, across tenants, earliest deadline first. */
  listDue(now: string, limit: number): Promise<ReviewItem[]>;
  /** Open items, window running at `now`, whose reminder or escalation step is due; across tenants. */
  listScheduled(now: string, limit: number): Promise<ReviewItem[]>;
  /** Marks the reminder sent, once: false when it already was or the item is not open. */
  markReminded(tenantId: string, actionKey: string, at: string, scheduleDueAt: string | null): Promise<boolean>;
  /**
   * Takes escalation step `level` (the item must be at level - 1 and open): moves the item to
   * `route` and records the step. False (nothing changed) when the step was already taken.
   */
  escalateRoute(tenantId: string, actionKey: string, step: { level: number; route: string; at: string; scheduleDueAt: string | null }): Promise<boolean>;
  escalationsFor(tenantId: string, actionKey: string): Promise<EscalationRow[]>;
  /** Per action type, then the tenant-wide row; items created at or after `since`; `now` decides lazy expiry. */
  insights(tenantId: string, now: string, since: string | null): Promise<InsightsRow[]>;
  /**
   * The tenant's items changed through another connection to the same database (the sealing
   * thread's, which opens items): what this store remembers of them is forgotten.
   */
  itemsChangedElsewhere(tenantId: string): Promise<void>;
}

/** This capability's member of every store (core/stores.ts: each owner declares its own). */
declare module '../core/stores.ts' {
  interface Stores {
    /** Paused actions awaiting review and their review receipts (reviews capability). */
    readonly reviews: ReviewStore;
  }
}
