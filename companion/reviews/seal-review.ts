/**
 * One review decision, from validated body to sealed review receipt (interface-spec States and
 * transitions: "needs_review → review decision recorded; review receipt sealed").
 *
 * The receipt goes through the one sealing pipeline (deps.sealer) as kind `review`, and the
 * item's transition happens in `onSealed`, inside the seal's transaction: the receipt and the
 * new status commit together or not at all. The status is re-checked there (the store's UPDATE
 * carries the condition), against the receipt's own signed recorded_at, so of two concurrent
 * reviews exactly one commits and a receipt can never be signed after the window ended.
 *
 * Linking: the receipt's attestation commits the reviewed action_key and that action's
 * attestation hash, so the pair is bound by signatures, not only by our tables.
 *
 * Raw-safe: the reason is never stored. It is committed only through payload_hash (the whole
 * body minus idempotency_key, DESIGN.md §3), which the reviewer's copy of the body re-proves;
 * the mirror tuple is a version, a digest and five enum values.
 *
 * Approvals under a review rule (./rules.ts) of more than one approval: each approval is its own
 * receipt, and the item stays open until the approvals_required-th approval from as many
 * distinct reviewers, which releases it in its own seal transaction. Such a receipt commits
 * `approval` in its signed context: the rule's count, its own number, whether it releases, and
 * the earlier approval receipts, so the releasing receipt alone evidences every approver. The
 * item must still be as read when the receipt commits (status and count, checked in the UPDATE);
 * when a concurrent review moved it, the approval is prepared again from the new state, a few
 * times, nothing of the failed attempt having been sealed.
 *
 * Who decided (./reviewer.ts) is sealed in the receipt's context: `principal` (the principal the
 * decision is attributed to: the credential's own, or the person a delegated identity maps to;
 * null when unmapped) and, for delegation and callbacks, `asserted_by`. Approvals count distinct
 * people: one person never supplies two approvals to an action, whether as themselves, named by
 * someone else, or naming someone else with their own credential (409 review_duplicate_approver,
 * nothing sealed); under a rule of more than one approval an approval that counts as no person
 * (an unmapped delegated identity, a service account as itself) is refused with 409
 * review_approver_not_a_person, nothing sealed. The store's unique indexes (migrations/0018)
 * hold the same under any interleaving.
 */
import { payloadCommitment } from '../../shared/attestation.ts';
import type { AuthContext } from '../core/auth.ts';
import { ProblemError } from '../core/errors.ts';
import type { SealedRecord, SealOutcome, SealPipeline, SealRequest } from '../evidence/sealer.ts';
import type { SealedRecordRow } from '../evidence/store.ts';
import { MIRROR_VERIFY_PATH } from './mirror.ts';
import type { MirrorTuple } from './mirror.ts';
import { notOpen } from './refusals.ts';
import type { ReviewerAttribution } from './reviewer.ts';
import type { ReviewBody } from './schema.ts';
import { effectiveStatus, isOpen } from './state.ts';
import type { OpenStatus, ReviewDecision, ReviewItem, ReviewReceiptRow, ReviewStore } from './store.ts';

/** One scope for every review submission path (HTTP today; signed callbacks reuse it). */
export const REVIEW_IDEMPOTENCY_SCOPE = 'POST /v1/reviews';

export interface ReviewSealDeps {
  sealer: SealPipeline;
  reviews: ReviewStore;
}

const NEXT_STEP: Record<ReviewDecision, (item: ReviewItem) => string> = {
  approved: () => 'Approved and sealed. The person who paused this action may proceed; the receipt is linked to the action.',
  rejected: () => 'Rejected and sealed. The action must not proceed; the person who paused it is told to stop.',
  escalated: (item) =>
    `Escalated and sealed. The action stays paused until a reviewer approves or rejects it; the review window still ends at ${item.expiresAt}.`,
};

/** How often an approval is prepared again after a concurrent review moved the item. */
const APPROVAL_ATTEMPTS = 3;

/** The item moved between reading it and sealing the approval; prepare the approval again. */
class ApprovalsMoved extends Error {
  constructor() {
    super('the review item changed while the approval was sealed');
    this.name = 'ApprovalsMoved';
  }
}

export async function sealReview(
  deps: ReviewSealDeps,
  auth: AuthContext,
  body: ReviewBody,
  who: ReviewerAttribution,
  item: ReviewItem,
  reviewed: SealedRecordRow,
  annotations?: SealRequest['annotations'],
): Promise<SealOutcome> {
  let current = item;
  for (let attempt = 1; ; attempt++) {
    try {
      return await sealOnce(deps, auth, body, who, current, reviewed, annotations);
    } catch (err) {
      if (!(err instanceof ApprovalsMoved)) throw err;
      if (attempt >= APPROVAL_ATTEMPTS) {
        throw ProblemError.conflict('review_approvals_changed', `${item.actionKey} kept changing while this approval was sealed; nothing was sealed, post it again`, {
          reviewed_action_key: item.actionKey,
        });
      }
      current = (await deps.reviews.findItem(item.tenantId, item.actionKey))!;
    }
  }
}

