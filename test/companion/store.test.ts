/** The SQLite store: durability pragmas and numbered, transactional, re-runnable migrations. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../companion/core/db.ts';
import type { Db } from '../../companion/core/db.ts';
import { MIGRATIONS_DIR, MigrationError, readMigrations, runMigrations } from '../../companion/core/migrations.ts';
import { openSqliteStore } from '../../companion/store.ts';
import type { OpenSqliteStoreOptions } from '../../companion/store.ts';
import { makeTempDir } from './helpers.ts';

const dirs: string[] = [];
const dbs: Db[] = [];
function tempDir(): string {
  const d = makeTempDir('svc-store-');
  dirs.push(d);
  return d;
}
function open(file: string): Db {
  const db = openDatabase(file);
  dbs.push(db);
  return db;
}
afterEach(() => {
  for (const db of dbs.splice(0)) if (db.open) db.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** Everything a migration could change: schema objects, the migration log, user_version. */
function snapshot(db: Db) {
  return {
    schema: db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").all(),
    migrations: db.prepare('SELECT * FROM schema_migrations ORDER BY version').all(),
    userVersion: db.pragma('user_version', { simple: true }),
  };
}

/** The file name a migration `ahead` places after the last real one would take. */
function nextName(ahead: number, name: string): string {
  return `${String(readMigrations().at(-1)!.version + ahead).padStart(4, '0')}_${name}.sql`;
}

function copyMigrations(to: string, extra: Record<string, string> = {}): string {
  const dir = path.join(to, 'migrations');
  fs.mkdirSync(dir);
  for (const f of fs.readdirSync(MIGRATIONS_DIR).filter((name) => name.endsWith('.sql'))) fs.copyFileSync(path.join(MIGRATIONS_DIR, f), path.join(dir, f));
  for (const [name, sql] of Object.entries(extra)) fs.writeFileSync(path.join(dir, name), sql);
  return dir;
}

describe('openDatabase', () => {
  it('uses WAL with synchronous=FULL, foreign keys on, a busy timeout and statement journals in memory', () => {
    const db = open(path.join(tempDir(), 'x.db'));
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2); // 2 = FULL
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('busy_timeout', { simple: true })).toBeGreaterThan(0);
    expect(db.pragma('temp_store', { simple: true })).toBe(2); // 2 = MEMORY
  });
});

describe('migrations', () => {
  it('are numbered upwards from 0001 without repeats', () => {
    const migrations = readMigrations();
    const versions = migrations.map((m) => m.version);
    expect(versions).toEqual([...new Set(versions)].sort((a, b) => a - b));
    expect(versions[0]).toBe(1);
    expect(migrations[0]?.name).toBe('tenants');
  });

  it('create the schema on first start and change nothing when run again', () => {
    const db = open(path.join(tempDir(), 'x.db'));
    const first = runMigrations(db);
    expect(first).toEqual(readMigrations().map((m) => m.version));
    const after = snapshot(db);
    expect(runMigrations(db)).toEqual([]);
    expect(snapshot(db)).toEqual(after);
    expect(after.userVersion).toBe(first.at(-1));
  });

  it('keep data and change nothing across a reopen of the store', () => {
    const dataDir = tempDir();
    const store = openSqliteStore({ dataDir });
    store.db.prepare("INSERT INTO tenants VALUES ('ten_1', 'sandbox', 'x', 0, 't', 't')").run();
    const before = snapshot(store.db);
    store.close();
    const again = openSqliteStore({ dataDir });
    expect(snapshot(again.db)).toEqual(before);
    expect(again.db.prepare('SELECT count(*) AS n FROM tenants').get()).toEqual({ n: 1 });
    again.close();
  });

  it('apply a failing migration not at all: its transaction rolls back', () => {
    const dir = tempDir();
    const migrationsDir = copyMigrations(dir, { [nextName(1, 'broken')]: 'CREATE TABLE half_done (id INTEGER);\nTHIS IS NOT SQL;' });
    const db = open(path.join(dir, 'x.db'));
    expect(() => runMigrations(db, readMigrations(migrationsDir))).toThrow();
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'half_done'").get()).toBeUndefined();
    const applied = db.prepare('SELECT version FROM schema_migrations ORDER BY version').all();
    expect(applied).toEqual(readMigrations().map((m) => ({ version: m.version })));
  });

  it('refuse a repeated number and a badly named file', () => {
    const dir = tempDir();
    expect(() => readMigrations(copyMigrations(dir, { [nextName(0, 'again')]: 'SELECT 1;' }))).toThrow(MigrationError);
    const dir2 = tempDir();
    expect(() => readMigrations(copyMigrations(dir2, { '2_bad-name.sql': 'SELECT 1;' }))).toThrow(/NNNN_name\.sql/);
  });

  it('refuse to start when an applied migration was edited afterwards', () => {
    const dir = tempDir();
    const migrationsDir = copyMigrations(dir);
    const db = open(path.join(dir, 'x.db'));
    runMigrations(db, readMigrations(migrationsDir));
    fs.appendFileSync(path.join(migrationsDir, '0001_tenants.sql'), '\n-- edited\n');
    expect(() => runMigrations(db, readMigrations(migrationsDir))).toThrow(/changed after it was applied/);
  });

  it('refuse a database made by a newer build', () => {
    const dir = tempDir();
    const migrationsDir = copyMigrations(dir, { [nextName(1, 'future')]: 'CREATE TABLE future (id INTEGER);' });
    const db = open(path.join(dir, 'x.db'));
    runMigrations(db, readMigrations(migrationsDir));
    expect(() => runMigrations(db)).toThrow(/newer version/);
  });
});

