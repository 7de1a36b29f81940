/**
 * The routing capability's moving parts, built once per process (deps.ts): the seal
 * participant that writes dispatches, the leased send queue over route_dispatches with its
 * worker (the same machinery as event webhooks: lease, retry plan with backoff, dead letter,
 * tick run receipts), and the guarded client. workers.ts starts the worker only under
 * SVC_OUTBOX_EXTERNAL_SEND=1; without it nothing is ever posted out.
 */
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { IdFactory } from '../core/ids.ts';
import { DEFAULT_RETRY_SCHEDULE } from '../core/jobs/backoff.ts';
import { JobQueue } from '../core/jobs/queue.ts';
import { JobWorker } from '../core/jobs/worker.ts';
import type { SettledJob } from '../core/jobs/worker.ts';
import type { Logger } from '../core/log.ts';
import type { WorkerStatus } from '../core/worker-status.ts';
import type { SealParticipant } from '../evidence/participants.ts';
import { evidenceHref } from '../evidence/sealer.ts';
import type { SecretResolver } from '../core/secret-refs.ts';
import type { OutboundHttp } from '../net/outbound-http.ts';
import type { Store } from '../core/stores.ts';
import { routeDispatch, routingParticipant } from './participant.ts';
import type { PausedAction, RoutingTx } from './participant.ts';

/** What an escalated review item tells routing (the fields of reviews' ReviewItem it reads). */
export type EscalatedItem = Omit<PausedAction, 'reviewRoute' | 'evidencePacketHref' | 'createdAt'> & { vertical: string; reviewRoute: string | null };
import { attemptDispatch } from './send.ts';
import type { DispatchRow, TenantSendReceipt } from './store.ts';

export const DISPATCH_QUEUE = 'route_dispatches';
/** Send receipts kept per tenant (about: pruned now and then). */
export const SEND_RECEIPTS_KEPT = 1000;

/**
 * Each tenant's share of a batch of stored outcomes: how many of its dispatches were attempted
 * and how each ended, from when the earliest of them was claimed (its lease's start).
 */
export function sendReceipts(results: readonly SettledJob<DispatchRow>[], leaseMs: number, now: Date): TenantSendReceipt[] {
  const byTenant = new Map<string, TenantSendReceipt>();
  for (const { job, stored } of results) {
    const tenantId = job.row.tenant_id;
    const claimedAt = new Date(job.leaseExpiresAt - leaseMs).toISOString();
    let r = byTenant.get(tenantId);
    if (!r) byTenant.set(tenantId, (r = { tenantId, worker: job.owner, startedAt: claimedAt, finishedAt: now.toISOString(), claimed: 0, succeeded: 0, retrying: 0, dead: 0, leaseLost: 0 }));
    if (claimedAt < r.startedAt) r.startedAt = claimedAt;
    r.claimed++;
    if (stored === 'succeeded') r.succeeded++;
    else if (stored === 'retrying') r.retrying++;
    else if (stored === 'dead') r.dead++;
    else r.leaseLost++;
  }
  return [...byTenant.values()];
}

export interface RoutingServiceDeps {
  store: Pick<Store, 'integrations' | 'webhooks' | 'durable' | 'transaction'>;
  secrets: SecretResolver;
  clock: Clock;
  ids: IdFactory;
  log: Logger;
  /** The one guarded client for tenant URLs (net/outbound-http.ts), owned and closed by the webhook service. */
  outbound: OutboundHttp;
  config: Pick<Config, 'webhookLeaseSeconds' | 'outboxExternalSend' | 'publicBaseUrl'>;
}

export interface RoutingService {
  participant: SealParticipant;
  /**
   * An escalation step (reviews/schedule.ts) moved a paused action to the item's new review
   * route: its dispatch goes there, under the same dispatch_key. Runs in the caller's
   * transaction, writing through its `tx`.
   */
  onEscalated(item: EscalatedItem, at: string, tx: RoutingTx): Promise<void>;
  queue: JobQueue<DispatchRow>;
  worker: JobWorker<DispatchRow>;
  outbound: OutboundHttp;
  externalSend: boolean;
  start(): void;
  stop(): Promise<void>;
  status(): WorkerStatus;
}

/** A decided review needs no message; a disabled route keeps its dispatches until enabled. */
export const DISPATCH_CLAIMABLE = `j.resolved_at IS NULL AND EXISTS (SELECT 1 FROM tenant_integrations i WHERE i.tenant_id = j.tenant_id
  AND i.channel = j.channel AND i.target = j.target AND i.enabled = 1 AND i.disabled_at IS NULL)`;

export function createRoutingService(deps: RoutingServiceDeps): RoutingService {
  const { store, clock, outbound } = deps;
  const queue = new JobQueue<DispatchRow>({
    table: DISPATCH_QUEUE,
    doneStatus: 'sent',
    schedule: DEFAULT_RETRY_SCHEDULE,
    claimableWhere: DISPATCH_CLAIMABLE,
  });
  const externalSend = deps.config.outboxExternalSend;
  const leaseMs = deps.config.webhookLeaseSeconds * 1000;
  const worker = new JobWorker<DispatchRow>({
    name: 'route-outbox',
    queue,
    store,
    clock,
    log: deps.log,
    leaseMs,
    durable: () => store.durable(),
    handle: (job, signal) =>
      attemptDispatch({ integrations: store.integrations, webhooks: store.webhooks, secrets: deps.secrets, outbound, clock, externalSend }, job, signal),
    async settled(results, tx) {
      for (const { job, stored } of results) {
        const { tenant_id: tenantId, channel, target } = job.row;
        if (stored === 'succeeded') await tx.integrations.recordSuccess(tenantId, channel, target);
        else if (stored !== 'lease_lost') await tx.integrations.recordFailure(tenantId, channel, target, clock.now().toISOString());
      }
      // The queue's tick receipts (job_ticks) count every tenant's dispatches together; each
      // tenant is shown only its own share (GET /routing/outbox/ticks).
      await tx.routing.recordSendReceipts(sendReceipts(results, leaseMs, clock.now()), SEND_RECEIPTS_KEPT);
    },
  });
  const participantDeps = {
    ids: deps.ids,
    clock,
    baseUrl: deps.config.publicBaseUrl,
    onEnqueued: () => worker.wake(),
  };
  const participant = routingParticipant(participantDeps);
  return {
    participant,
    async onEscalated(item, at, tx) {
      if (item.reviewRoute === null) return;
      const action: PausedAction = {
        tenantId: item.tenantId,
        actionKey: item.actionKey,
        pack: item.pack,
        actionType: item.actionType,
        reviewRoute: item.reviewRoute,
        evidencePacketHref: evidenceHref(item.vertical, item.actionKey),
        nextStep: item.nextStep,
        createdAt: at,
      };
      const existing = await tx.routing.findByAction(item.tenantId, item.actionKey);
      const dispatch = await routeDispatch(participantDeps, action, tx, existing?.id);
      if (dispatch && (await tx.routing.retarget(dispatch))) worker.wake();
    },
    queue,
    worker,
    outbound,
    externalSend,
    start: () => worker.start(),
    status: () => worker.status(),
    stop: () => worker.stop(),
  };
}
