/**
 * The route outbox (interface-spec "Routing and integrations", States and transitions "Route
 * dispatch …"): GET /routing/outbox lists the tenant's raw-safe dispatch records newest first;
 * POST …/{dispatch_key}/deliver and POST /routing/outbox/process prepare payloads for
 * inspection (pending → prepared), never posting anything; only the send worker posts, and
 * only under SVC_OUTBOX_EXTERNAL_SEND=1. Dead letters are listed and requeued here, beside
 * the tenant's own run receipts of the send worker (never the service-wide queue's).
 */
import { ProblemError } from '../core/errors.ts';
import { retryPlan } from '../core/jobs/backoff.ts';
import { createRouter, defineRoute, jsonContent, problemContent, z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import { DISPATCH_QUEUE } from './service.ts';
import type { DispatchRow } from './store.ts';

/** Most dispatches one POST /routing/outbox/process prepares; call again for the rest. */
export const PROCESS_BATCH = 500;

const DispatchKey = z
  .string()
  .max(64)
  .regex(/^dsp_[0-9A-Z]{26}$/, 'expected a dispatch_key such as dsp_01JD3Q8Z5V7N4M2K6H8G0F1E2D')
  .openapi({ param: { name: 'dispatch_key', in: 'path' }, example: 'dsp_01JD3Q8Z5V7N4M2K6H8G0F1E2D' });

const Resolution = z
  .object({
    resolved_at: z.string(),
    decision: z.string(),
    reviewer: z.string(),
    receipt_action_key: z.string(),
    via: z.enum(['review_api', 'callback']),
    external_reference: z.record(z.string(), z.union([z.string(), z.number()])).nullable(),
  })
  .openapi('RouteDispatchResolution');

export const RouteDispatch = z
  .object({
    dispatch_key: z.string(),
    action_key: z.string(),
    channel: z.enum(['chat', 'workflow', 'webhook']),
    target: z.string(),
    status: z.enum(['pending', 'prepared', 'sent', 'failed']).openapi({ description: 'prepared: built for inspection, never posted; sent: posted by the worker under the external-send flag' }),
    dead_lettered: z.boolean(),
    attempt_count: z.number().int(),
    last_error: z.string().nullable(),
    last_attempt_at: z.string().nullable(),
    next_attempt_at: z.string().nullable(),
    created_at: z.string(),
    prepared_at: z.string().nullable(),
    completed_at: z.string().nullable(),
    resolution: Resolution.nullable().openapi({ description: 'The review decision that resolved the dispatch (decision metadata and external_reference only)' }),
    payload: z.record(z.string(), z.unknown()).openapi({ description: 'The delivery payload: the exact JSON body prepared and sent' }),
  })
  .openapi('RouteDispatch');

export function dispatchView(row: DispatchRow): z.infer<typeof RouteDispatch> {
  const resolution = row.resolution === null ? null : { resolved_at: row.resolved_at!, ...(JSON.parse(row.resolution) as Omit<z.infer<typeof Resolution>, 'resolved_at'>) };
  const waiting = (row.status === 'pending' || row.status === 'failed') && row.resolved_at === null;
  return {
    dispatch_key: row.id,
    action_key: row.action_key,
    channel: row.channel,
    target: row.target,
    status: row.status === 'dead' ? 'failed' : row.status === 'pending' && row.prepared_at !== null ? 'prepared' : row.status,
    dead_lettered: row.status === 'dead',
    attempt_count: row.attempt_count,
    last_error: row.last_error,
    last_attempt_at: row.last_attempt_at,
    next_attempt_at: waiting ? new Date(row.run_at).toISOString() : null,
    created_at: row.created_at,
    prepared_at: row.prepared_at,
    completed_at: row.completed_at,
    resolution,
    payload: JSON.parse(row.body) as Record<string, unknown>,
  };
}

const Page = {
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
};

const DispatchList = z
  .object({
    external_send: z.boolean().openapi({ description: 'SVC_OUTBOX_EXTERNAL_SEND: whether the worker posts dispatches out' }),
    retry_plan: z.object({ max_attempts: z.number().int(), jitter: z.number(), delays_seconds: z.array(z.number()) }),
    dispatches: z.array(RouteDispatch),
    limit: z.number().int(),
    offset: z.number().int(),
  })
  .openapi('RouteDispatchList');

export function routingRoutes(deps: RouteDeps) {
  const router = createRouter();
  const listBody = async (tenantId: string, deadOnly: boolean, limit: number, offset: number) => ({
    external_send: deps.config.outboxExternalSend,
    retry_plan: retryPlan(deps.routing.queue.schedule),
    dispatches: (await deps.store.routing.list({ tenantId, deadOnly, limit, offset })).map(dispatchView),
    limit,
    offset,
  });
  const requireDispatch = async (tenantId: string, key: string) => {
    const row = await deps.store.routing.find(tenantId, key);
    // interface-spec Authentication 6: another tenant's dispatch answers like a missing one.
    if (!row) throw ProblemError.notFound(`no route dispatch ${key} for this tenant`);
    return row;
  };

  const list = defineRoute({
    method: 'get',
    path: '/routing/outbox',
    operationId: 'listRouteDispatches',
    tags: ['routing'],
    auth: deps.auth.keyOrSession('integrations:manage'),
    summary: 'Raw-safe route dispatch records, newest first',
    request: { query: z.object(Page).strict() },
    responses: { 200: jsonContent(DispatchList, 'The page of dispatches') },
  });
  router.openapi(list, async (c) => {
    const { limit, offset } = c.req.valid('query');
    return c.json(await listBody(c.var.auth.tenantId, false, limit, offset), 200);
  });

  const deadLetters = defineRoute({
    method: 'get',
    path: '/routing/outbox/dead-letters',
    operationId: 'listRouteDeadLetters',
    tags: ['routing'],
    auth: deps.auth.keyOrSession('integrations:manage'),
    summary: 'Dispatches quarantined after their last failed attempt, newest first',
    request: { query: z.object(Page).strict() },
    responses: { 200: jsonContent(DispatchList, 'The page of dead letters') },
  });
  router.openapi(deadLetters, async (c) => {
    const { limit, offset } = c.req.valid('query');
    return c.json(await listBody(c.var.auth.tenantId, true, limit, offset), 200);
  });

  const process = defineRoute({
    method: 'post',
    path: '/routing/outbox/process',
    operationId: 'submitRouteOutboxRun',
    tags: ['routing'],
    auth: deps.auth.keyOrSession('integrations:manage'),
    summary: 'Prepares every pending dispatch for inspection; posts nothing (the worker sends, under the external-send flag)',
    responses: {
      200: jsonContent(
        z
          .object({
            prepared: z.array(z.string()).openapi({ description: 'dispatch_keys moved from pending to prepared' }),
            remaining: z.boolean().openapi({ description: `true when more than ${PROCESS_BATCH} were pending: call again` }),
            external_send: z.boolean(),
            worker: z.enum(['sending', 'off']).openapi({ description: 'sending: the worker was woken and posts due dispatches; off: nothing leaves the service' }),
          })
          .openapi('RouteOutboxRun'),
        'What this run prepared',
      ),
    },
  });
  router.openapi(process, async (c) => {
    const tenantId = c.var.auth.tenantId;
    const at = deps.clock.now().toISOString();
    const due = await deps.store.routing.unprepared(tenantId, PROCESS_BATCH + 1);
    const prepared = await deps.store.transaction(async (tx) => {
      const marked: string[] = [];
      for (const key of due.slice(0, PROCESS_BATCH)) if (await tx.routing.markPrepared(tenantId, key, at)) marked.push(key);
      return marked;
    });
    const remaining = due.length > PROCESS_BATCH;
    if (deps.config.outboxExternalSend) deps.routing.worker.wake();
    return c.json({ prepared, remaining, external_send: deps.config.outboxExternalSend, worker: deps.config.outboxExternalSend ? ('sending' as const) : ('off' as const) }, 200);
  });

  const deliver = defineRoute({
    method: 'post',
    path: '/routing/outbox/{dispatch_key}/deliver',
    operationId: 'submitRouteDispatchDelivery',
    tags: ['routing'],
    auth: deps.auth.keyOrSession('integrations:manage'),
    summary: 'Prepares the platform payload for inspection: status prepared, never posted externally',
    request: { params: z.object({ dispatch_key: DispatchKey }) },
    responses: { 200: jsonContent(RouteDispatch, 'The dispatch; prepared unless it was already sent or failed'), 404: problemContent('No such dispatch for this tenant') },
  });
  router.openapi(deliver, async (c) => {
    const { dispatch_key: key } = c.req.valid('param');
    const tenantId = c.var.auth.tenantId;
    await requireDispatch(tenantId, key);
    await deps.store.routing.markPrepared(tenantId, key, deps.clock.now().toISOString());
    return c.json(dispatchView(await requireDispatch(tenantId, key)), 200);
  });

  const requeue = defineRoute({
    method: 'post',
    path: '/routing/outbox/{dispatch_key}/requeue',
    operationId: 'createRouteDispatchRequeue',
    tags: ['routing'],
    auth: deps.auth.keyOrSession('integrations:manage'),
    summary: 'Puts a dead-lettered or failed dispatch back on the queue with a fresh retry plan',
    request: { params: z.object({ dispatch_key: DispatchKey }) },
    responses: {
      200: jsonContent(RouteDispatch, 'The dispatch, pending again'),
      404: problemContent('No such dispatch for this tenant'),
      409: problemContent('dispatch_not_requeueable: the dispatch is not failed or dead-lettered, is being sent right now, or its review is decided'),
    },
  });
  router.openapi(requeue, async (c) => {
    const { dispatch_key: key } = c.req.valid('param');
    const tenantId = c.var.auth.tenantId;
    const row = await requireDispatch(tenantId, key);
    const ok = (row.status === 'dead' || row.status === 'failed') && row.resolved_at === null && (await deps.store.transaction((tx) => deps.routing.queue.requeue(tx, [key], deps.clock.now()))) === 1;
    if (!ok) {
      throw ProblemError.conflict('dispatch_not_requeueable', `${key} is ${dispatchView(row).status}${row.resolved_at ? ' and its review is decided' : ''}; only a failed or dead-lettered dispatch of an open review is requeued`);
    }
    if (deps.config.outboxExternalSend) deps.routing.worker.wake();
    return c.json(dispatchView(await requireDispatch(tenantId, key)), 200);
  });

  const ticks = defineRoute({
    method: 'get',
    path: '/routing/outbox/ticks',
    operationId: 'listRouteOutboxTicks',
    tags: ['routing'],
    auth: deps.auth.keyOrSession('integrations:manage'),
    summary: "Run receipts of the route send worker for this tenant's dispatches, newest first",
    description:
      "One receipt per stored batch of the send worker's outcomes that held this tenant's dispatches: how many were attempted and how each ended. Other tenants' dispatches are never counted here; the service-wide queue is an operator's view (GET /metrics).",
    request: { query: z.object({ limit: Page.limit }).strict() },
    responses: {
      200: jsonContent(
        z
          .object({
            queue: z.string(),
            ticks: z.array(
              z.object({
                worker: z.string(),
                started_at: z.string(),
                finished_at: z.string(),
                claimed: z.number().int(),
                succeeded: z.number().int(),
                retrying: z.number().int(),
                dead: z.number().int(),
                lease_lost: z.number().int(),
              }),
            ),
          })
          .openapi('RouteOutboxTicks'),
        'The newest receipts',
      ),
    },
  });
  router.openapi(ticks, async (c) => {
    const { limit } = c.req.valid('query');
    const rows = await deps.store.routing.tenantSendReceipts(c.var.auth.tenantId, limit);
    return c.json({ queue: DISPATCH_QUEUE, ticks: rows }, 200);
  });

  return router;
}
