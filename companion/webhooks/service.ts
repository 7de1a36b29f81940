/**
 * The webhook capability's moving parts, built once per process: the outbox (written inside
 * seal transactions), the guarded HTTP client, the leased delivery queue and its worker.
 * The worker is started and stopped by the service lifecycle, never by a route.
 *
 * Endpoint health: every stored outcome updates the target's failure streak; a target failing
 * without a break for AUTO_DISABLE_AFTER_SECONDS (and at least AUTO_DISABLE_MIN_FAILURES
 * times) is disabled and says so in readiness and in its deliveries list.
 */
import { rfc3339 } from '../core/clock.ts';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { IdFactory } from '../core/ids.ts';
import { DEFAULT_RETRY_SCHEDULE } from '../core/jobs/backoff.ts';
import { JobQueue } from '../core/jobs/queue.ts';
import { JobWorker } from '../core/jobs/worker.ts';
import type { Logger } from '../core/log.ts';
import type { WorkerStatus } from '../core/worker-status.ts';
import type { SecretResolver } from '../core/secret-refs.ts';
import { createOutboundHttp } from '../net/outbound-http.ts';
import type { OutboundHttp } from '../net/outbound-http.ts';
import type { Store } from '../core/stores.ts';
import { AUTO_DISABLE_AFTER_SECONDS, AUTO_DISABLE_MIN_FAILURES } from './config.ts';
import { attemptDelivery } from './delivery.ts';
import { WebhookOutbox } from './outbox.ts';
import type { DeliveryRow } from './store.ts';
import { enqueueVerifyFailed } from './verify-failed.ts';

export const DELIVERY_QUEUE = 'webhook_deliveries';

export interface WebhookServiceDeps {
  store: Pick<Store, 'webhooks' | 'integrations' | 'transaction' | 'durable'>;
  secrets: SecretResolver;
  clock: Clock;
  ids: IdFactory;
  log: Logger;
  config: Pick<Config, 'webhookAllowLoopback' | 'webhookLeaseSeconds'>;
}

export interface WebhookService {
  outbox: WebhookOutbox;
  queue: JobQueue<DeliveryRow>;
  worker: JobWorker<DeliveryRow>;
  outbound: OutboundHttp;
  /**
   * A verification authenticated with this tenant's key did not pass (interface-spec Events,
   * verify.failed): one delivery per subscribed target, committed together.
   */
  verifyFailed(tenantId: string, packet: { action_key: string; href: string }, failedChecks: readonly string[]): Promise<void>;
  start(): void;
  stop(): Promise<void>;
  status(): WorkerStatus;
}

/**
 * A target the tenant disabled, or the service disabled after sustained failure, keeps its
 * deliveries pending until it is enabled again.
 */
export const DELIVERY_CLAIMABLE = `EXISTS (SELECT 1 FROM tenant_integrations i WHERE i.tenant_id = j.tenant_id AND i.channel = 'webhook'
  AND i.target = j.target AND i.enabled = 1 AND i.disabled_at IS NULL)`;

export function createWebhookService(deps: WebhookServiceDeps): WebhookService {
  const { store, clock, log } = deps;
  const outbound = createOutboundHttp({ allowLoopback: deps.config.webhookAllowLoopback });
  const queue = new JobQueue<DeliveryRow>({
    table: DELIVERY_QUEUE,
    doneStatus: 'delivered',
    schedule: DEFAULT_RETRY_SCHEDULE,
    claimableWhere: DELIVERY_CLAIMABLE,
  });
  const deliveryDeps = { webhooks: store.webhooks, integrations: store.integrations, secrets: deps.secrets, outbound, clock };
  const worker = new JobWorker<DeliveryRow>({
    name: 'webhooks',
    queue,
    store,
    clock,
    log,
    leaseMs: deps.config.webhookLeaseSeconds * 1000,
    durable: () => store.durable(),
    handle: (job, signal, shared) => attemptDelivery(deliveryDeps, job, signal, shared),
    async settled(results, tx) {
      // A target's streak is reset once per run of successes, not once per delivery.
      const reset = new Set<string>();
      for (const { job, stored } of results) {
        const { tenant_id: tenantId, target } = job.row;
        const key = `${tenantId}/${target}`;
        if (stored === 'lease_lost') continue;
        if (stored === 'succeeded') {
          if (!reset.has(key)) await tx.integrations.recordSuccess(tenantId, 'webhook', target);
          reset.add(key);
          continue;
        }
        reset.delete(key);
        const now = clock.now();
        const streak = await tx.integrations.recordFailure(tenantId, 'webhook', target, now.toISOString());
        const failingFor = now.getTime() - Date.parse(streak.failingSince);
        if (streak.consecutiveFailures >= AUTO_DISABLE_MIN_FAILURES && failingFor >= AUTO_DISABLE_AFTER_SECONDS * 1000) {
          const reason = `${streak.consecutiveFailures} consecutive failed attempts since ${streak.failingSince}`;
          await tx.integrations.disable(tenantId, 'webhook', target, now.toISOString(), reason);
          log.warn('webhook target disabled after sustained failure', { tenant_id: tenantId, target, reason });
        }
      }
    },
  });
  const outbox = new WebhookOutbox({ ids: deps.ids, clock });
  outbox.onEnqueued = () => worker.wake();
  return {
    outbox,
    queue,
    worker,
    outbound,
    async verifyFailed(tenantId, packet, failedChecks) {
      const at = rfc3339(clock.now());
      await store.transaction((tx) => enqueueVerifyFailed(outbox, deps.ids, tenantId, packet, failedChecks, at, tx));
    },
    start: () => worker.start(),
    status: () => worker.status(),
    async stop() {
      await worker.stop();
      await outbound.close();
    },
  };
}
