/**
 * Signed route callbacks (interface-spec "Routing and integrations", "Review callback body",
 * Authentication 3), no API key:
 *
 * POST /integrations/callbacks/{tenant_id}/{channel}/{target}/review-decision
 *   The platform posts the reviewer's decision. It is recorded through the same function as
 *   POST /v1/reviews (reviews/routes.ts submitReviewDecision), so every rule of the reviews
 *   capability applies; the seal resolves the dispatch with the decision metadata and the
 *   caller's external_reference. Only an action routed to this very route can be decided
 *   here: another route's or another tenant's action answers 404 and nothing changes.
 *   A callback is delegation by its route: the signed body names its platform user
 *   (platform_user: Slack user.id on a chat route, a ServiceNow sys_user on a workflow route),
 *   recorded in the receipt, and the decision is the person that user is linked to
 *   (account/identities.ts; reviews/reviewer.ts). An unnamed or unlinked user seals nothing:
 *   403 platform_user_not_linked, with a Slack view_submission answer for a chat route.
 *
 * POST /integrations/callbacks/{tenant_id}/chat/{target}/open-review-modal
 *   Slack's block_actions interactivity request, exactly as Slack sent it (form field
 *   `payload`), forwarded by the tenant's chat app. Answers the views.open request the app
 *   sends with its own bot token: {trigger_id, view} with the prepared modal. Nothing is
 *   called and no token is involved here; it reads two rows, well inside Slack's
 *   three-second acknowledgement window.
 */
import { boundedRecord } from '../../core/bounds.ts';
import { PROBLEM_CONTENT_TYPE, ProblemError } from '../../core/errors.ts';
import { createRouter, defineRoute, jsonBody, jsonContent, ProblemSchema, z } from '../../core/router.ts';
import type { RouteDeps } from '../../core/app-deps.ts';
import { IdentityProvider, IdentitySubject } from '../../account/identities.ts';
import { attributeToPlatformUser } from '../../reviews/reviewer.ts';
import { submitReviewDecision } from '../../reviews/routes.ts';
import { MirrorGradesSchema, ReviewRequest, ReviewResponse } from '../../reviews/schema.ts';
import type { ReviewBody } from '../../reviews/schema.ts';
import { REVIEW_DECISIONS } from '../../reviews/store.ts';
import { TARGET_PATTERN } from '../../integrations/routes.ts';
import { IdempotencyKey } from '../../evidence/idempotency/schema.ts';
import { OPEN_REVIEW_ACTION_ID } from '../config.ts';
import { callbackAnnotations } from '../participant.ts';
import type { DispatchRow } from '../store.ts';
import { signedCallback } from './signed-request.ts';
import type { CallbackRoute } from './signed-request.ts';

const problem = (description: string) => ({ description, content: { [PROBLEM_CONTENT_TYPE]: { schema: ProblemSchema } } }) as const;

const TenantId = z
  .string()
  .max(64)
  .regex(/^ten_[0-9A-Z]{26}$/)
  .openapi({ param: { name: 'tenant_id', in: 'path' }, example: 'ten_01JD3Q8Z5V7N4M2K6H8G0F1E2D' });
const Target = z.string().max(63).regex(TARGET_PATTERN).openapi({ param: { name: 'target', in: 'path' }, example: 'privacy-office' });
const Key = z.string().min(1).max(200);

export const ReviewCallbackBody = z
  .strictObject({
    dispatch_key: z.string().max(64).regex(/^dsp_[0-9A-Z]{26}$/).optional().openapi({ description: 'Required unless action_key is given' }),
    action_key: Key.optional().openapi({ description: 'Otherwise resolved from the dispatch_key' }),
    decision: z.enum(REVIEW_DECISIONS),
    reviewer: z
      .string()
      .min(1)
      .max(200)
      .regex(/\S/, { error: 'expected a reviewer identifier, got only whitespace' })
      .regex(/^\P{Cc}+$/u, { error: 'control characters are not allowed' }),
    reason: z.string().max(2000).optional().openapi({ description: 'Never stored: committed only through the review receipt payload_hash' }),
    external_reference: boundedRecord(z.string().max(64), z.union([z.string().max(200), z.number()]), 10)
      .optional()
      .openapi({ description: 'Ids from the external system, e.g. {"sys_id": "…", "number": "SCTASK0010001"}; stored as decision metadata' }),
    platform_user: z
      .strictObject({ provider: IdentityProvider, subject: IdentitySubject })
      .optional()
      .openapi({
        description:
          'Who decided on the platform: provider slack:<team_id> and subject the user.id of the view_submission on a chat route; servicenow:<instance> ' +
          'and the sys_user sys_id on a workflow route. The decision is the person this user is linked to (POST /account/people/{person_id}/identities); ' +
          'without it, or unlinked, nothing is sealed (403 platform_user_not_linked)',
      }),
    mirror_version: z.string().max(64).optional(),
    mirror_digest: z.string().max(128).optional(),
    mirror_grades: MirrorGradesSchema.optional(),
    idempotency_key: IdempotencyKey.optional(),
  })
  .refine((b) => b.dispatch_key !== undefined || b.action_key !== undefined, { message: 'dispatch_key is required unless action_key is given', path: ['dispatch_key'] })
  .openapi('ReviewCallbackBody');

