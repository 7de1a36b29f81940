/**
 * POST /v1/reviews and GET /active-manifest (interface-spec Endpoints "Gate, record, review,
 * verify" and "Routing and integrations"; companion/REVIEW-CONTRACT.tmp.md), plus the law
 * grading mirror routes (./mirror-routes.ts), and GET /reviews/insights (./insights.ts). The
 * expiry sweep and the review rules' reminders and escalations (./schedule.ts) run in a
 * background worker started by companion/workers.ts.
 *
 * Order of answers for a review: 422 (body) → 404 (no such record for this tenant, never 403:
 * interface-spec Authentication 6) → 409 review_not_pending (never paused) → 422 (pack) →
 * seal, where the item's state is checked again inside the transaction (409 if decided or
 * expired meanwhile; an expired item gets its expiry receipt sealed first).
 */
import type { Context } from 'hono';
import type { AuthContext } from '../core/auth.ts';
import { rfc3339 } from '../core/clock.ts';
import { PROBLEM_CONTENT_TYPE, ProblemError } from '../core/errors.ts';
import { createRouter, defineRoute, jsonBody, jsonContent, ProblemSchema } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import { evidenceHref } from '../evidence/sealer.ts';
import type { SealOutcome, SealRequest } from '../evidence/sealer.ts';
import { expireReview } from './expiry.ts';
import type { ExpiryDeps } from './expiry.ts';
import { mirrorRoutes } from './mirror-routes.ts';
import { neverPaused, notOpen } from './refusals.ts';
import { assertMirrorTuple, assertPackMatches } from './review-checks.ts';
import { approvedBy } from './record-review.ts';
import type { ApprovedByEntry } from './record-review.ts';
import { attributeToCredential } from './reviewer.ts';
import type { ReviewerAttribution } from './reviewer.ts';
import { reviewInsights } from './insights.ts';
import { ActiveManifest, ActiveManifestQuery, ReviewInsights, ReviewInsightsQuery, ReviewRequest, ReviewResponse } from './schema.ts';
import { sealReview } from './seal-review.ts';
import type { ReviewBody } from './schema.ts';
import type { ReviewItem } from './store.ts';
import { effectiveStatus } from './state.ts';

export const BOARD_DEFAULT_LIMIT = 50;

/**
 * Every review decision goes through here, whatever carried it (POST /v1/reviews, a signed
 * route callback), so the same checks and the same sealing apply to each path. `who` is the
 * decider (./reviewer.ts): from the credential unless the caller (a callback) attributed it.
 */
export async function submitReviewDecision(
  deps: Pick<RouteDeps, 'sealer' | 'store' | 'clock' | 'log'>,
  auth: AuthContext,
  body: ReviewBody,
  /** For the seal's participants only (evidence/sealer.ts SealRequest.annotations). */
  annotations?: SealRequest['annotations'],
  attributed?: ReviewerAttribution,
): Promise<SealOutcome> {
  const expiryDeps: ExpiryDeps = { sealer: deps.sealer, store: deps.store, clock: deps.clock, log: deps.log };
  assertMirrorTuple(body);
  const item = await deps.store.reviews.findItem(auth.tenantId, body.action_key);
  if (!item) {
    const row = await deps.store.evidence.findRecord(auth.tenantId, body.action_key);
    if (!row) throw ProblemError.notFound(`no sealed action ${body.action_key} for this tenant`);
    throw neverPaused(row);
  }
  assertPackMatches(body, item);
  // 422 before anything else is read or sealed when the credential may not name this reviewer.
  const who = attributed ?? (await attributeToCredential(deps.store.account, auth, body.reviewer));
  const reviewed = (await deps.store.evidence.findRecord(auth.tenantId, item.actionKey))!;
  try {
    return await sealReview({ sealer: deps.sealer, reviews: deps.store.reviews }, auth, body, who, item, reviewed, annotations);
  } catch (err) {
    if (!isExpiredRefusal(err)) throw err;
    // First touch after the deadline commits the expiry as evidence, then refuses.
    const after = await expireReview(expiryDeps, item);
    throw notOpen(after, rfc3339(deps.clock.now()));
  }
}

const problem = (description: string) => ({ description, content: { [PROBLEM_CONTENT_TYPE]: { schema: ProblemSchema } } }) as const;

