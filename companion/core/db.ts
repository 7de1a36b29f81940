/**
 * The embedded SQLite database (DESIGN.md §2): one file under the data directory, opened with
 * the durability the evidence needs. WAL + synchronous=FULL makes every committed transaction
 * survive power loss; throughput comes from group commit (many requests' rows in one
 * transaction, its fsync run off the event loop by wal-sync.ts), never from weaker durability.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';

export type Db = Database.Database;

export const DATABASE_FILE = 'companion.db';

export interface OpenDatabaseOptions {
  /** Milliseconds a writer waits for another connection's lock before SQLITE_BUSY. */
  busyTimeoutMs?: number;
}

export function openDatabase(file: string, options: OpenDatabaseOptions = {}): Db {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const db = new Database(file);
  try {
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new Error(`could not enable WAL on ${file} (journal_mode is ${String(mode)})`);
    // FULL also fsyncs the WAL on every commit; NORMAL could lose the last commits on power loss.
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    // Schema objects never run SQL functions with side effects on our behalf.
    db.pragma('trusted_schema = OFF');
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** Current value of a pragma on this connection (for diagnostics and tests). */
export function pragmaValue(db: Db, name: string): unknown {
  return db.pragma(name, { simple: true });
}
