/**
 * The two engines a capability's store must behave the same on: SQLite (the embedded default,
 * better-sqlite3 lifted onto the async boundary) and PostgreSQL (Debian's server, started per
 * test file from test/helpers/postgres.ts). A contract test runs every case on both, through
 * `describe.each(engines())`; each case gets a fresh, fully migrated database.
 */
import fs from 'node:fs';
import type { Sync } from '../../../companion/core/async-store.ts';
import { promised } from '../../../companion/core/async-store.ts';
import type { Db } from '../../../companion/core/db.ts';
import { connect } from '../../../companion/core/postgres/connect.ts';
import type { Pool, Queryable } from '../../../companion/core/postgres/connect.ts';
import { runPostgresMigrations } from '../../../companion/core/postgres/migrations.ts';
import { savepoint, transaction } from '../../../companion/core/sqlite-transaction.ts';
import { openSqliteStore } from '../../../companion/store.ts';
import { startPostgres } from '../../helpers/postgres.ts';
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

/** `?` placeholders as PostgreSQL's $1, $2, … (seed SQL has no `?` inside literals). */
function numbered(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
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
          await pool.unsafe(numbered(text), params as never[]);
        },
        rows: async <T>(text: string, ...params: unknown[]) => (await pool.unsafe(numbered(text), params as never[])) as unknown as T[],
        close: () => pool.end(),
      };
    },
  };
}

export function engines(): Engine[] {
  return [sqliteEngine(), postgresEngine()];
}