export function reviewRoutes(deps: RouteDeps) {
  const router = createRouter();
  const review = defineRoute({
    method: 'post',
    path: '/v1/reviews',
    operationId: 'recordReview',
    tags: ['reviews'],
    auth: deps.auth.keyOrSession('reviews:decide'),
    summary: 'Record a reviewer’s decision on a paused (needs_review) action as a sealed review receipt',
    description:
      'Seals a review receipt (kind review) linked to the reviewed action: its attestation commits the reviewed action_key and attestation hash. ' +
      'escalated keeps the action paused; rejected is final, and so is approved once the review rule\'s approvals_required different people have approved ' +
      '(each approval is its own receipt; until the last, the action stays paused). The reviewer is the principal behind the credential, sealed as ' +
      'context.principal (id, kind, display name): reviewer absent or naming that principal (its id, or its email in any letter case) decides as itself; naming ' +
      'anyone else is delegation, for a principal holding reviews:delegate only, sealed as context.asserted_by (a name that is one of the tenant\'s people, by id ' +
      'or email, decides as that person, who must hold reviews:decide). Approvals count distinct people, under any spelling of reviewer. ' +
      'A law review may post the mirror tuple (GET /law/grading-mirror); ' +
      'the response then carries mirror_seal, verifiable at POST /law/grading-mirror/verify. The reason is never stored, only committed through payload_hash. ' +
      'A replay of an earlier idempotency_key answers with the original body and the header Idempotent-Replayed: true.',
    request: { body: jsonBody(ReviewRequest) },
    responses: {
      201: jsonContent(ReviewResponse, 'The review receipt, sealed and linked to the reviewed action'),
      404: problem("No such action for this tenant (another tenant's action answers the same)"),
      409: problem(
        'review_not_pending: the action is not paused (an allow or blocked decision, not a gate action), was already approved or rejected, ' +
          'or its review window ended (expired, fail closed); review_status says which. review_duplicate_approver: this person already approved ' +
          'the action (as themselves, named by someone else, or naming someone else) and the rule needs another person (nothing sealed). ' +
          'review_approver_not_a_person: the rule needs several people and this approval counts as none (a delegated name that is no person of ' +
          'the tenant, or a service account as itself; nothing sealed). review_approvals_changed: concurrent reviews kept moving the action ' +
          'while this approval was sealed (nothing sealed; post it again)',
      ),
    },
  });
  router.openapi(review, async (c) => {
    // Keys and sessions alike: the credential's principal decides (./reviewer.ts).
    return answer(c, await submitReviewDecision(deps, c.var.auth, c.req.valid('json')));
  });

  const board = defineRoute({
    method: 'get',
    path: '/active-manifest',
    operationId: 'listPendingReviews',
    tags: ['reviews'],
    auth: deps.auth.keyOrSession('records:read'),
    summary: 'The live board of the tenant’s paused actions and their review routes (raw-safe), oldest first',
    description:
      'What a browser reviewer reads: every action paused for review (pending or escalated) whose review window is still running. ' +
      'Keys, decisions, action types, routes, hrefs, next steps, age and expiry only; never prompt or document text. ' +
      'approved_by lists who has approved each item so far, as principals: a person named there (principal_id or asserted_by.principal_id) cannot approve it again.',
    request: { query: ActiveManifestQuery },
    responses: { 200: jsonContent(ActiveManifest, 'Paused actions, oldest first') },
  });
  // Who approved an item so far: read only for items with approvals (N-of-M rules), the rest have none.
  const approvalsShown = async (item: ReviewItem) => (item.approvals === 0 ? [] : approvedBy(await deps.store.reviews.receiptsFor(item.tenantId, item.actionKey)));
  router.openapi(board, async (c) => {
    const { route, limit: rawLimit, pack, action_type: actionType, min_age_seconds: minAge, cursor } = c.req.valid('query');
    const limit = rawLimit === undefined ? BOARD_DEFAULT_LIMIT : Number(rawLimit);
    const now = deps.clock.now();
    const at = rfc3339(now);
    const createdBefore = minAge === undefined ? undefined : rfc3339(new Date(now.getTime() - Number(minAge) * 1000));
    const after = cursor === undefined ? undefined : decodeBoardCursor(cursor);
    const rows = await deps.store.reviews.listOpen(c.var.auth.tenantId, at, { route, pack, actionType, createdBefore, after, limit: limit + 1 });
    const summary = await reviewInsights(deps.store.reviews, c.var.auth.tenantId, now, null);
    const shown = rows.slice(0, limit);
    const shared = await deps.store.reviewContexts.countContexts(c.var.auth.tenantId, shown.map((i) => i.actionKey));
    c.header('cache-control', 'no-store');
    return c.json(
      {
        tenant_id: c.var.auth.tenantId,
        generated_at: at,
        route: route ?? null,
        limit,
        truncated: rows.length > limit,
        next_cursor: rows.length > limit ? encodeBoardCursor(rows[limit - 1]!) : null,
        raw_content_stored: false as const,
        items: await Promise.all(shown.map(async (item) => boardItem(item, now, await approvalsShown(item), shared.has(item.actionKey)))),
        insights: summary,
      },
      200,
    );
  });

  const insights = defineRoute({
    method: 'get',
    path: '/reviews/insights',
    operationId: 'getReviewInsights',
    tags: ['reviews'],
    auth: deps.auth.keyOrSession('records:read'),
    summary: 'How the tenant’s reviews are going: pending, oldest pending age, time to decide, approval rate, rejected, escalated, expired',
    description:
      'Over the review items (paused actions) of the tenant, tenant-wide and per action type; since keeps items paused at or after it. ' +
      'Times to decide run from the pause to the approving or rejecting receipt, as nearest-rank percentiles in whole seconds.',
    request: { query: ReviewInsightsQuery },
    responses: { 200: jsonContent(ReviewInsights, 'The summary, tenant-wide and per action type') },
  });
  router.openapi(insights, async (c) => {
    const { since } = c.req.valid('query');
    c.header('cache-control', 'no-store');
    const from = since === undefined ? null : new Date(since).toISOString();
    return c.json(await reviewInsights(deps.store.reviews, c.var.auth.tenantId, deps.clock.now(), from), 200);
  });

  router.route('/', mirrorRoutes(deps));
  return router;
}

