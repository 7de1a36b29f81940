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
import { syncOf } from '../core/async-store.ts';
import type { SealBatch, SealContext, SealParticipant } from '../evidence/participants.ts';
import type { IntegrationRow, IntegrationStore } from '../integrations/store.ts';
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
    sealed(seal, tx, batch) {
      const { request, record } = seal;
      if (request.kind === 'review') {
        const reviewed = request.context?.reviewed_action_key;
        const reviewer = request.context?.reviewer;
        if (typeof reviewed !== 'string' || typeof reviewer !== 'string' || request.decision === null) return;
        return tx.routing
          .resolve(record.tenantId, reviewed, record.recordedAt, {
            decision: request.decision,
            reviewer,
            receipt_action_key: record.actionKey,
            ...resolutionSource(request.annotations),
          })
          .then(() => undefined);
      }
      if (!request.pauseForReview || request.reviewRoute === null) return;
      // Paused actions of a batch mostly share their route: it is parsed, and its integration
      // read, once.
      const routed = batchRoute(batch, tx, record.tenantId, request.reviewRoute);
      if (routed === null) return;
      const { route, integration } = routed;
      if (integration instanceof Promise) return integration.then((found) => (dispatchable(found) ? enqueue(deps, seal, route, found, tx) : undefined));
      // No enabled integration on the route: nothing is written.
      if (dispatchable(integration)) return enqueue(deps, seal, route, integration, tx);
    },
  };
}

/** Inserts the dispatch of a paused action (a gate seal with pauseForReview and a review route). */
async function enqueue(deps: RoutingParticipantDeps, { request, record }: SealContext, route: Route, integration: IntegrationRow, tx: RoutingTx): Promise<void> {
  const action: PausedAction = {
    tenantId: record.tenantId,
    actionKey: record.actionKey,
    pack: record.pack,
    actionType: request.pauseForReview!.actionType,
    reviewRoute: request.reviewRoute!,
    evidencePacketHref: record.packet.href,
    nextStep: request.pauseForReview!.nextStep,
    createdAt: record.recordedAt,
  };
  if (await tx.routing.insert(dispatchTo(deps, action, route, integration, deps.ids.next('dsp')))) deps.onEnqueued?.();
}

type Route = { channel: DispatchChannel; target: string };

type Found = IntegrationRow | undefined;

/**
 * A review route parsed, and the tenant's integration on it as this batch's transaction sees
 * it, read once per batch (SealBatch reads: read again after a request's own writes), without a
 * promise where the store answers synchronously (core/async-store.ts syncOf); null for a route
 * with no dispatch (a browser route: its reviewers read GET /active-manifest).
 */
function batchRoute(batch: SealBatch, tx: RoutingTx, tenantId: string, reviewRoute: string): { route: Route; integration: Found | Promise<Found> } | null {
  const tenants = batch.reads('routing', () => new Map<string, Map<string, { route: Route; integration: Found | Promise<Found> } | null>>());
  let routes = tenants.get(tenantId);
  if (!routes) tenants.set(tenantId, (routes = new Map()));
  let routed = routes.get(reviewRoute);
  if (routed === undefined) {
    const route = parseReviewRoute(reviewRoute);
    const integrations = syncOf(tx.integrations);
    routed = !route
      ? null
      : { route, integration: integrations ? integrations.find(tenantId, route.channel, route.target) : tx.integrations.find(tenantId, route.channel, route.target) };
    routes.set(reviewRoute, routed);
  }
  return routed;
}

function dispatchable(integration: IntegrationRow | undefined): integration is IntegrationRow {
  return integration !== undefined && integration.enabled && integration.disabledAt === null;
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
  return dispatchable(integration) ? dispatchTo(deps, action, route, integration, dispatchKey) : undefined;
}

/** The dispatch of `action` through its route's enabled integration. */
function dispatchTo(deps: RoutingParticipantDeps, action: PausedAction, route: Route, integration: IntegrationRow, dispatchKey: string): NewDispatch {
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
