/**
 * The companion's storage behind one small interface (DESIGN.md §1: routes → capability logic
 * → store). Each capability defines its own store interface beside its logic
 * (account/store.ts, …) and a SQLite implementation of it; this file composes them. A second
 * engine supplies another `Store` with the same members; nothing above this file changes.
 *
 * The interfaces are asynchronous (core/async-store.ts), so an engine behind a network can
 * implement them; the SQLite implementations stay synchronous underneath and are lifted onto
 * the boundary here. Group commit batches many requests' rows into one transaction.
 */
import path from 'node:path';
import { createSqliteAccountStore, createSqliteTenantStore } from './account/sqlite-store.ts';
import { createSqliteAnchoringStore } from './anchoring/sqlite-store.ts';
import { createSqliteIntegrationStore } from './integrations/sqlite-store.ts';
import { createSqliteWebhookStore } from './webhooks/sqlite-store.ts';
import { createSqliteEvidenceStore } from './evidence/sqlite-store.ts';
import { createSqliteExportStore } from './exports/sqlite-store.ts';
import { createSqliteIdempotencyStore } from './evidence/idempotency/sqlite-store.ts';
import { createSqliteUsageStore } from './metering/sqlite-store.ts';
import { createSqlitePolicyStore } from './policy/sqlite-store.ts';
import { createSqliteRoutingStore } from './routing/sqlite-store.ts';
import { createSqliteReviewStore } from './reviews/sqlite-store.ts';
import { createSqliteReviewContextStore } from './review-context/sqlite-store.ts';
import { WalSync } from './core/wal-sync.ts';
import type { WalSyncOptions } from './core/wal-sync.ts';
import { DATABASE_FILE, openDatabase, secureDataFiles } from './core/db.ts';
import { createSqliteKeyHistoryStore } from './core/signers/key-history.ts';
import type { StoreCipher } from './core/secrets/envelope.ts';
import { createSqliteSignInStore } from './sign-in/sqlite-store.ts';
import { createSqliteJobStore } from './core/jobs/sqlite-store.ts';
import { readMigrations, runMigrations } from './core/migrations.ts';
import { ConnectionLock, promised } from './core/async-store.ts';
import type { Sync } from './core/async-store.ts';
import { WriteLockBusy, savepoint, transaction, yieldWriteLockWhenBusy } from './core/sqlite-transaction.ts';
import type { Db } from './core/db.ts';
import type { SqliteStore, Stores, Tx } from './core/stores.ts';

// The types live in core (core/stores.ts) so capabilities name them without importing this
// composition root; the composition roots (app.ts, deps.ts, tests) keep importing them here.
export type { SqliteStore, Store, Stores, TransactionOptions, Tx } from './core/stores.ts';

export interface OpenSqliteStoreOptions {
  dataDir: string;
  migrationsDir?: string;
  walSync?: WalSyncOptions;
  /**
   * Another connection appends to the tenant logs too (the sealing thread's, seal-thread/):
   * the transactions' Merkle trees then keep caches of their own that hold only what this
   * connection committed (createSqliteStore), never a leaf appended here and rolled back, which
   * the other connection may then commit a different leaf in place of (anchoring/stored-tree.ts).
   */
  sharedWriters?: boolean;
  /** How long a caller waits behind one transaction before it is refused (core/async-store.ts ConnectionLock). */
  lockWaitLimitMs?: number;
  /** How long a transaction waits for another connection's write lock (core/db.ts). */
  busyTimeoutMs?: number;
  /** Seals and opens the secrets the store holds (webhook signing keys); without it, they are refused. */
  storeCipher?: StoreCipher;
}

/** Opens (creating on first start) <dataDir>/companion.db and brings its schema up to date. */
export function openSqliteStore(options: OpenSqliteStoreOptions): SqliteStore {
  const file = path.join(options.dataDir, DATABASE_FILE);
  secureDataFiles(options.dataDir, file);
  const db = openDatabase(file, options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs });
  try {
    runMigrations(db, readMigrations(options.migrationsDir));
  } catch (err) {
    db.close();
    throw err;
  }
  return createSqliteStore(db, file, options);
}

