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

/**
 * Every connection's wal_autocheckpoint, in pages (4 KiB each): a backstop far above SQLite's
 * default of 1,000. SQLite's automatic checkpoint runs inside the commit that crosses it, on the
 * committing connection's thread: a seal batch would then wait for the copy into the database
 * file and its fsyncs. The checkpoint worker (core/checkpointer.ts) keeps the WAL well below
 * this, so on every writer connection (the request thread's, the sealing thread's, a tool's)
 * checkpoints run only there unless that worker stalls.
 */
export const WAL_AUTOCHECKPOINT_PAGES = 8192;

export interface OpenDatabaseOptions {
  /** Milliseconds a writer waits for another connection's lock before SQLITE_BUSY. */
  busyTimeoutMs?: number;
}

/**
 * The data directory or a database file cannot be made private (e.g. it belongs to another
 * user): the service refuses to start, like a bad setting (exit 2, one line).
 */
export class DataFilesError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataFilesError';
  }
}

/** The main file and the two SQLite keeps beside it in WAL mode (sqlite.org/wal.html §2.2). */
function databaseFiles(file: string): string[] {
  return [file, `${file}-wal`, `${file}-shm`];
}

function makePrivate(target: string, mode: number, what: string): void {
  try {
    fs.chmodSync(target, mode);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    let owner = '';
    try {
      owner = `; it belongs to uid ${fs.statSync(target).uid}, the service runs as uid ${process.getuid?.() ?? '?'}`;
    } catch {
      /* the stat is only for the message */
    }
    throw new DataFilesError(`${what} ${target} cannot be made ${mode.toString(8).padStart(4, '0')} (${code ?? 'error'}${owner})`);
  }
}

/**
 * Makes the data directory 0700 and the database files 0600, whoever created them: a
 * pre-existing directory made 0755 by an installer, or a file a copy left world-readable, would
 * otherwise let any local user read the evidence and the keys. Fails with DataFilesError.
 */
export function secureDataFiles(dir: string, file?: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  makePrivate(dir, 0o700, 'the data directory');
  if (file !== undefined) for (const f of databaseFiles(file)) makePrivate(f, 0o600, 'the database file');
}

export function openDatabase(file: string, options: OpenDatabaseOptions = {}): Db {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  // SQLite gives the -wal and -shm files the main file's mode (os_unix.c findCreateFileMode),
  // so the main file is created 0600 before SQLite opens it, and existing ones are made 0600.
  if (!fs.existsSync(file)) fs.closeSync(fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_WRONLY, 0o600));
  for (const f of databaseFiles(file)) makePrivate(f, 0o600, 'the database file');
  const db = new Database(file);
  try {
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new Error(`could not enable WAL on ${file} (journal_mode is ${String(mode)})`);
    // FULL also fsyncs the WAL on every commit; NORMAL could lose the last commits on power loss.
    db.pragma('synchronous = FULL');
    db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    db.pragma('foreign_keys = ON');
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    // Schema objects never run SQL functions with side effects on our behalf.
    db.pragma('trusted_schema = OFF');
    // A savepoint (a nested transaction, core/sqlite-transaction.ts) keeps the original of each
    // page it changes in a statement journal: a temp file by default. In memory it holds at
    // most the pages one savepoint touches. Measured on a seal's inserts when every seal ran in
    // one: 37–50 µs each with the file, 14–19 µs in memory. Sorts and temp tables
    // go to memory too; the largest here is the review-insights window over one tenant's
    // decided items of a period (reviews/sqlite-store.ts), tens of bytes a row.
    db.pragma('temp_store = MEMORY');
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
