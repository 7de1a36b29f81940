/**
 * Transactions whose body may await, on a better-sqlite3 connection (its own `db.transaction`
 * takes only synchronous functions). The caller holds the connection (core/async-store.ts
 * ConnectionLock) for the whole body, so no other statement runs between BEGIN and COMMIT.
 */
import type { Db } from './db.ts';

/**
 * BEGIN IMMEDIATE, the body, then COMMIT; any exception rolls everything back and is rethrown.
 * `relaxed` commits with synchronous=NORMAL: in WAL mode that skips the commit's fsync but
 * keeps the database consistent (SQLite "WAL mode" §Performance Considerations); the commit is
 * durable at the next fsync of the WAL, anyone's.
 */
export async function transaction<T>(db: Db, body: () => Promise<T>, relaxed = false): Promise<T> {
  // db.pragma, not a prepared statement: SQLite applies a safety-level pragma when it is
  // prepared, and it cannot change inside a transaction.
  if (relaxed) db.pragma('synchronous = NORMAL');
  try {
    // IMMEDIATE: the write lock first, waiting (busy_timeout) while another connection holds it
    // (the sealing thread's, seal-thread/). A transaction that read first and wrote later would
    // fail outright, SQLITE_BUSY_SNAPSHOT, had another connection committed in between
    // (SQLite "Isolation In SQLite", WAL mode).
    db.exec('BEGIN IMMEDIATE');
    try {
      const result = await body();
      db.exec('COMMIT');
      return result;
    } catch (err) {
      // A failed COMMIT (SQLITE_FULL, I/O) may have rolled back already.
      if (db.inTransaction) db.exec('ROLLBACK');
      throw err;
    }
  } finally {
    if (relaxed) db.pragma('synchronous = FULL');
  }
}

/**
 * A nested transaction (SQLite SAVEPOINT): an exception rolls back the body's writes alone,
 * leaving the enclosing transaction open, and is rethrown.
 */
export async function savepoint<T>(db: Db, body: () => Promise<T>): Promise<T> {
  db.exec('SAVEPOINT nested');
  try {
    const result = await body();
    db.exec('RELEASE nested');
    return result;
  } catch (err) {
    db.exec('ROLLBACK TO nested');
    db.exec('RELEASE nested');
    throw err;
  }
}