function boardItem(item: ReviewItem, now: Date, approved: ApprovedByEntry[], contextShared: boolean) {
  const status = effectiveStatus(item, now.toISOString());
  return {
    action_key: item.actionKey,
    pack: item.pack,
    vertical: item.vertical,
    action_type: item.actionType,
    decision: 'needs_review' as const,
    // listOpen returns only items open at `now`; the narrowing is for the type.
    status: status === 'escalated' ? ('escalated' as const) : ('pending' as const),
    review_route: item.reviewRoute,
    href: evidenceHref(item.vertical, item.actionKey),
    record_href: `/v1/records/${item.actionKey}`,
    next_step: item.nextStep,
    created_at: item.createdAt,
    age_seconds: Math.max(0, Math.floor((now.getTime() - Date.parse(item.createdAt)) / 1000)),
    expires_at: item.expiresAt,
    expires_in_seconds: Math.max(0, Math.floor((Date.parse(item.expiresAt) - now.getTime()) / 1000)),
    escalation_count: item.escalationCount,
    approvals: item.approvals,
    approvals_required: item.approvalsRequired,
    escalation_level: item.escalationLevel,
    reminded_at: item.remindedAt,
    approved_by: approved,
    review_context: contextShared ? ('available' as const) : ('not_shared' as const),
  };
}

/** The board's page cursor: the last item shown, as base64url JSON [created_at, action_key]. */
function encodeBoardCursor(item: ReviewItem): string {
  return Buffer.from(JSON.stringify([item.createdAt, item.actionKey]), 'utf8').toString('base64url');
}

function decodeBoardCursor(cursor: string): { createdAt: string; actionKey: string } {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string') return { createdAt: v[0], actionKey: v[1] };
  } catch {
    // Not ours: refused below like any other malformed cursor.
  }
  throw ProblemError.validation([{ in: 'query', path: '/cursor', message: 'expected the next_cursor of a previous page', code: 'invalid_cursor' }]);
}

function isExpiredRefusal(err: unknown): boolean {
  return err instanceof ProblemError && err.code === 'review_not_pending' && err.extra.review_status === 'expired';
}

/** 201 with the sealed body; a replay carries Idempotent-Replayed (draft-ietf-httpapi-idempotency-key-header). */
function answer(c: Context, outcome: SealOutcome) {
  if (outcome.replayed) c.header('idempotent-replayed', 'true');
  return c.json(outcome.body as never, outcome.status as 201);
}