const SlackForm = z
  .object({ payload: z.string().min(1).max(100_000).openapi({ description: 'The interactivity payload: JSON of a block_actions request' }) })
  .strict();

const ViewsOpenEnvelope = z
  .object({
    method: z.literal('views.open'),
    url: z.literal('https://slack.com/api/views.open'),
    content_type: z.literal('application/json; charset=utf-8'),
    body: z.object({ trigger_id: z.string(), view: z.record(z.string(), z.unknown()) }),
    bot_token_included: z.literal(false).openapi({ description: 'The tenant app adds Authorization: Bearer <its bot token>; the service never sees it' }),
    raw_content_stored: z.literal(false),
  })
  .openapi('ViewsOpenEnvelope');

/** The block_actions fields read here (Slack "block_actions payloads"); the rest is ignored. */
const BlockActions = z.looseObject({
  type: z.literal('block_actions'),
  trigger_id: z.string().min(1).max(200),
  actions: z.array(z.looseObject({ action_id: z.string(), value: z.string().optional() })).min(1).max(25),
});

export function callbackRoutes(deps: RouteDeps) {
  const router = createRouter();
  const auth = signedCallback(deps);

  /** A dispatch of this route, for this tenant; anything else is "not found" (Authentication 6). */
  const dispatchOf = async (route: CallbackRoute, key: string): Promise<DispatchRow> => {
    const row = await deps.store.routing.find(route.tenantId, key);
    if (!row || row.channel !== route.channel || row.target !== route.target) throw ProblemError.notFound(`no dispatch ${key} on this route`);
    return row;
  };

  const decision = defineRoute({
    method: 'post',
    path: '/integrations/callbacks/{tenant_id}/{channel}/{target}/review-decision',
    operationId: 'submitReviewCallback',
    tags: ['routing'],
    auth,
    summary: 'A signed review decision from a chat, workflow or webhook route, sealed as a review receipt',
    request: {
      params: z.object({ tenant_id: TenantId, channel: z.enum(['chat', 'workflow', 'webhook']).openapi({ param: { name: 'channel', in: 'path' } }), target: Target }),
      body: jsonBody(ReviewCallbackBody),
    },
    responses: {
      201: jsonContent(
        z.object({ dispatch_key: z.string().nullable(), external_reference: z.record(z.string(), z.union([z.string(), z.number()])).nullable(), review: ReviewResponse }).openapi('ReviewCallbackResponse'),
        'The review receipt, sealed; the dispatch is resolved',
      ),
      403: problem(
        'platform_user_not_linked: the callback names no platform_user, or one no person of the tenant who may decide is linked to; nothing sealed. ' +
          'On a chat route the problem carries slack_response, a view_submission answer (response_action errors) for the app to return to Slack',
      ),
      404: problem('No such dispatch or paused action on this route of this tenant'),
      409: problem('review_not_pending, review_duplicate_approver (as POST /v1/reviews), or callback_replayed: this signed request was already accepted'),
    },
  });
  router.openapi(decision, async (c) => {
    const route = c.var.callback;
    const body = c.req.valid('json');
    let dispatch: DispatchRow | undefined;
    if (body.dispatch_key !== undefined) {
      dispatch = await dispatchOf(route, body.dispatch_key);
      if (body.action_key !== undefined && body.action_key !== dispatch.action_key) {
        throw ProblemError.validation([{ in: 'body', path: '/action_key', code: 'custom', message: `${body.dispatch_key} is the dispatch of another action` }]);
      }
    }
    const actionKey = dispatch?.action_key ?? body.action_key!;
    const item = await deps.store.reviews.findItem(route.tenantId, actionKey);
    // Only an action routed here is decided here, whether or not a dispatch was written.
    if (!item || item.reviewRoute !== `${route.channel}:${route.target}`) throw ProblemError.notFound(`no paused action ${actionKey} on this route`);
    dispatch ??= await deps.store.routing.findByAction(route.tenantId, actionKey);
    const tenant = (await deps.store.tenants.getTenant(route.tenantId))!;
    // The body POST /v1/reviews would have received, checked by its own schema.
    const checked = ReviewRequest.safeParse({
      pack: item.pack,
      action_key: actionKey,
      reviewer: body.reviewer,
      decision: body.decision,
      reason: body.reason,
      mirror_grades: body.mirror_grades,
      mirror_version: body.mirror_version,
      mirror_digest: body.mirror_digest,
      idempotency_key: body.idempotency_key,
    });
    if (!checked.success) throw ProblemError.fromZod(checked.error, 'body');
    const review: ReviewBody = Object.fromEntries(Object.entries(checked.data).filter(([, v]) => v !== undefined)) as ReviewBody;
    const auth = { tenantId: route.tenantId, tenantKind: tenant.kind, keyId: `callback:${route.channel}:${route.target}` };
    // The route vouches for its platform user; the decision is that user's linked person or nothing.
    const who = await attributeToPlatformUser(deps.store.account, route, body.platform_user, body.reviewer);
    const outcome = await submitReviewDecision(deps, auth, review, callbackAnnotations(body.external_reference ?? null), who);
    if (outcome.replayed) c.header('idempotent-replayed', 'true');
    return c.json({ dispatch_key: dispatch?.id ?? null, external_reference: body.external_reference ?? null, review: outcome.body as z.infer<typeof ReviewResponse> }, 201);
  });

  const modal = defineRoute({
    method: 'post',
    path: '/integrations/callbacks/{tenant_id}/chat/{target}/open-review-modal',
    operationId: 'submitReviewModalRequest',
    tags: ['routing'],
    auth,
    summary: "Answers a chat block action with the views.open request of the prepared review modal; calls nothing, holds no bot token",
    request: {
      params: z.object({ tenant_id: TenantId, target: Target }),
      body: { required: true, content: { 'application/x-www-form-urlencoded': { schema: SlackForm } } },
    },
    responses: {
      200: jsonContent(ViewsOpenEnvelope, 'The views.open request for the tenant app to send with its own bot token'),
      404: problem('No such dispatch on this chat route of this tenant'),
      409: problem('callback_replayed: this signed request was already accepted'),
    },
  });
  router.openapi(modal, async (c) => {
    const route = c.var.callback;
    const form = c.req.valid('form');
    let parsed: unknown;
    try {
      parsed = JSON.parse(form.payload);
    } catch {
      parsed = undefined;
    }
    const actions = BlockActions.safeParse(parsed);
    const open = actions.success ? actions.data.actions.find((a) => a.action_id === OPEN_REVIEW_ACTION_ID && a.value !== undefined) : undefined;
    if (!actions.success || !open) {
      throw new ProblemError({
        status: 422,
        code: 'callback_not_understood',
        detail: `expected a block_actions payload with trigger_id and the ${OPEN_REVIEW_ACTION_ID} action carrying a dispatch_key value`,
        errors: [{ in: 'body', path: '/payload', message: 'not a block_actions request for the review modal', code: 'callback_not_understood' }],
      });
    }
    const dispatch = await dispatchOf(route, open.value!);
    const view = (JSON.parse(dispatch.body) as { chat?: { modal_view?: Record<string, unknown> } }).chat?.modal_view;
    if (!view) throw ProblemError.notFound(`no modal prepared for ${dispatch.id}`);
    c.header('cache-control', 'no-store');
    return c.json(
      {
        method: 'views.open' as const,
        url: 'https://slack.com/api/views.open' as const,
        content_type: 'application/json; charset=utf-8' as const,
        body: { trigger_id: actions.data.trigger_id, view },
        bot_token_included: false as const,
        raw_content_stored: false as const,
      },
      200,
    );
  });

  return router;
}
