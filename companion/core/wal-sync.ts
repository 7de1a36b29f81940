/**
 * Pipelined group commit: seal transactions commit without waiting for the disk, and the
 * fsync that makes them durable runs on a libuv thread while the event loop goes on parsing,
 * deciding and signing the next batch. No answer leaves before its fsync.
 *
 * How it stays durable (SQLite "Write-Ahead Logging" §"Performance Considerations", "PRAGMA
 * synchronous"): in WAL mode a commit appends its frames to the -wal file; synchronous=FULL
 * adds an fsync of that file at the commit, and NORMAL leaves it out (but keeps the syncs
 * around checkpoints). Here the commit runs with NORMAL and `sync()` then calls fdatasync on
 * the same file through a descriptor of our own. fsync covers every written page of the file,
 * whichever descriptor wrote it, so one completed fdatasync makes every frame committed before
 * it started durable, exactly as FULL would have. Commits that arrive while one fdatasync runs
 * share the next one: at most one is in flight.
 *
 * What still holds:
 * - Checkpoints copy frames into the database file only after syncing the WAL, and sync the
 *   database file before the WAL is reused, at NORMAL as at FULL (OFF would drop those syncs,
 *   and the WAL could then be overwritten over pages not yet on disk). The checkpointer's own
 *   connection (core/checkpointer.ts) opens at better-sqlite3's default for WAL, which is
 *   NORMAL (its build sets SQLITE_DEFAULT_WAL_SYNCHRONOUS=1), not FULL: durability holds all the
 *   same, since a checkpoint never copies a frame before the WAL holding it is synced. Seal
 *   commits never checkpoint: every writer connection's autocheckpoint is a backstop far above
 *   what the checkpointer lets the WAL reach (core/db.ts).
 * - Other writers (policy, account, job bookkeeping) keep their own synchronous level; a FULL
 *   commit among them also syncs every earlier frame.
 * - A reader on this connection may see a seal up to one fsync before it is durable. Nothing
 *   leaves the service on the strength of it first: the sealer answers after `sync()`, every
 *   read answers after `settled()` (app.ts), and so do the workers that send sealed facts out
 *   (webhook deliveries, route dispatches) before they send.
 * - A failed fsync is fatal, as in PostgreSQL since 2018 ("fsyncgate"): Linux may have dropped
 *   the dirty pages and a retried fsync would then report success over lost data. Every later
 *   `sync()` fails, readiness reports it, and a restart recovers from what is on disk.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Db } from './db.ts';
import { transaction } from './sqlite-transaction.ts';

export class DurabilityError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DurabilityError';
  }
}

interface Waiter {
  /** The commit count this waiter needs on disk. */
  upTo: number;
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * What one connection's WalSync tells another's through memory both threads share (the sealing
 * thread's and the request thread's, seal-thread/): how many of the writer's transactions have
 * begun, how many of those are on disk, and whether its fsync failed. A reader that may have
 * seen a commit not yet on disk syncs the WAL itself before answering: one fdatasync covers
 * every frame written before it, whichever connection wrote it.
 */
export class DurabilityBoard {
  readonly buffer: SharedArrayBuffer;
  // 64-bit: at a thousand batches a second a 32-bit count would wrap within a month.
  readonly #cells: BigInt64Array;

  constructor(buffer = new SharedArrayBuffer(3 * BigInt64Array.BYTES_PER_ELEMENT)) {
    this.buffer = buffer;
    this.#cells = new BigInt64Array(buffer);
  }

