/**
 * The routing capability's part of every seal (interface-spec States and transitions):
 *
 * - a needs_review gate decision whose review route names an enabled chat, workflow or
 *   webhook target gets its route dispatch, pending, in the seal's own transaction, so a
 *   dispatch exists exactly when its paused action does;
 * - a review receipt (POST /v1/reviews or a signed callback) resolves the reviewed action's
 *   dispatch in the same transaction, with decision metadata and, for callbacks, the
 *   caller's external_reference.
 *
 * A browser route has no dispatch: its reviewers read GET /active-manifest.
 */
import type { Clock } from '../core/clock.ts';
import type { IdFactory } from '../core/ids.ts';
import type { SealParticipant } from '../evidence/participants.ts';
import type { IntegrationStore } from '../integrations/store.ts';
import { dispatchPayload } from './dispatch-payload.ts';
import { DISPATCH_CHANNELS } from './store.ts';
import type { DispatchChannel, NewDispatch, Resolution, RoutingStore } from './store.ts';

/** How a signed callback marks the review it seals (evidence/sealer.ts SealRequest.annotations). */
export function callbackAnnotations(externalReference: Resolution['external_reference']): Record<string, unknown> {
  return { review_via: 'callback', external_reference: externalReference };
}

function resolutionSource(annotations: Readonly<Record<string, unknown>> | undefined): Pick<Resolution, 'via' | 'external_reference'> {
  if (annotations?.review_via !== 'callback') return { via: 'review_api', external_reference: null };
  return { via: 'callback', external_reference: (annotations.external_reference as Resolution['external_reference']) ?? null };
}

/** The stores of the seal's (or the escalation's) transaction that routing writes through. */
export interface RoutingTx {
  readonly routing: RoutingStore;
  readonly integrations: IntegrationStore;
}

export interface RoutingParticipantDeps {
  ids: IdFactory;
  clock: Clock;
  baseUrl: string;
  /** Called after a dispatch is enqueued (the send worker's wake-up); must only schedule. */
  onEnqueued?: () => void;
}

export function parseReviewRoute(route: string): { channel: DispatchChannel; target: string } | undefined {
  const at = route.indexOf(':');
  const channel = route.slice(0, at) as DispatchChannel;
  return at > 0 && DISPATCH_CHANNELS.includes(channel) ? { channel, target: route.slice(at + 1) } : undefined;
}

export function routingParticipant(deps: RoutingParticipantDeps): SealParticipant {
  return {
    name: 'routing',
    async sealed({ request, record }, tx) {
      if (request.kind === 'review') {
        const reviewed = request.context?.reviewed_action_key;
        const reviewer = request.context?.reviewer;
        if (typeof reviewed !== 'string' || typeof reviewer !== 'string' || request.decision === null) return;
        await tx.routing.resolve(record.tenantId, reviewed, record.recordedAt, {
          decision: request.decision,
          reviewer,
          receipt_action_key: record.actionKey,
          ...resolutionSource(request.annotations),
        });
        return;
      }
      const pause = request.pauseForReview;
      if (!pause || request.reviewRoute === null) return;
      const action: PausedAction = {
        tenantId: record.tenantId,
        actionKey: record.actionKey,
        pack: record.pack,
        actionType: pause.actionType,
        reviewRoute: request.reviewRoute,
        evidencePacketHref: record.packet.href,
        nextStep: pause.nextStep,
        createdAt: record.recordedAt,
      };
      const dispatch = await routeDispatch(deps, action, tx);
      if (dispatch && (await tx.routing.insert(dispatch))) deps.onEnqueued?.();
    },
  };
}

export interface PausedAction {
  tenantId: string;
  actionKey: string;
  pack: string;
  actionType: string;
  reviewRoute: string;
  evidencePacketHref: string;
  nextStep: string;
  createdAt: string;
}

/**
 * The dispatch of a paused action to its review route, or undefined when the route is not an
 * enabled chat, workflow or webhook target of the tenant (a browser route has none).
 */
export async function routeDispatch(deps: RoutingParticipantDeps, action: PausedAction, tx: RoutingTx, dispatchKey = deps.ids.next('dsp')): Promise<NewDispatch | undefined> {
  const route = parseReviewRoute(action.reviewRoute);
  if (!route) return undefined;
  const integration = await tx.integrations.find(action.tenantId, route.channel, route.target);
  if (!integration || !integration.enabled || integration.disabledAt !== null) return undefined;
  const body = dispatchPayload(
    { ...action, dispatchKey, channel: route.channel, target: route.target, baseUrl: deps.baseUrl },
    JSON.parse(integration.config) as Record<string, unknown>,
  );
  return {
    id: dispatchKey,
    tenantId: action.tenantId,
    actionKey: action.actionKey,
    channel: route.channel,
    target: route.target,
    body: JSON.stringify(body),
    runAt: deps.clock.now().getTime(),
    createdAt: action.createdAt,
  };
}