/** The status an item reads after this decision, and the approval count with it. */
interface Outcome {
  status: 'approved' | 'rejected' | 'escalated' | OpenStatus;
  approvals: number;
}

async function sealOnce(
  deps: ReviewSealDeps,
  auth: AuthContext,
  body: ReviewBody,
  who: ReviewerAttribution,
  item: ReviewItem,
  reviewed: SealedRecordRow,
  annotations: SealRequest['annotations'],
): Promise<SealOutcome> {
  const { hash } = payloadCommitment(body);
  const mirror = mirrorTuple(body);
  const approving = body.decision === 'approved';
  const prior = approving ? await approvalsOf(deps.reviews, item) : [];
  // Before anything is signed. A second approval by the same person is refused in the seal's
  // transaction (applyDecision), after the sealer has answered an idempotent replay.
  if (approving && item.approvalsRequired > 1 && who.countsAs === null) throw notAPerson(item);
  const approvals = item.approvals + (approving ? 1 : 0);
  const releases = approving && approvals >= item.approvalsRequired;
  const after: Outcome = {
    status: approving && !releases && isOpen(item.status) ? item.status : body.decision,
    approvals,
  };
  const nextStep = after.status === body.decision ? NEXT_STEP[body.decision](item) : partialStep(item, approvals);
  // Single-approval receipts keep exactly the attestation they always had.
  const approval =
    approving && item.approvalsRequired > 1
      ? {
          approvals_required: item.approvalsRequired,
          approval_number: approvals,
          releases,
          counts_as: who.countsAs,
          prior_approvals: prior.map((r) => ({ action_key: r.receiptActionKey, reviewer: r.reviewer, counts_as: r.countsAs })),
        }
      : undefined;

  return deps.sealer.seal({
    auth,
    ...(annotations ? { annotations } : {}),
    vertical: item.vertical,
    actionType: 'review',
    pack: item.pack,
    kind: 'review',
    decision: body.decision,
    status: 'reviewed',
    reviewRoute: null,
    payloadHash: hash,
    // A human decision: no pack manifest or tenant policy shaped it.
    manifestDigest: null,
    policyDigest: null,
    context: {
      reviewed_action_key: item.actionKey,
      reviewed_attestation_hash: reviewed.attestationHash,
      reviewed_decision: reviewed.decision,
      reviewed_review_route: item.reviewRoute,
      review_expires_at: item.expiresAt,
      reviewer: who.reviewer,
      principal: who.decidedBy,
      ...(who.assertedBy ? { asserted_by: who.assertedBy } : {}),
      ...(approval ? { approval } : {}),
      ...(mirror ? { mirror } : {}),
    },
    details: {
      action_type: 'review',
      reviewed_action_key: item.actionKey,
      reviewer: who.reviewer,
      principal: who.decidedBy,
      ...(who.assertedBy ? { asserted_by: who.assertedBy } : {}),
      review_status: after.status,
      next_step: nextStep,
      ...(item.approvalsRequired > 1 ? { approvals: after.approvals, approvals_required: item.approvalsRequired } : {}),
    },
    // A receipt about an action already sealed and metered, not a new sealed action.
    metering: { counted: false, credits: 0 },
    ...(body.idempotency_key !== undefined
      ? { idempotency: { scope: REVIEW_IDEMPOTENCY_SCOPE, key: body.idempotency_key, requestHash: hash } }
      : {}),
    onSealed: (record, tx) => applyDecision(tx.reviews, item, body, who, record),
    respond: (record) => ({
      action_key: record.actionKey,
      reviewed_action_key: item.actionKey,
      decision: body.decision,
      review_status: after.status,
      approvals: after.approvals,
      approvals_required: item.approvalsRequired,
      reviewer: who.reviewer,
      principal: who.decidedBy,
      asserted_by: who.assertedBy,
      evidence_packet: record.packet,
      payload_hash: hash,
      review_route: null,
      verify_request: record.verifyRequest,
      next_step: nextStep,
      expires_at: item.expiresAt,
      ...(mirror ? { mirror_seal: mirrorSeal(mirror, who, item, record) } : {}),
    }),
  });
}

function partialStep(item: ReviewItem, approvals: number): string {
  return (
    `Approval ${approvals} of ${item.approvalsRequired} sealed. The action stays paused until ${item.approvalsRequired} different people ` +
    `have approved it; the review window still ends at ${item.expiresAt}.`
  );
}

async function approvalsOf(reviews: ReviewStore, item: ReviewItem): Promise<ReviewReceiptRow[]> {
  return (await reviews.receiptsFor(item.tenantId, item.actionKey)).filter((r) => r.decision === 'approved');
}

