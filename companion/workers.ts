/**
 * The one place background work is built and started (STYLE.md "Persistence and workers"):
 * every worker is registered here on the service lifecycle, never from a route factory, and
 * reports its liveness for the readiness probe.
 *
 * Order matters at stop (core/lifecycle.ts runs stop hooks last-registered first): the
 * periodic workers finish their round, then queued seals commit, then the checkpoint thread
 * closes its connection, then the database closes (deps.ts closeDeps).
 */
import { EpochCloser } from './anchoring/epochs.ts';
import { createTimestampService } from './anchoring/timestamps.ts';
import type { TimestampService } from './anchoring/timestamps.ts';
import { createWitnessService } from './anchoring/witness.ts';
import type { WitnessService } from './anchoring/witness.ts';
import type { Clock } from './core/clock.ts';
import { Checkpointer } from './core/checkpointer.ts';
import type { Config } from './core/config.ts';
import type { IdFactory } from './core/ids.ts';
import type { Keyring } from './core/keyring.ts';
import type { Lifecycle } from './core/lifecycle.ts';
import type { Logger } from './core/log.ts';
import { PeriodicWorker } from './core/periodic-worker.ts';
import type { WorkerStatus } from './core/worker-status.ts';
import { IDEMPOTENCY_EXPIRY_INTERVAL_MS, purgeExpiredIdempotencyKeys } from './evidence/idempotency/expiry.ts';
import type { SealPipeline } from './evidence/sealer.ts';
import { sweepExpiredReviews, sweepIntervalMs } from './reviews/expiry.ts';
import { runReviewSchedule } from './reviews/schedule.ts';
import { SWEEP_INTERVAL_MS as REVIEW_CONTEXT_SWEEP_MS, sweepReviewContexts } from './review-context/sweep.ts';
import type { PostgresStore } from './postgres-store.ts';
import type { SqliteStore } from './store.ts';
import type { RoutingService } from './routing/service.ts';
import type { WebhookService } from './webhooks/service.ts';

export interface WorkerDeps {
  config: Config;
  store: SqliteStore | PostgresStore;
  sealer: SealPipeline;
  keyring: Keyring;
  clock: Clock;
  ids: IdFactory;
  log: Logger;
  lifecycle: Lifecycle;
  webhooks: WebhookService;
  routing: RoutingService;
}

export interface Workers {
  /** Closes due epochs (anchoring/epochs.ts); tests and tools may run a round directly. */
  epochs: EpochCloser;
  /** RFC 3161 timestamp requests of closed epochs (anchoring/timestamps.ts); its worker runs only with SVC_TSA_URLS. */
  timestamps: TimestampService;
  /** c2sp.org/tlog-witness submissions of closed epochs (anchoring/witness.ts); its worker runs only with witnesses configured. */
  witnesses: WitnessService;
  /** Purges expired idempotency keys (evidence/idempotency/expiry.ts); tests may run a round directly. */
  idempotencyExpiry: PeriodicWorker;
  /** Each worker's liveness, in start order. */
  status(): WorkerStatus[];
}

interface Startable {
  start(): void | Promise<void>;
  stop(): Promise<void>;
  status(): WorkerStatus;
}

export function registerWorkers(deps: WorkerDeps): Workers {
  const { lifecycle } = deps;
  const all: Startable[] = [];
  const add = (worker: Startable) => {
    all.push(worker);
    lifecycle.onStart(() => worker.start());
    lifecycle.onStop(() => worker.stop());
  };

  // SQLite's WAL is checkpointed here; PostgreSQL checkpoints itself.
  if (deps.store.engine === 'sqlite') add(new Checkpointer(deps.store.db, { log: deps.log }));
  lifecycle.onStop(() => deps.sealer.close());
  add(
    new PeriodicWorker({
      name: 'review-expiry',
      intervalMs: sweepIntervalMs(deps.config.reviewTimeoutSeconds),
      // Expiry first: an item whose window ended is expired, never reminded or escalated.
      // An escalation step also moves the paused action's dispatch to the step's route.
      round: async () => (await sweepExpiredReviews(deps)) + (await runReviewSchedule({ ...deps, onEscalated: deps.routing.onEscalated })),
      clock: deps.clock,
      log: deps.log,
    }),
  );
  // Review context left over after its review ended is erased, and on SQLite the WAL that carried it truncated.
  add(new PeriodicWorker({ name: 'review-context-sweep', intervalMs: REVIEW_CONTEXT_SWEEP_MS, round: () => sweepReviewContexts(deps), clock: deps.clock, log: deps.log }));

  // Outside every seal: a seal's transaction never deletes expired keys.
  const idempotencyExpiry = new PeriodicWorker({
    name: 'idempotency-expiry',
    intervalMs: IDEMPOTENCY_EXPIRY_INTERVAL_MS,
    round: () => purgeExpiredIdempotencyKeys({ transaction: (fn) => deps.store.transaction(fn), clock: deps.clock, ttlSeconds: deps.config.idempotencyTtlSeconds }),
    clock: deps.clock,
    log: deps.log,
  });
  add(idempotencyExpiry);

  const timestamps = createTimestampService({ store: deps.store, clock: deps.clock, ids: deps.ids, log: deps.log, config: deps.config });
  const witnesses = createWitnessService({ store: deps.store, clock: deps.clock, ids: deps.ids, log: deps.log, config: deps.config });
  const epochs = new EpochCloser({
    store: deps.store,
    events: deps.webhooks.outbox,
    // Epoch headers are signed like a seal by the production key, published in the JWKS; the
    // header's own format (svc.epoch/v1) keeps it from ever passing as an attestation.
    signer: deps.keyring.production,
    clock: deps.clock,
    ids: deps.ids,
    cadenceSeconds: deps.config.epochSeconds,
    log: deps.log,
    timestamps,
    witnesses,
  });
  add(
    new PeriodicWorker({
      name: 'epochs',
      // Often enough to close within a fraction of the cadence, never busier than 4 Hz.
      intervalMs: Math.min(30_000, Math.max(250, (deps.config.epochSeconds * 1000) / 8)),
      round: async () => epochs.closeDue(),
      clock: deps.clock,
      log: deps.log,
    }),
  );

  // Without an authority there is nothing to request: the worker never starts (its client is closed at stop).
  if (timestamps.urls.length > 0) add(timestamps);
  else lifecycle.onStop(() => timestamps.stop());
  if (witnesses.witnesses.length > 0) add(witnesses);
  else lifecycle.onStop(() => witnesses.stop());

  // Registered after the sealer's drain, so it stops first: in-flight deliveries are handed
  // back untried before the last seals commit and the database closes.
  add(deps.webhooks);

  // interface-spec States and transitions: only "an outbox worker run with the explicit
  // external-send flag" posts route dispatches, so without the flag the worker never starts.
  // Registered after the webhook service, so it stops before that service closes the guarded
  // client both share.
  if (deps.config.outboxExternalSend) add(deps.routing);
  else lifecycle.onStop(() => deps.routing.stop());

  const { sealer } = deps;
  return { epochs, timestamps, witnesses, idempotencyExpiry, status: () => [...all.map((w) => w.status()), ...(sealer.status ? [sealer.status()] : [])] };
}
