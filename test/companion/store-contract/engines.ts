/**
 * The two engines a capability's store must behave the same on: SQLite (the embedded default,
 * better-sqlite3 lifted onto the async boundary) and PostgreSQL (Debian's server, started per
 * test file from test/helpers/postgres.ts). A contract test runs every case on both, through
 * `describe.each(engines())`; each case gets a fresh, fully migrated database (`databasePerCase`).
 * Below the engines, what several contract files need: seeding tenants, and holding concurrent
 * transactions at the points a race needs them.
 */
import fs from 'node:fs';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { Sync } from '../../../companion/core/async-store.ts';
import { promised } from '../../../companion/core/async-store.ts';
import type { Db } from '../../../companion/core/db.ts';
import { connect } from '../../../companion/core/postgres/connect.ts';
import type { Pool, Queryable } from '../../../companion/core/postgres/connect.ts';
import { runPostgresMigrations } from '../../../companion/core/postgres/migrations.ts';
import { savepoint, transaction } from '../../../companion/core/sqlite-transaction.ts';
import { openSqliteStore } from '../../../companion/store.ts';
import { numberedPlaceholders, startPostgres } from '../../helpers/postgres.ts';
import type { TestPostgres } from '../../helpers/postgres.ts';
import { makeTempDir } from '../helpers.ts';

/** How one capability's store is built on each engine. */
export interface StoreFactories<T> {
  sqlite(db: Db): Sync<T>;
  postgres(sql: Queryable): T;
}

/** Builds stores on one connection: the database's, or an open transaction's. */
export interface Scope {
  store<T extends object>(factories: StoreFactories<T>): T;
  /** A nested transaction (savepoint): throwing rolls back its writes alone. */
  transaction<R>(fn: (tx: Scope) => Promise<R>): Promise<R>;
}