  /** Before a transaction: from its COMMIT on, other connections may read it before it is durable. */
  begun(): void {
    Atomics.add(this.#cells, BEGUN, 1n);
  }

  /** After an fsync: the first `n` transactions begun are on disk. */
  synced(n: number): void {
    Atomics.store(this.#cells, SYNCED, BigInt(n));
  }

  failed(): void {
    Atomics.store(this.#cells, FAILED, 1n);
  }

  /** Whether a transaction begun may still be off the disk. */
  get pending(): boolean {
    return Atomics.load(this.#cells, SYNCED) < Atomics.load(this.#cells, BEGUN);
  }

  get hasFailed(): boolean {
    return Atomics.load(this.#cells, FAILED) === 1n;
  }
}

const BEGUN = 0;
const SYNCED = 1;
const FAILED = 2;

export interface WalSyncOptions {
  /**
   * False commits with synchronous=FULL, the fsync inside the commit on the event loop, and
   * `sync()` has nothing left to do: the unpipelined baseline the gate benchmark compares with.
   */
  pipelined?: boolean;
  /** The OS call, fs.fdatasync by default (tests stand in a slow or failing disk). */
  fdatasync?: (fd: number, callback: (err: NodeJS.ErrnoException | null) => void) => void;
  /** This connection's transactions and fsyncs, told to another connection. */
  publish?: DurabilityBoard;
  /** Another connection's, whose commits this one's readers must not answer with before they are on disk. */
  watch?: DurabilityBoard;
}

export class WalSync {
  readonly #db: Db;
  readonly #fdatasync: NonNullable<WalSyncOptions['fdatasync']>;
  readonly #pipelined: boolean;
  readonly #walFile: string;
  #fd: number | undefined;
  /** Unsynced commits made through `transaction`, counted; `#synced` of them are on disk. */
  #committed = 0;
  #synced = 0;
  #running = false;
  #waiters: Waiter[] = [];
  #failure: DurabilityError | undefined;
  #syncs = 0;
  readonly #publish: DurabilityBoard | undefined;
  readonly #watch: DurabilityBoard | undefined;

  constructor(db: Db, options: WalSyncOptions = {}) {
    this.#db = db;
    this.#fdatasync = options.fdatasync ?? fs.fdatasync;
    this.#pipelined = options.pipelined ?? true;
    this.#walFile = `${db.name}-wal`;
    this.#publish = options.publish;
    this.#watch = options.watch;
  }

  /** fdatasync calls completed. */
  get syncs(): number {
    return this.#syncs;
  }

  /** Set once an fsync failed; nothing can be made durable until a restart. */
  get failure(): DurabilityError | undefined {
    if (!this.#failure && this.#watch?.hasFailed) this.#fail(new Error('the sealing thread could not sync it'));
    return this.#failure;
  }

  /**
   * Runs `fn` in one transaction committed without its fsync; durable only once `sync()`
   * resolves. The caller holds the connection (core/async-store.ts) for the whole body.
   */
  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#failure) throw this.#failure;
    if (!this.#pipelined) return transaction(this.#db, fn);
    let begun = false;
    try {
      return await transaction(this.#db, fn, { relaxed: true, onBegun: () => ((begun = true), this.#publish?.begun()) });
    } finally {
      // Counted rolled back too (a later fsync covers it for nothing), so that the commits
      // counted here and the transactions begun on the board stay one for one.
      if (begun) this.#committed++;
    }
  }

  /** Resolves once every commit made so far is on disk. */
  sync(): Promise<void> {
    const upTo = this.#committed;
    if (this.#failure) return Promise.reject(this.#failure);
    if (this.#synced >= upTo) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.#waiters.push({ upTo, resolve, reject });
      this.#pump();
    });
  }

  /** Like `sync()`, free when nothing is waiting for the disk: for readers about to send sealed facts out. */
  settled(): Promise<void> | undefined {
    // A commit of the watched connection's this one may have read: syncing the shared WAL once
    // more covers it, so it counts as one more commit of ours to sync.
    if (this.#watch?.pending) this.#committed++;
    if (this.failure) return Promise.reject(this.failure);
    return this.#synced >= this.#committed ? undefined : this.sync();
  }

  /** Closes our descriptor of the WAL (the database closes its own). */
  close(): void {
    if (this.#fd !== undefined) fs.closeSync(this.#fd);
    this.#fd = undefined;
  }

  #pump(): void {
    if (this.#running || this.#waiters.length === 0) return;
    const covers = this.#committed;
    let fd: number;
    try {
      fd = this.#descriptor();
    } catch (err) {
      return this.#fail(err);
    }
    this.#running = true;
    this.#fdatasync(fd, (err) => {
      this.#running = false;
      if (err) return this.#fail(err);
      this.#syncs++;
      this.#synced = covers;
      this.#publish?.synced(covers);
      const waiting: Waiter[] = [];
      for (const w of this.#waiters) {
        if (w.upTo <= covers) w.resolve();
        else waiting.push(w);
      }
      this.#waiters = waiting;
      this.#pump();
    });
  }

  #descriptor(): number {
    if (this.#fd === undefined) {
      this.#fd = fs.openSync(this.#walFile, 'r');
      // The -wal file's own directory entry must be durable too (fsync(2) NOTES).
      const dir = fs.openSync(path.dirname(this.#walFile), 'r');
      try {
        fs.fsyncSync(dir);
      } finally {
        fs.closeSync(dir);
      }
    }
    return this.#fd;
  }

  #fail(err: unknown): void {
    this.#publish?.failed();
    this.#failure = new DurabilityError(`could not make the write-ahead log durable: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    for (const w of this.#waiters.splice(0)) w.reject(this.#failure);
  }
}