/** The synchronous SQLite implementation of every capability's store, on one connection. */
function sqliteStores(db: Db, cipher?: StoreCipher): { [K in keyof Stores]: Sync<Stores[K]> } {
  return {
    tenants: createSqliteTenantStore(db),
    account: createSqliteAccountStore(db),
    evidence: createSqliteEvidenceStore(db),
    usage: createSqliteUsageStore(db),
    idempotency: createSqliteIdempotencyStore(db),
    anchoring: createSqliteAnchoringStore(db),
    integrations: createSqliteIntegrationStore(db),
    webhooks: createSqliteWebhookStore(db, cipher),
    policy: createSqlitePolicyStore(db),
    reviews: createSqliteReviewStore(db),
    reviewContexts: createSqliteReviewContextStore(db),
    routing: createSqliteRoutingStore(db),
    exports: createSqliteExportStore(db),
    productionKeys: createSqliteKeyHistoryStore(db),
    jobs: createSqliteJobStore(db),
    signIn: createSqliteSignInStore(db),
  };
}

function viewOf(impl: { [K in keyof Stores]: Sync<Stores[K]> }, lock?: ConnectionLock): Stores {
  const view = {} as Record<keyof Stores, object>;
  for (const name of Object.keys(impl) as (keyof Stores)[]) view[name] = promised(impl[name] as object, lock);
  return view as unknown as Stores;
}

/**
 * Runs `attempt` until it gets the write lock (core/sqlite-transaction.ts WriteLockBusy), for
 * as long as the connection's busy_timeout would have waited. Between attempts this thread's
 * connection is free for its other callers and its event loop keeps running; the first
 * millisecond retries every turn of the loop, since the other writer's transactions are short
 * and follow each other closely, later ones once a millisecond.
 */
async function whileWriteLockBusy<T>(busyTimeoutMs: number, attempt: () => Promise<T>): Promise<T> {
  const start = performance.now();
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof WriteLockBusy)) throw err;
      const waited = performance.now() - start;
      if (waited >= busyTimeoutMs) throw Object.assign(new Error(`database is locked: another connection held the write lock for ${Math.round(waited)} ms`), { code: 'SQLITE_BUSY' });
      await new Promise((resolve) => (waited < 1 ? setImmediate(resolve) : setTimeout(resolve, 1)));
    }
  }
}

export function createSqliteStore(db: Db, file: string, options: Pick<OpenSqliteStoreOptions, 'walSync' | 'sharedWriters' | 'lockWaitLimitMs' | 'storeCipher'> = {}): SqliteStore {
  const walSync = new WalSync(db, options.walSync);
  const lock = new ConnectionLock({ waitLimitMs: options.lockWaitLimitMs });
  // Beside another writer, a transaction waits for the write lock here, not in SQLite.
  const busyTimeoutMs = options.sharedWriters ? yieldWriteLockWhenBusy(db) : undefined;
  const impl = sqliteStores(db, options.storeCipher);
  // Inside a transaction the lock is already held: the transaction's view runs at once, and
  // its synchronous implementation is at hand for the seal path (core/async-store.ts syncOf).
  const tx: Tx = { ...viewOf(impl), transaction: (fn) => afterRollback(savepoint(db, () => fn(tx))) };
  // Beside another writer, the transactions' trees cache apart from the outside view's, and
  // their caches hold only what this connection committed: every rollback (of a transaction or
  // of a savepoint) starts new ones, since a leaf appended here and rolled back could stay cached
  // at a size the other connection then commits a different leaf at (anchoring/stored-tree.ts).
  // A commit keeps them, so the next batch's appends extend the frontier in memory; what the
  // other connection appended meanwhile shows in the log's size, and is read then.
  const treesOf = () => promised({ ...impl.anchoring, treeCacheKey: {} });
  let trees = options.sharedWriters ? treesOf() : undefined;
  if (trees) Object.defineProperty(tx, 'anchoring', { get: () => trees, enumerable: true });
  function afterRollback<T>(running: Promise<T>): Promise<T> {
    if (!trees) return running;
    return running.catch((err: unknown) => {
      // A busy write lock began nothing.
      if (!(err instanceof WriteLockBusy)) trees = treesOf();
      throw err;
    });
  }
  return {
    engine: 'sqlite',
    db,
    file,
    walSync,
    ...viewOf(impl, lock),
    transaction: (fn, txOptions) => {
      const attempt = () =>
        lock.hold(() =>
          afterRollback(txOptions?.sync === 'deferred' ? walSync.transaction(() => fn(tx)) : transaction(db, () => fn(tx), { relaxed: txOptions?.sync === 'relaxed' })),
        );
      return busyTimeoutMs === undefined ? attempt() : whileWriteLockBusy(busyTimeoutMs, attempt);
    },
    withConnection: (fn) => lock.when(() => fn(db)),
    durable: () => walSync.settled(),
    close: () => {
      walSync.close();
      if (db.open) db.close();
    },
  };
}
