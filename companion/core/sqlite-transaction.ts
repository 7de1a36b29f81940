/**
 * Transactions whose body may await, on a better-sqlite3 connection (its own `db.transaction`
 * takes only synchronous functions). The caller holds the connection (core/async-store.ts
 * ConnectionLock) for the whole body, so no other statement runs between BEGIN and COMMIT.
 */
import type { Db } from './db.ts';

/**
 * Another connection holds the write lock (the sealing thread's, seal-thread/): nothing ran.
 * The caller tries again later (store.ts), having let go of its own connection meanwhile.
 */
export class WriteLockBusy extends Error {
  constructor() {
    super('another connection holds the write lock');
    this.name = 'WriteLockBusy';
  }
}

/**
 * SQLite rolled the whole transaction back by itself after an error such as SQLITE_FULL or
 * SQLITE_IOERR ("Response To Errors Within A Transaction", sqlite.org/lang_transaction.html).
 * Whatever runs after that is outside any transaction: a SAVEPOINT would open a new one that its
 * RELEASE commits alone. So nothing more runs, and the transaction fails.
 */
export class TransactionRolledBack extends Error {
  constructor() {
    super('SQLite rolled this transaction back after an earlier error in it; nothing of it was stored');
    this.name = 'TransactionRolledBack';
  }
}

/** Connections that share their file with another writer, and each one's busy_timeout. */
const sharedWriters = new WeakMap<Db, number>();

/** Connections that only ever run relaxed seal batches (dedicateToSealBatches). */
const sealOnly = new WeakSet<Db>();

/**
 * For a connection that runs nothing but relaxed transactions beside another writer (the
 * sealing thread's, seal-thread/): its PRAGMAs are set once here instead of around every
 * transaction. synchronous=NORMAL for good, since every commit on it is made durable by the
 * fdatasync that follows (core/wal-sync.ts); busy_timeout=0 for good, since its only statement
 * that may wait for a lock is BEGIN IMMEDIATE, whose wait the caller runs (WriteLockBusy), and
 * once a transaction holds the write lock, nothing in it waits in WAL mode (SQLite "Write-Ahead
 * Logging" §"Concurrency").
 */
export function dedicateToSealBatches(db: Db): void {
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 0');
  sealOnly.add(db);
}

/**
 * From now on this connection's BEGIN never waits for the write lock (beginNow): another
 * writer on the same file (the sealing thread's) takes it often. Returns the busy_timeout
 * (core/db.ts) that the caller's retries stand in for.
 */
export function yieldWriteLockWhenBusy(db: Db): number {
  const timeout = Number(db.pragma('busy_timeout', { simple: true }));
  sharedWriters.set(db, timeout);
  return timeout;
}

/**
 * BEGIN IMMEDIATE. The only writer on its file waits in SQLite's busy handler for what little
 * else takes the lock (a command-line tool). A connection beside another writer never waits
 * there: the handler would sleep on this thread (1, 2, 5, 10 ms and on), and this thread is an
 * event loop that has requests to answer meanwhile; it throws WriteLockBusy instead, with the
 * connection's busy_timeout still in force for every other statement. (db.pragma each time,
 * about 6 µs each: a prepared busy_timeout pragma takes effect when prepared, not when run.)
 */
function begin(db: Db): void {
  // IMMEDIATE: the write lock first. A transaction that read first and wrote later would fail
  // outright, SQLITE_BUSY_SNAPSHOT, had another connection committed in between (SQLite
  // "Isolation In SQLite", WAL mode).
  const timeout = sharedWriters.get(db);
  if (timeout === undefined) return void db.exec('BEGIN IMMEDIATE');
  if (sealOnly.has(db)) return beginOrBusy(db);
  db.pragma('busy_timeout = 0');
  try {
    beginOrBusy(db);
  } finally {
    db.pragma(`busy_timeout = ${timeout}`);
  }
}

function beginOrBusy(db: Db): void {
  try {
    db.exec('BEGIN IMMEDIATE');
  } catch (err) {
    if ((err as { code?: string }).code === 'SQLITE_BUSY') throw new WriteLockBusy();
    throw err;
  }
}

/**
 * BEGIN IMMEDIATE, the body, then COMMIT; any exception rolls everything back and is rethrown.
 * Throws WriteLockBusy, having run nothing, while another writer holds the lock (begin).
 * `onBegun` runs once the transaction holds the lock. `relaxed` commits with
 * synchronous=NORMAL: in WAL mode that skips the commit's fsync but keeps the database
 * consistent (SQLite "WAL mode" §Performance Considerations); the commit is durable at the next
 * fsync of the WAL, anyone's.
 */
export async function transaction<T>(db: Db, body: () => Promise<T>, options: { relaxed?: boolean; onBegun?: () => void } = {}): Promise<T> {
  // db.pragma, not a prepared statement: SQLite applies a safety-level pragma when it is
  // prepared, and it cannot change inside a transaction. A connection dedicated to seal
  // batches is relaxed already (and made FULL for any other transaction, should one come).
  const dedicated = sealOnly.has(db);
  const toggle = options.relaxed === true ? !dedicated : dedicated;
  if (toggle) db.pragma(dedicated ? 'synchronous = FULL' : 'synchronous = NORMAL');
  try {
    begin(db);
    options.onBegun?.();
    try {
      const result = await body();
      if (!db.inTransaction) throw new TransactionRolledBack();
      db.exec('COMMIT');
      return result;
    } catch (err) {
      // A failed COMMIT (SQLITE_FULL, I/O) may have rolled back already.
      if (db.inTransaction) db.exec('ROLLBACK');
      throw err;
    }
  } finally {
    if (toggle) db.pragma(dedicated ? 'synchronous = NORMAL' : 'synchronous = FULL');
  }
}

/**
 * A nested transaction (SQLite SAVEPOINT): an exception rolls back the body's writes alone,
 * leaving the enclosing transaction open, and is rethrown.
 */
export async function savepoint<T>(db: Db, body: () => Promise<T>): Promise<T> {
  if (!db.inTransaction) throw new TransactionRolledBack();
  db.exec('SAVEPOINT nested');
  try {
    const result = await body();
    db.exec('RELEASE nested');
    return result;
  } catch (err) {
    // After SQLite's own rollback there is no savepoint left to roll back to.
    if (db.inTransaction) {
      db.exec('ROLLBACK TO nested');
      db.exec('RELEASE nested');
    }
    throw err;
  }
}
