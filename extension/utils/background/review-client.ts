/**
 * Reviews: the employee's paused
 * action polls its review through GET /v1/records/{action_key}; a reviewer lists the tenant's
 * pending items (GET /active-manifest) and posts decisions (POST /v1/reviews). Every review
 * outcome counts only once its sealed receipt verified against pinned keys and is bound to the
 * reviewed action.
 */
import type { DecisionEntry, ReviewStatus } from '../db.ts';
import type { DecisionReason, GradingMirror, PendingReview, ReviewDecisionRequest, ReviewDecisionResult, ReviewState, Verification } from '../messages.ts';
import { isRecord } from '../../../shared/attestation.ts';
import { CompanionError } from './companion-api.ts';
import type { CompanionApi } from './companion-api.ts';
import type { DecisionLog } from './decision-log.ts';
import { unverified, verifySealed } from './evidence.ts';
import { readReasons, sealedReasons } from './gate-client.ts';
import type { KeyPins } from './key-pins.ts';

export interface ReviewClientDeps {
  api: CompanionApi;
  pins: KeyPins;
  log: DecisionLog;
  now: () => Date;
}

const REVIEW_STATUSES: readonly ReviewStatus[] = ['pending', 'escalated', 'approved', 'rejected', 'expired'];
const FINAL: readonly ReviewStatus[] = ['approved', 'rejected', 'expired', 'withdrawn'];

export function recordPath(actionKey: string): string {
  return `/v1/records/${encodeURIComponent(actionKey)}`;
}

/** The review state of a paused action; `release` is true once, for a verified approval. */
export async function reviewStatus(deps: ReviewClientDeps, actionKey: string, attemptId: string): Promise<ReviewState> {
  const logged = await deps.log.get(actionKey);
  if (logged === undefined) return state('unknown', { problem: 'This action is not in this browser’s log.' });
  if (logged.review_status !== null && FINAL.includes(logged.review_status) && logged.review_verified !== false) {
    return fromLog(deps, logged, attemptId);
  }

  const record = await deps.api.get(recordPath(actionKey));
  const review = isRecord(record) && isRecord(record.review) ? record.review : null;
  if (review === null) return state('unknown');
  const status = REVIEW_STATUSES.includes(review.status as ReviewStatus) ? (review.status as ReviewStatus) : null;
  if (status === null) return state('unknown', { problem: `unexpected review status ${JSON.stringify(review.status)}` });
  const reviewer = typeof review.reviewer === 'string' ? review.reviewer : null;
  const time = typeof review.decided_at === 'string' ? review.decided_at : deps.now().toISOString();

  if (status !== 'approved' && status !== 'rejected') {
    if (logged.review_status !== status) await deps.log.recordReview(actionKey, { status, reviewer, receiptKey: null, verified: null, time });
    return state(status, { reviewer });
  }

  const receiptKey = typeof review.receipt_action_key === 'string' ? review.receipt_action_key : null;
  const receipt = receiptKey === null ? null : await deps.api.get(recordPath(receiptKey));
  const checked = await verifyReceipt(deps, receipt, actionKey, status);
  await deps.log.recordReview(actionKey, { status, reviewer, receiptKey, verified: checked.verification.verified, time });
  const updated = await deps.log.get(actionKey);
  return updated ? fromLog(deps, updated, attemptId, checked.verification, checked.problem) : state(status, { reviewer, verification: checked.verification });
}

async function fromLog(
  deps: ReviewClientDeps,
  entry: DecisionEntry,
  attemptId: string,
  verification: Verification | null = null,
  problem: string | null = null,
): Promise<ReviewState> {
  const status = entry.review_status ?? 'unknown';
  const v = verification ?? (entry.review_verified === null ? null : { ...unverified(''), verified: entry.review_verified, failed_checks: [], key_status: entry.key_status, dev_key: entry.dev_key });
  let release = false;
  let why = problem;
  if (status === 'approved' && entry.review_verified === true) {
    release = await deps.log.claimRelease(entry.action_key, attemptId);
    if (!release) why = 'This approval was already used to send once; it is not sent again.';
  } else if (status === 'approved') {
    why = why ?? 'The approval’s review receipt did not verify, so nothing was sent.';
  }
  return state(status, { reviewer: entry.reviewer, verification: v, release, problem: why });
}

/**
 * A review receipt counts when its seal verifies, it is a review seal (kind "review") with the
 * decision we were told, and it names the reviewed action inside what is signed.
 */
export async function verifyReceipt(
  deps: Pick<ReviewClientDeps, 'pins'>,
  receipt: unknown,
  reviewedActionKey: string,
  decision: string,
): Promise<{ verification: Verification; problem: string | null }> {
  const verifyRequest = isRecord(receipt) ? receipt.verify_request : undefined;
  if (!isRecord(verifyRequest)) return { verification: unverified('receipt'), problem: 'The review receipt has no verify_request.' };
  const { verification, attestation } = await verifySealed(deps.pins, verifyRequest);
  if (!verification.verified || attestation === null) return { verification, problem: `The review receipt did not verify (${verification.failed_checks.join(', ')}).` };
  const problems: string[] = [];
  if (attestation.kind !== 'review') problems.push(`kind is ${String(attestation.kind)}, expected review`);
  if (attestation.decision !== decision) problems.push(`decision is ${String(attestation.decision)}, expected ${decision}`);
  if (signedReviewedKey(attestation) !== reviewedActionKey) problems.push('it does not name the reviewed action');
  if (problems.length > 0) {
    return { verification: { ...verification, verified: false, failed_checks: [...verification.failed_checks, 'review_binding'] }, problem: `The review receipt is not this action’s: ${problems.join('; ')}.` };
  }
  return { verification, problem: null };
}

