/**
 * The store's types, for capabilities to name without importing a composition root
 * (DESIGN.md §1: routes → capability logic → store). companion/store.ts and
 * companion/postgres-store.ts compose the engines; they import the capabilities, so a
 * capability importing them back would close an import circle through every capability.
 *
 * `Stores` starts with core's own members. Each capability adds its member where its store
 * interface is defined (account/store.ts, reviews/store.ts, …), by TypeScript declaration
 * merging, the way a plugin adds its entry to a framework's context map:
 *
 *   declare module '../core/stores.ts' { interface Stores { readonly reviews: ReviewStore } }
 *
 * Members are declared by their owners only. Merging is global to the program, so code
 * reaching `tx.<member>` of another capability's store still compiles against the owner's
 * declaration; the composed engines (store.ts, postgres-store.ts) must build every member,
 * which the type checker verifies.
 */
import type { Db } from './db.ts';
import type { JobStore } from './jobs/store.ts';
import type { Pool } from './postgres/connect.ts';
import type { KeyHistoryStore } from './signers/key-history.ts';
import type { WalSync } from './wal-sync.ts';

/** Every capability's store: what code outside a transaction and inside one both see. */
export interface Stores {
  /** The production keys that have signed here: the running one and the retired ones. */
  readonly productionKeys: KeyHistoryStore;
  /** The leased job tables' statements and tick receipts (core/jobs, for webhooks and routing). */
  readonly jobs: JobStore;
}

/** The stores as one open transaction sees them; a nested transaction is a savepoint. */
export interface Tx extends Stores {
  /** Runs `fn` in a savepoint: throwing rolls back its writes alone and rethrows. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
}

export interface TransactionOptions {
  /**
   * When the commit reaches the disk. Unset: before `transaction` resolves. 'deferred': later,
   * and `durable()` resolves once it has (the seal pipeline's group commit, whose answers wait
   * for it; core/wal-sync.ts). 'relaxed': with the next commit anyone syncs, for bookkeeping
   * whose loss on power failure is only redone work (job claims and outcomes: at-least-once).
   * On PostgreSQL a 'deferred' transaction writes its records and tree nodes behind and may run
   * `fn` a second time (postgres-store.ts writingBehind): its `fn` must be safe to run again.
   */
  sync?: 'deferred' | 'relaxed';
}

export interface Store extends Stores {
  readonly engine: string;
  /**
   * Runs `fn` in one transaction: all of its writes commit together or none do. Inside it,
   * use the `tx` it receives; the outside stores wait until it has committed.
   */
  transaction<T>(fn: (tx: Tx) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Resolves once every commit made so far is on disk; undefined when nothing is waiting for
   * the disk. Awaited before sealed facts leave the service other than as a seal's own answer
   * (deliveries, dispatches, exports): a seal batch may be readable before its fsync ends.
   */
  durable(): Promise<void> | undefined;
  /** Closes the connection (SQLite) or ends the pool once its queries finish (PostgreSQL). */
  close(): void | Promise<void>;
}

/** The SQLite store, with the connection exposed for engine-specific work (tests, backups). */
export interface SqliteStore extends Store {
  readonly engine: 'sqlite';
  readonly db: Db;
  readonly file: string;
  /** Seal batches commit without an fsync and are synced off the event loop (core/wal-sync.ts). */
  readonly walSync: WalSync;
  /**
   * Runs synchronous work on the connection itself (the job queues, probes) once no
   * transaction holds it, so it never lands inside someone else's transaction.
   */
  withConnection<T>(fn: (db: Db) => T): Promise<T>;
  close(): void;
}

/** The PostgreSQL store (companion/postgres-store.ts), with its pool for engine-specific work (probes, tests). */
export interface PostgresStore extends Store {
  readonly engine: 'postgres';
  readonly sql: Pool;
}