describe('the SQLite store behind the async boundary', () => {
  const AT = '2025-01-01T00:00:00.000Z';
  function storeWithTenant(options: Partial<OpenSqliteStoreOptions> = {}) {
    const store = openSqliteStore({ dataDir: tempDir(), ...options });
    dbs.push(store.db);
    store.db.prepare("INSERT INTO tenants (id, kind, display_name, retain_statutory_metadata, created_at, updated_at) VALUES ('ten_a', 'sandbox', 'A', 0, ?, ?)").run(AT, AT);
    return store;
  }

  it('holds the connection for a transaction across its awaits: outside calls wait for the commit', async () => {
    const store = storeWithTenant();
    const seen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const tx = store.transaction(async (t) => {
      await t.usage.add('ten_a', 1, 0, AT);
      seen.push('added');
      await gate; // a real wait: another macrotask runs meanwhile
      await t.usage.add('ten_a', 1, 0, AT);
    });
    await new Promise((r) => setImmediate(r));
    const outside = store.usage.usage('ten_a').then((u) => {
      seen.push(`read ${u.actionsUsed}`);
    });
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual(['added']); // the read has not run inside the open transaction
    release();
    await Promise.all([tx, outside]);
    expect(seen).toEqual(['added', 'read 2']);
  });

  it('rolls back a failed transaction, and a failed savepoint alone', async () => {
    const store = storeWithTenant();
    await expect(
      store.transaction(async (t) => {
        await t.usage.add('ten_a', 5, 0, AT);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await store.usage.usage('ten_a')).toEqual({ actionsUsed: 0, creditsUsed: 0 });
    await store.transaction(async (t) => {
      await t.usage.add('ten_a', 1, 0, AT);
      await expect(
        t.transaction(async (sp) => {
          await sp.usage.add('ten_a', 10, 0, AT);
          throw new Error('this one only');
        }),
      ).rejects.toThrow('this one only');
    });
    expect(await store.usage.usage('ten_a')).toEqual({ actionsUsed: 1, creditsUsed: 0 });
  });

  it('refuses, rather than deadlocks, an outside store call from inside a transaction', async () => {
    const store = storeWithTenant({ lockWaitLimitMs: 200 });
    await expect(store.transaction(async () => store.usage.usage('ten_a'))).rejects.toThrow(/use the transaction's own stores/);
    // Work the transaction left scheduled is not mistaken for it once it has ended.
    let later: Promise<unknown> | undefined;
    await store.transaction(async () => {
      later = new Promise((r) => setTimeout(r, 5)).then(() => store.usage.usage('ten_a'));
    });
    await expect(later).resolves.toEqual({ actionsUsed: 0, creditsUsed: 0 });
    // The limit is per hold: a call queued behind several shorter transactions waits them all out.
    const slow = () => store.transaction(() => new Promise((r) => setTimeout(r, 120)));
    const holds = [slow(), slow(), slow()];
    await expect(store.usage.usage('ten_a')).resolves.toEqual({ actionsUsed: 0, creditsUsed: 0 });
    await Promise.all(holds);
  });

  it("waits for another connection's write lock without blocking the event loop, and gives up after busy_timeout", async () => {
    const dir = tempDir();
    const other = openSqliteStore({ dataDir: dir, sharedWriters: true });
    const store = openSqliteStore({ dataDir: dir, sharedWriters: true, busyTimeoutMs: 300 });
    dbs.push(other.db, store.db);
    other.db.exec('CREATE TABLE probe (x INTEGER)');
    const insert = () => store.transaction(async () => store.db.prepare('INSERT INTO probe VALUES (1)').run().changes);

    other.db.exec('BEGIN IMMEDIATE'); // the other connection takes the write lock, as the sealing thread does
    let settled = false;
    const waiting = insert().finally(() => (settled = true));
    // Timers still fire while it waits: SQLite's busy handler would have slept on this thread.
    const ticks = await new Promise<number>((resolve) => {
      let n = 0;
      const timer = setInterval(() => ++n === 5 && (clearInterval(timer), resolve(n)), 10);
    });
    expect(ticks).toBe(5);
    expect(settled).toBe(false);
    // Meanwhile this connection still answers reads: the waiting transaction does not hold it.
    await expect(store.usage.usage('ten_a')).resolves.toEqual({ actionsUsed: 0, creditsUsed: 0 });
    other.db.exec('COMMIT');
    await expect(waiting).resolves.toBe(1);

    other.db.exec('BEGIN IMMEDIATE');
    const start = performance.now();
    await expect(insert()).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
    expect(performance.now() - start).toBeGreaterThanOrEqual(300);
    other.db.exec('ROLLBACK');
    expect(store.db.prepare('SELECT count(*) AS n FROM probe').get()).toEqual({ n: 1 });
  });

  it("commits 'relaxed' transactions without their fsync and restores the durable setting after", async () => {
    const store = storeWithTenant();
    const level = () => store.db.pragma('synchronous', { simple: true });
    expect(level()).toBe(2); // FULL
    expect(await store.transaction(async () => level(), { sync: 'relaxed' })).toBe(1); // NORMAL inside
    expect(level()).toBe(2);
    await expect(store.transaction(async () => { throw new Error('boom'); }, { sync: 'relaxed' })).rejects.toThrow('boom');
    expect(level()).toBe(2);
    expect(await store.transaction(async () => level())).toBe(2);
  });
});
