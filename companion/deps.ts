/**
 * What the app is built from. `openDeps` does the startup I/O (data directory, database and
 * migrations, signing keys) so that `createApp` (app.ts) does none; main.ts and the test
 * helper both build their dependencies here, so tests run the real wiring.
 */
import type { AuthEnv, OptionalAuthEnv } from './core/auth.ts';
import type { Clock } from './core/clock.ts';
import { systemClock } from './core/clock.ts';
import type { Config } from './core/config.ts';
import type { IdFactory } from './core/ids.ts';
import { createIdFactory } from './core/ids.ts';
import { Keyring } from './core/keyring.ts';
import { Lifecycle } from './core/lifecycle.ts';
import type { OpenApiDocument } from './core/openapi.ts';
import type { Logger } from './core/log.ts';
import { createJsonLogger } from './core/log.ts';
import type { AuthRequirement } from './core/router.ts';
import type { Capability, SessionEnv } from './account/people.ts';
import { createSandboxSigner } from './core/signer.ts';
import type { Signer } from './core/signer.ts';
import { openProductionSigner } from './core/signers/select.ts';
import { DurabilityBoard } from './core/wal-sync.ts';
import type { WalSyncOptions } from './core/wal-sync.ts';
import { catchUpTenantLogs } from './anchoring/tenant-log.ts';
import { installNativeSha256 } from './core/native-hash.ts';
import { Sealer } from './evidence/sealer.ts';
import { sealParticipants } from './seal-participants.ts';
import { ThreadedSealer } from './seal-thread/threaded-sealer.ts';
import type { SealPipeline } from './evidence/sealer.ts';
import { Metrics } from './ops/metrics.ts';
import { Readiness, databaseWritable, migrationsCurrent, postgresMigrationsCurrent, postgresWritable, signersUsable, workersAlive } from './ops/readiness.ts';
import { openPostgresStore } from './postgres-store.ts';
import type { PostgresStore } from './postgres-store.ts';
import { SecretResolver, secretResolverOptions } from './core/secret-refs.ts';
import type { StoreCipher } from './core/secrets/envelope.ts';
import { openStoreCipher } from './core/secrets/store-kek.ts';
import { createRoutingService } from './routing/service.ts';
import type { RoutingService } from './routing/service.ts';
import type { SqliteStore, Store } from './store.ts';
import { openSqliteStore } from './store.ts';
import { registerWorkers } from './workers.ts';
import type { Workers } from './workers.ts';
import { sealSigningKeysAtStart } from './webhooks/sealed-keys.ts';
import { createWebhookService } from './webhooks/service.ts';
import type { WebhookService } from './webhooks/service.ts';

// The types live in core (core/app-deps.ts) so capabilities name them without importing this
// composition root; their members are declared here, where the object is built.
import type { AppDeps } from './core/app-deps.ts';
export type { AppDeps, RouteDeps } from './core/app-deps.ts';

declare module './core/app-deps.ts' {
  interface AppDeps {
    config: Config;
    store: Store;
    keyring: Keyring;
    clock: Clock;
    ids: IdFactory;
    log: Logger;
    /** Register background work's start/stop here (core/lifecycle.ts). */
    lifecycle: Lifecycle;
    /** The one sealing pipeline (evidence/sealer.ts), group-committing seals. */
    sealer: SealPipeline;
    /** Background workers' liveness (workers.ts), for the readiness probe. */
    workers: Workers;
    /** Prometheus metrics (ops/metrics.ts), served at GET /metrics. */
    metrics: Metrics;
    /** Named checks behind GET /readyz; background workers register theirs here. */
    readiness: Readiness;
    /** Resolves granted secret references at send time (core/secret-refs.ts). */
    secrets: SecretResolver;
    /** The event outbox, the guarded client and the delivery worker (webhooks/service.ts). */
    webhooks: WebhookService;
    /** Review route dispatches: the seal participant, the send queue and its worker (routing/service.ts). */
    routing: RoutingService;
  }

  /** What each capability's `routes(deps)` receives: the app's deps plus its auth requirements. */
  interface RouteDeps {
    auth: {
      /**
       * interface-spec Authentication 1: X-Service-Key or Authorization: Bearer, of any active
       * principal; sets c.var.auth. Only for exchanging the key itself (sign-in): a route that acts
       * on the tenant names its capability with `key` or `keyOrSession`.
       */
      apiKey: AuthRequirement<AuthEnv>;
      /** An API key whose principal holds `capability` within the key's subset (403 otherwise). */
      key(capability: Capability): AuthRequirement<AuthEnv>;
      /** The same credential, optional: c.var.auth is undefined for anonymous calls. */
      optionalApiKey: AuthRequirement<OptionalAuthEnv>;
      /** interface-spec Authentication 2: the svc_session cookie (and X-CSRF-Token on writes); sets c.var.session. */
      session: AuthRequirement<SessionEnv>;
      /**
       * An API key, or the account session (the console), whose principal holds `capability`;
       * sets c.var.auth either way (account/people.ts).
       */
      keyOrSession(capability: Capability): AuthRequirement<AuthEnv>;
    };
    /** The app's own OpenAPI document, generated once on first use (after every route is mounted). */
    describe(): OpenApiDocument;
  }
}

export interface OpenDepsOptions {
  clock?: Clock;
  log?: Logger;
  ids?: IdFactory;
  /** Also export the process's own metrics (CPU, memory, event loop lag); main.ts sets it. */
  processMetrics?: boolean;
  /** How seal batches reach the disk (core/wal-sync.ts); tests stand in a slow or failing disk. */
  walSync?: WalSyncOptions;
  /** Where the sealing thread starts (seal-thread/threaded-sealer.ts ThreadedSealerDeps.entry). */
  sealThreadEntry?: URL;
}