/** Inside the seal's transaction: the item moves, or the whole seal of this request rolls back. */
async function applyDecision(reviews: ReviewStore, item: ReviewItem, body: ReviewBody, who: ReviewerAttribution, record: SealedRecord): Promise<void> {
  const at = record.recordedAt;
  const fresh = (await reviews.findItem(item.tenantId, item.actionKey))!;
  if (!isOpen(effectiveStatus(fresh, at))) throw notOpen(fresh, at);
  if (body.decision === 'approved') {
    const earlier = (await approvalsOf(reviews, fresh)).find((r) => r.reviewer === who.reviewer || samePerson(r, who));
    if (earlier) throw duplicateApprover(fresh, earlier);
    const expected = { status: item.status as OpenStatus, approvals: item.approvals };
    if (!(await reviews.approve(item.tenantId, item.actionKey, { reviewer: who.reviewer, at, receiptActionKey: record.actionKey, expected }))) throw new ApprovalsMoved();
  } else {
    const moved = await reviews.decide(item.tenantId, item.actionKey, { decision: body.decision, reviewer: who.reviewer, at, receiptActionKey: record.actionKey });
    if (!moved) throw notOpen((await reviews.findItem(item.tenantId, item.actionKey))!, at);
  }
  const asserted = who.assertedBy;
  await reviews.addReceipt({
    receiptActionKey: record.actionKey,
    tenantId: item.tenantId,
    reviewedActionKey: item.actionKey,
    decision: body.decision,
    reviewer: who.reviewer,
    recordedAt: at,
    principalId: who.credential?.principal_id ?? null,
    principalName: who.credential?.display_name ?? null,
    countsAs: who.countsAs,
    countsAsName: who.countsAs === null ? null : (who.decidedBy?.display_name ?? null),
    asserted: asserted !== null,
    assertedRoute: asserted && 'route' in asserted ? asserted.route : null,
    identityProvider: asserted && 'route' in asserted ? asserted.provider : null,
    identitySubject: asserted && 'route' in asserted ? asserted.subject : null,
    actingPerson: who.actingPerson,
  });
}

/**
 * Whether an earlier approval and this one involve the same person: the person either counts
 * as, or the person whose own credential made either. One person, one approval, however the
 * reviewer was spelled.
 */
function samePerson(r: ReviewReceiptRow, who: ReviewerAttribution): boolean {
  const theirs = [r.countsAs, r.actingPerson].filter((p): p is string => p !== null);
  return [who.countsAs, who.actingPerson].some((p) => p !== null && theirs.includes(p));
}

/** 409: under a rule of several approvals, each must count as a distinct person. */
function notAPerson(item: ReviewItem): ProblemError {
  return ProblemError.conflict(
    'review_approver_not_a_person',
    `${item.actionKey} needs approvals from ${item.approvalsRequired} different people, and this approval counts as none: its reviewer is not one of the tenant's ` +
      'people (a delegated name that maps to no person, or a service account as itself). Nothing was sealed.',
    { reviewed_action_key: item.actionKey, review_status: item.status, approvals: item.approvals, approvals_required: item.approvalsRequired },
  );
}

/** 409: a person's approval counts once; four-eyes needs another person. */
function duplicateApprover(item: ReviewItem, earlier: ReviewReceiptRow): ProblemError {
  return ProblemError.conflict(
    'review_duplicate_approver',
    `${item.actionKey} already has an approval by the same person or reviewer (receipt ${earlier.receiptActionKey}); ${item.approvalsRequired} different people must approve it, ` +
      `${item.approvals} have`,
    {
      reviewed_action_key: item.actionKey,
      review_status: item.status,
      approvals: item.approvals,
      approvals_required: item.approvalsRequired,
      receipt_action_key: earlier.receiptActionKey,
    },
  );
}

function mirrorTuple(body: ReviewBody): MirrorTuple | undefined {
  // The route admits the tuple only whole and only for law (./review-checks.ts).
  if (body.mirror_grades === undefined || body.mirror_version === undefined || body.mirror_digest === undefined) return undefined;
  return { mirror_version: body.mirror_version, mirror_digest: body.mirror_digest, mirror_grades: body.mirror_grades };
}

/**
 * The mirror seal is the review receipt itself: the tuple sits in its signed attestation
 * (context.mirror), so tuple and decision are one atomic, signed fact. This object carries
 * the tuple beside the receipt's verify request, ready to POST to MIRROR_VERIFY_PATH.
 */
function mirrorSeal(mirror: MirrorTuple, who: ReviewerAttribution, item: ReviewItem, record: SealedRecord) {
  return {
    format: 'svc.law-mirror-seal/v1',
    ...mirror,
    reviewed_action_key: item.actionKey,
    review_action_key: record.actionKey,
    principal: who.decidedBy,
    asserted_by: who.assertedBy,
    committed_in: 'verify_request.seal.attestation.context.mirror',
    verify_href: MIRROR_VERIFY_PATH,
    verify_request: record.verifyRequest,
  };
}