export interface TestDatabase extends Scope {
  /** Raw SQL for seeding and checking rows; `?` placeholders on both engines. */
  exec(sql: string, ...params: unknown[]): Promise<void>;
  rows<T>(sql: string, ...params: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

export interface Engine {
  name: 'sqlite' | 'postgres';
  /** Starts what the engine needs for a test file (the PostgreSQL server). */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** A fresh database with every migration applied. */
  open(): Promise<TestDatabase>;
}

function sqliteScope(db: Db): Scope {
  const scope: Scope = {
    store: <T extends object>(f: StoreFactories<T>) => promised<T>(f.sqlite(db)),
    transaction: (fn) => (db.inTransaction ? savepoint(db, () => fn(scope)) : transaction(db, () => fn(scope))),
  };
  return scope;
}

function sqliteEngine(): Engine {
  return {
    name: 'sqlite',
    start: async () => {},
    stop: async () => {},
    async open() {
      const dir = makeTempDir('svc-contract-');
      const store = openSqliteStore({ dataDir: dir });
      const { db } = store;
      return {
        ...sqliteScope(db),
        exec: async (text, ...params) => {
          db.prepare(text).run(...params);
        },
        rows: async <T>(text: string, ...params: unknown[]) => db.prepare(text).all(...params) as T[],
        async close() {
          store.close();
          fs.rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  };
}

function postgresScope(sql: Queryable): Scope {
  return {
    store: (f) => f.postgres(sql),
    transaction: (fn) =>
      ('savepoint' in sql
        ? (sql as unknown as { savepoint(cb: (s: Queryable) => Promise<unknown>): Promise<unknown> }).savepoint((s) => fn(postgresScope(s)))
        : (sql as Pool).begin((s) => fn(postgresScope(s)))) as never,
  };
}

function postgresEngine(): Engine {
  let server: TestPostgres | undefined;
  let databases = 0;
  const TEMPLATE = 'contract_template';
  return {
    name: 'postgres',
    async start() {
      server = startPostgres();
      server.psql(`CREATE DATABASE ${TEMPLATE}`);
      const pool = connect(`postgres://postgres@localhost/${TEMPLATE}`, { host: server.socketDir, max: 1 });
      try {
        await runPostgresMigrations(pool);
      } finally {
        await pool.end();
      }
    },
    async stop() {
      server?.stop();
    },
    async open() {
      if (!server) throw new Error('postgres engine not started');
      const name = `contract_${++databases}`;
      // A copy of the migrated template: much faster than migrating each database.
      server.psql(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE}`);
      const pool = connect(`postgres://postgres@localhost/${name}`, { host: server.socketDir, max: 4 });
      return {
        ...postgresScope(pool),
        exec: async (text, ...params) => {
          await pool.unsafe(numberedPlaceholders(text), params as never[]);
        },
        rows: async <T>(text: string, ...params: unknown[]) => (await pool.unsafe(numberedPlaceholders(text), params as never[])) as unknown as T[],
        close: () => pool.end(),
      };
    },
  };
}

export function engines(): Engine[] {
  return [sqliteEngine(), postgresEngine()];
}

/**
 * The lifecycle of a contract file's describe block on `engine`: the engine started before its
 * cases and stopped after them; before each case a fresh database, `seed`ed when given; after
 * each, that database closed. The answer stands for the running case's database: each of its
 * methods acts on it, so cases and their helpers use it as they would the database itself.
 */
export function databasePerCase(engine: Engine, seed?: (db: TestDatabase) => Promise<void>): TestDatabase {
  let current: TestDatabase | undefined;
  const db = (): TestDatabase => {
    if (!current) throw new Error('no database outside a case');
    return current;
  };
  beforeAll(() => engine.start(), 60_000);
  afterAll(() => engine.stop());
  beforeEach(async () => {
    current = await engine.open();
    await seed?.(current);
  });
  afterEach(async () => {
    const closing = current;
    current = undefined;
    await closing?.close();
  });
  return {
    store: <T extends object>(factories: StoreFactories<T>) => db().store(factories),
    transaction: <R>(fn: (tx: Scope) => Promise<R>) => db().transaction(fn),
    exec: (text, ...params) => db().exec(text, ...params),
    rows: <T>(text: string, ...params: unknown[]) => db().rows<T>(text, ...params),
    close: () => db().close(),
  };
}

/** Tenants `ids` of `kind`, each named by its id, created and updated `at`. */
export async function seedTenants(db: TestDatabase, ids: readonly string[], at: string, kind = 'sandbox'): Promise<void> {
  for (const id of ids) {
    await db.exec('INSERT INTO tenants (id, kind, display_name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)', id, kind, id, at, at);
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves for everyone once `n` callers have arrived: holds transactions open together. */
export function barrier(n: number): () => Promise<void> {
  let arrived = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  return () => {
    if (++arrived === n) release();
    return all;
  };
}

/**
 * Two transactions that race: `meet` holds each until both are open, `done` holds each commit
 * until both have made their call, or until one is seen waiting for the other's lock (without
 * that, the first could commit before the second even looks).
 */
export function race(db: TestDatabase): { meet: () => Promise<void>; done: () => Promise<unknown> } {
  const both = barrier(2);
  const finished = barrier(2);
  return { meet: both, done: () => lockWaitBefore(db, finished()) };
}

/** How long a test waits for a lock wait that should come before it calls the run a failure. */
const LOCK_WAIT_DEADLINE_MS = 20_000;

/**
 * Whether a backend of this database (PostgreSQL) waits for a lock another transaction holds
 * before `until` settles: polls the server's pg_stat_activity, and answers false as soon as
 * `until` settles without one. Neither within the deadline is an error.
 */
export async function lockWaitBefore(db: TestDatabase, until: Promise<unknown> = new Promise(() => {})): Promise<boolean> {
  let settled = false;
  const over = until.then(
    () => (settled = true),
    () => (settled = true),
  );
  const deadline = Date.now() + LOCK_WAIT_DEADLINE_MS;
  while (!settled) {
    const [r] = await db.rows<{ n: number }>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    );
    if (r && Number(r.n) > 0) return true;
    if (Date.now() > deadline) throw new Error('no transaction waited for a lock, and the awaited work did not finish either');
    await Promise.race([over, sleep(10)]);
  }
  return false;
}

/** A latch a test opens once: `open()` resolves everyone waiting on `opened`. */
export function latch(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

export interface Interleaving<A> {
  /**
   * Whether `second` must wait for a lock `first` holds (the default). With false, `first`
   * stays open until `second` has finished, or is let go when `second` waits after all, so a
   * test expecting no wait fails on the order of events rather than by a timeout.
   */
  secondWaits?: boolean;
  /** Runs in `first`'s transaction once let go: its return commits, a throw rolls back. */
  atEnd?: (result: A) => A | Promise<A>;
}

/**
 * Runs `first` in a transaction that stays open until `second`, in another transaction, is
 * blocked on a lock `first` took (PostgreSQL: it watches the server's lock waits); then ends
 * `first`'s transaction (`atEnd`). Each transaction's outcome, not awaited.
 */
export async function interleave<S extends object, A, B>(
  db: TestDatabase,
  factories: StoreFactories<S>,
  first: (s: S) => Promise<A>,
  second: (s: S) => Promise<B>,
  { secondWaits = true, atEnd = (result) => result }: Interleaving<A> = {},
): Promise<{ first: Promise<A>; second: Promise<B> }> {
  const firstDidIts = latch();
  const released = latch();
  const a = db.transaction(async (tx) => {
    let result: A;
    try {
      result = await first(tx.store(factories));
    } finally {
      firstDidIts.open();
      await released.opened;
    }
    return atEnd(result);
  });
  await firstDidIts.opened;
  const b = db.transaction(async (tx) => second(tx.store(factories)));
  let waited: boolean;
  try {
    waited = await lockWaitBefore(db, b);
  } finally {
    released.open();
  }
  if (secondWaits && !waited) {
    await Promise.all([a, b]); // either one's own failure, if one failed
    throw new Error('the second transaction finished without waiting for a lock the first held');
  }
  return { first: a, second: b };
}

/** interleave(), both outcomes awaited: the results in that order. */
export async function interleaved<S extends object, A, B>(
  db: TestDatabase,
  factories: StoreFactories<S>,
  first: (s: S) => Promise<A>,
  second: (s: S) => Promise<B>,
  options?: Interleaving<A>,
): Promise<[A, B]> {
  const { first: a, second: b } = await interleave(db, factories, first, second, options);
  return Promise.all([a, b]);
}