/** The reviewed action's key as the review attestation commits to it (attestation.context). */
export function signedReviewedKey(attestation: Record<string, unknown>): string | null {
  const context = isRecord(attestation.context) ? attestation.context : {};
  for (const k of ['reviewed_action_key', 'action_key_reviewed', 'subject_action_key']) {
    if (typeof context[k] === 'string') return context[k];
  }
  return null;
}

export async function pendingReviews(api: CompanionApi): Promise<PendingReview[]> {
  const board = await api.get('/active-manifest?limit=200');
  if (!isRecord(board) || !Array.isArray(board.items)) throw new CompanionError('invalid-answer', 'GET /active-manifest: expected { items: [...] }');
  return board.items.filter(isRecord).map((i) => ({
    action_key: String(i.action_key),
    pack: String(i.pack),
    action_type: String(i.action_type ?? ''),
    decision: String(i.decision ?? 'needs_review'),
    status: i.status === 'escalated' ? 'escalated' : 'pending',
    review_route: typeof i.review_route === 'string' ? i.review_route : null,
    next_step: typeof i.next_step === 'string' ? i.next_step : '',
    created_at: String(i.created_at ?? ''),
    age_seconds: typeof i.age_seconds === 'number' ? i.age_seconds : 0,
    expires_at: typeof i.expires_at === 'string' ? i.expires_at : null,
    approvals: count(i.approvals, 0),
    approvals_required: count(i.approvals_required, 1),
  }));
}

function count(v: unknown, fallback: number): number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : fallback;
}

/**
 * Why a paused action needs review, for the reviewer: the reasons its sealed record carries,
 * kept only for rules its verified seal commits (gate-client.ts, sealedReasons).
 */
export async function reviewReasons(deps: Pick<ReviewClientDeps, 'api' | 'pins'>, actionKey: string): Promise<{ reasons: DecisionReason[]; verified: boolean }> {
  const record = await deps.api.get(recordPath(actionKey));
  if (!isRecord(record)) throw new CompanionError('invalid-answer', `GET ${recordPath(actionKey)}: expected the sealed record`);
  const { verification, attestation } = await verifySealed(deps.pins, record.verify_request);
  const bound = attestation !== null && record.action_key === actionKey;
  return { reasons: bound ? sealedReasons(readReasons(record.reasons), attestation) : [], verified: verification.verified && bound };
}

/** GET /law/grading-mirror; null when the companion does not offer it. */
export async function gradingMirror(api: CompanionApi): Promise<GradingMirror | null> {
  try {
    const m = await api.getPublic('/law/grading-mirror');
    if (isRecord(m) && typeof m.mirror_version === 'string' && typeof m.mirror_digest === 'string') {
      return { mirror_version: m.mirror_version, mirror_digest: m.mirror_digest };
    }
    return null;
  } catch (e) {
    if (e instanceof CompanionError && e.kind === 'http-error' && e.status === 404) return null;
    throw e;
  }
}

export async function postReview(
  deps: ReviewClientDeps,
  req: ReviewDecisionRequest,
  reviewer: string,
  mirror: GradingMirror | null,
  idempotencyKey: string,
): Promise<ReviewDecisionResult> {
  const body: Record<string, unknown> = {
    pack: req.pack,
    action_key: req.action_key,
    // Left out, the companion seals the authenticated principal as the reviewer.
    ...(reviewer !== '' ? { reviewer } : {}),
    decision: req.decision,
    ...(req.reason ? { reason: req.reason } : {}),
    ...(req.mirror_grades && req.pack === 'law' ? { mirror_grades: req.mirror_grades, ...(mirror ?? {}) } : {}),
    idempotency_key: idempotencyKey,
  };
  const answer = await deps.api.post('/v1/reviews', body);
  if (!isRecord(answer) || typeof answer.action_key !== 'string') throw new CompanionError('invalid-answer', 'POST /v1/reviews: expected the sealed review receipt');
  const { verification, problem } = await verifyReceipt(deps, answer, req.action_key, req.decision);
  await deps.log.recordReviewReceipt({
    action_key: answer.action_key,
    reviewed_action_key: req.action_key,
    decision: req.decision,
    reviewer: typeof answer.reviewer === 'string' ? answer.reviewer : reviewer,
    time: deps.now().toISOString(),
    verified: verification.verified,
    key_status: verification.key_status,
  });
  if (problem !== null) verification.failed_checks.push(problem);
  return {
    receipt_action_key: answer.action_key,
    decision: typeof answer.decision === 'string' ? answer.decision : req.decision,
    review_status: typeof answer.review_status === 'string' ? answer.review_status : req.decision,
    approvals: count(answer.approvals, 0),
    approvals_required: count(answer.approvals_required, 1),
    verification,
  };
}

function state(status: ReviewState['status'], rest: Partial<Omit<ReviewState, 'status'>> = {}): ReviewState {
  return { status, reviewer: null, release: false, verification: null, problem: null, ...rest };
}
