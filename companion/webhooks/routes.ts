/**
 * A webhook target's deliveries (interface-spec "Webhook delivery item", Endpoints):
 * GET …/deliveries lists them newest first with status, attempt_count, last_error and the
 * payload; POST …/replay puts every delivery created in a time range back on the queue with
 * its original evt_ id (dead letters included); POST …/deliveries/{delivery_id}/requeue does
 * the same for one failed or dead-lettered delivery.
 */
import { ProblemError } from '../core/errors.ts';
import { retryPlan } from '../core/jobs/backoff.ts';
import { createRouter, defineRoute, jsonBody, jsonContent, problemContent, z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import { TARGET_PATTERN } from '../integrations/routes.ts';
import type { DeliveryRow, DeliveryStatus } from './store.ts';

const Params = z.object({
  target: z.string().max(63).regex(TARGET_PATTERN).openapi({ param: { name: 'target', in: 'path' }, example: 'ops-alerts' }),
});

/** The spec's three states; a dead letter is a failed delivery that will not be retried. */
const SpecStatus = z.enum(['pending', 'delivered', 'failed']);
const STORED: Record<z.infer<typeof SpecStatus>, DeliveryStatus[]> = { pending: ['pending'], delivered: ['delivered'], failed: ['failed', 'dead'] };

const Delivery = z
  .object({
    id: z.string().openapi({ description: 'X-Service-Id: the same on every attempt; receivers dedupe on it' }),
    event: z.string(),
    status: SpecStatus,
    dead_lettered: z.boolean().openapi({ description: 'Failed its last attempt: no retry is scheduled until it is replayed' }),
    attempt_count: z.number().int(),
    last_error: z.string().nullable(),
    last_attempt_at: z.string().nullable(),
    next_attempt_at: z.string().nullable(),
    created_at: z.string(),
    completed_at: z.string().nullable(),
    payload: z.record(z.string(), z.unknown()).openapi({ description: 'The delivered JSON body' }),
  })
  .openapi('WebhookDelivery');

const Endpoint = z
  .object({
    state: z.enum(['enabled', 'disabled', 'auto_disabled']),
    disabled_at: z.string().nullable(),
    disabled_reason: z.string().nullable(),
    consecutive_failures: z.number().int(),
  })
  .openapi('WebhookEndpointState');

function view(row: DeliveryRow): z.infer<typeof Delivery> {
  const retrying = row.status === 'pending' || row.status === 'failed';
  return {
    id: row.id,
    event: row.event,
    status: row.status === 'dead' ? 'failed' : row.status,
    dead_lettered: row.status === 'dead',
    attempt_count: row.attempt_count,
    last_error: row.last_error,
    last_attempt_at: row.last_attempt_at,
    next_attempt_at: retrying ? new Date(row.run_at).toISOString() : null,
    created_at: row.created_at,
    completed_at: row.completed_at,
    payload: JSON.parse(row.body) as Record<string, unknown>,
  };
}

const Timestamp = z.iso.datetime({ offset: true }).max(40).openapi({ example: '2025-01-01T00:00:00.000Z' });

export function webhookRoutes(deps: RouteDeps) {
  const router = createRouter();

  const requireTarget = async (tenantId: string, target: string) => {
    const row = await deps.store.integrations.find(tenantId, 'webhook', target);
    if (!row) throw ProblemError.notFound(`no webhook target ${target} for this tenant`);
    return row;
  };

  const list = defineRoute({
    method: 'get',
    path: '/tenant/integrations/webhook/{target}/deliveries',
    operationId: 'listWebhookDeliveries',
    tags: ['webhooks'],
    auth: deps.auth.keyOrSession('integrations:manage'),
    summary: 'Deliveries of a webhook target, newest first',
    request: {
      params: Params,
      query: z
        .object({
          status: SpecStatus.optional(),
          limit: z.coerce.number().int().min(1).max(100).default(50),
          offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
        })
        .strict(),
    },
    responses: {
      200: jsonContent(
        z
          .object({
            target: z.string(),
            endpoint: Endpoint,
            retry_plan: z.object({ max_attempts: z.number().int(), jitter: z.number(), delays_seconds: z.array(z.number()) }),
            deliveries: z.array(Delivery),
            limit: z.number().int(),
            offset: z.number().int(),
          })
          .openapi('WebhookDeliveryList'),
        'The page of deliveries',
      ),
      404: problemContent('Unknown webhook target'),
    },
  });
  router.openapi(list, async (c) => {
    const { target } = c.req.valid('param');
    const { status, limit, offset } = c.req.valid('query');
    const tenantId = c.var.auth.tenantId;
    const row = await requireTarget(tenantId, target);
    const rows = await deps.store.webhooks.listDeliveries({ tenantId, target, ...(status ? { statuses: STORED[status] } : {}), limit, offset });
    return c.json(
      {
        target,
        endpoint: {
          state: row.disabledAt ? ('auto_disabled' as const) : row.enabled ? ('enabled' as const) : ('disabled' as const),
          disabled_at: row.disabledAt,
          disabled_reason: row.disabledReason,
          consecutive_failures: row.consecutiveFailures,
        },
        retry_plan: retryPlan(deps.webhooks.queue.schedule),
        deliveries: rows.map(view),
        limit,
        offset,
      },
      200,
    );
  });

  const replay = defineRoute({
    method: 'post',
    path: '/tenant/integrations/webhook/{target}/replay',
    operationId: 'createWebhookReplay',
    tags: ['webhooks'],
    auth: deps.auth.keyOrSession('integrations:manage'),
    summary: 'Send again every delivery created in [from, to), with its original id (requeues dead letters)',
    request: {
      params: Params,
      body: jsonBody(
        z
          .object({
            from: Timestamp,
            to: Timestamp,
            status: SpecStatus.optional().openapi({ description: 'Only deliveries in this state (failed includes dead letters); all when omitted' }),
          })
          .strict()
          .refine((b) => Date.parse(b.from) < Date.parse(b.to), { message: 'from must be before to', path: ['to'] }),
      ),
    },
    responses: {
      200: jsonContent(z.object({ target: z.string(), requeued: z.number().int() }).openapi('WebhookReplay'), 'How many deliveries were put back on the queue'),
      404: problemContent('Unknown webhook target'),
    },
  });
  router.openapi(replay, async (c) => {
    const { target } = c.req.valid('param');
    const body = c.req.valid('json');
    const tenantId = c.var.auth.tenantId;
    await requireTarget(tenantId, target);
    const statuses = body.status ? STORED[body.status] : (['pending', 'delivered', 'failed', 'dead'] as DeliveryStatus[]);
    // created_at is RFC 3339 UTC with milliseconds, so normalised bounds compare as text.
    const from = new Date(body.from).toISOString();
    const to = new Date(body.to).toISOString();
    const requeued = await deps.store.transaction(async (tx) => {
      const ids = await tx.webhooks.deliveriesInRange(tenantId, target, from, to, statuses);
      return deps.webhooks.queue.requeue(tx, ids, deps.clock.now());
    });
    if (requeued > 0) deps.webhooks.worker.wake();
    return c.json({ target, requeued }, 200);
  });

  const requeue = defineRoute({
    method: 'post',
    path: '/tenant/integrations/webhook/{target}/deliveries/{delivery_id}/requeue',
    operationId: 'submitWebhookDeliveryRequeue',
    tags: ['webhooks'],
    auth: deps.auth.keyOrSession('integrations:manage'),
    summary: 'Send one failed or dead-lettered delivery again now, with its original id and a fresh retry plan',
    request: {
      params: Params.extend({
        delivery_id: z.string().max(64).regex(/^evt_[0-9A-Za-z]{1,60}$/).openapi({ param: { name: 'delivery_id', in: 'path' }, example: 'evt_01JD3Z8Q4W6K2M9N7P5R3T1V0X' }),
      }),
    },
    responses: {
      200: jsonContent(Delivery, 'The delivery, pending again: it is sent on the worker’s next run'),
      404: problemContent('Unknown webhook target or delivery'),
      409: problemContent('The delivery is pending, being attempted right now, or delivered: nothing to requeue'),
    },
  });
  router.openapi(requeue, async (c) => {
    const { target, delivery_id: id } = c.req.valid('param');
    const tenantId = c.var.auth.tenantId;
    await requireTarget(tenantId, target);
    const row = await deps.store.transaction(async (tx) => {
      const found = await tx.webhooks.findDelivery(tenantId, target, id);
      if (!found) throw ProblemError.notFound(`no delivery ${id} for webhook target ${target}`);
      // Only a delivery that failed can be requeued: a pending one is already due, a delivered
      // one reached its receiver (replay a time range to send it again), and a leased one is
      // being attempted now (the queue leaves it alone).
      const requeueable = (found.status === 'failed' || found.status === 'dead') && found.lease_owner === null;
      if (!requeueable || (await deps.webhooks.queue.requeue(tx, [id], deps.clock.now())) === 0) {
        const state = found.lease_owner !== null ? 'being attempted' : found.status;
        throw ProblemError.conflict('delivery_not_requeueable', `delivery ${id} is ${state}; only a failed or dead-lettered delivery is requeued`, { delivery_status: found.status === 'dead' ? 'failed' : found.status });
      }
      return (await tx.webhooks.findDelivery(tenantId, target, id))!;
    });
    deps.webhooks.worker.wake();
    return c.json(view(row), 200);
  });

  return router;
}