/**
 * The engine: PostgreSQL when SVC_DATABASE_URL names a database (several companions share it),
 * otherwise the embedded SQLite file in the data directory.
 */
async function openStore(config: Config, options: OpenDepsOptions, board: DurabilityBoard | undefined, storeCipher: StoreCipher): Promise<SqliteStore | PostgresStore> {
  if (config.databaseUrl !== undefined) return openPostgresStore({ url: config.databaseUrl, storeCipher });
  return openSqliteStore({ dataDir: config.dataDir, sharedWriters: board !== undefined, walSync: { ...options.walSync, ...(board ? { watch: board } : {}) }, storeCipher });
}

/**
 * The sealing thread (seal-thread/) takes the seals that can travel: on the embedded engine
 * only (PostgreSQL's commits already wait on a server, not on this process), and with the key
 * file, since the thread signs with its own copy of the key.
 */
function usesSealThread(config: Config): boolean {
  return config.sealThread && config.databaseUrl === undefined && config.signer === 'file';
}

export async function openDeps(config: Config, options: OpenDepsOptions = {}): Promise<AppDeps & { store: SqliteStore | PostgresStore }> {
  const clock = options.clock ?? systemClock;
  installNativeSha256();
  // The sealing thread's commits, for this thread's readers (core/wal-sync.ts).
  const board = usesSealThread(config) ? new DurabilityBoard() : undefined;
  const secrets = new SecretResolver(secretResolverOptions(config));
  let cipher: StoreCipher;
  let store: SqliteStore | PostgresStore;
  try {
    // The key-encryption key of the secrets the store holds (core/secrets/store-kek.ts), before
    // the store opens: no store of this process ever writes such a secret in clear.
    cipher = await openStoreCipher(config, secrets);
    store = await openStore(config, options, board, cipher);
  } catch (err) {
    secrets.close();
    throw err;
  }
  let production: Signer | undefined;
  try {
    const log = options.log ?? createJsonLogger({ level: config.logLevel });
    // Keys written before migration 0020 are sealed now, before anything reads them.
    const sealed = await sealSigningKeysAtStart(store.webhooks, cipher);
    if (sealed > 0) log.info('stored secrets sealed', { reason: `${sealed} webhook signing key(s) stored in clear before this release are now sealed under the store's key-encryption key` });
    // SVC_SIGNER's custody (core/signers/select.ts); the sandbox key is always the dev key.
    production = await openProductionSigner(config, secrets, log);
    const retired = await store.productionKeys.activate(production, clock.now().toISOString());
    const keyring = new Keyring({ sandbox: createSandboxSigner(), production, retired });
    const ids = options.ids ?? createIdFactory(clock);
    const metrics = new Metrics({ processMetrics: options.processMetrics ?? false });
    const lifecycle = new Lifecycle();
    await catchUpTenantLogs(store);
    const webhooks = createWebhookService({ store, secrets, clock, ids, log, config });
    const routing = createRoutingService({ store, secrets, clock, ids, log, config, outbound: webhooks.outbound });
    const participants = sealParticipants({ outbox: webhooks.outbox, routing: routing.participant });
    const local = new Sealer({
      store,
      participants,
      idempotencyTtlSeconds: config.idempotencyTtlSeconds,
      keyring,
      clock,
      ids,
      observer: metrics.sealObserver,
    });
    const sealer: SealPipeline = board
      ? await ThreadedSealer.start({
          config,
          clock,
          log,
          local,
          participants,
          store,
          board,
          observer: metrics.sealObserver,
          wake: (queue) => (queue === 'webhooks' ? webhooks.worker : routing.worker).wake(),
          ...(options.sealThreadEntry ? { entry: options.sealThreadEntry } : {}),
        })
      : local;
    metrics.watch({ sealQueueDepth: () => sealer.queued, ...(store.engine === 'sqlite' ? { databaseFile: store.file } : {}) });
    const workers = registerWorkers({ config, store, sealer, keyring, clock, ids, log, lifecycle, webhooks, routing });
    const readiness = new Readiness();
    readiness.register('database_writable', store.engine === 'sqlite' ? databaseWritable(store) : postgresWritable(store));
    readiness.register('migrations_current', store.engine === 'sqlite' ? migrationsCurrent(store) : postgresMigrationsCurrent(store));
    readiness.register('signer_usable', signersUsable(keyring, () => clock.now().getTime()));
    readiness.register('workers_alive', workersAlive(lifecycle, workers));
    return { config, store, keyring, clock, ids, log, lifecycle, sealer, workers, metrics, readiness, secrets, webhooks, routing };
  } catch (err) {
    production?.close?.();
    secrets.close();
    await store.close();
    throw err;
  }
}

/** openDeps for tools and tests that work on the SQLite file itself (benchmarks, raw rows). */
export async function openSqliteDeps(config: Config, options: OpenDepsOptions = {}): Promise<AppDeps & { store: SqliteStore }> {
  if (config.databaseUrl !== undefined) throw new Error('this tool works on the embedded SQLite engine: unset SVC_DATABASE_URL');
  return (await openDeps(config, options)) as AppDeps & { store: SqliteStore };
}

/** Stops background work (so queues flush into the still-open database), then closes it. */
export async function closeDeps(deps: AppDeps): Promise<void> {
  try {
    await deps.lifecycle.stop();
  } finally {
    await deps.store.close();
    deps.keyring.close();
    deps.secrets.close();
  }
}
