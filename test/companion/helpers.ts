/**
 * A real companion for in-process tests: a fresh temporary data directory, a real SQLite file
 * (or, with SVC_TEST_DATABASE=postgres, a database of its own on a real PostgreSQL server) with
 * the real migrations, the real signing keys and the real app wiring (companion/deps.ts),
 * driven through `app.request(...)`. No component of ours is mocked.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp } from '../../companion/app.ts';
import type { App } from '../../companion/app.ts';
import { generateApiKey } from '../../companion/core/auth.ts';
import { ManualClock } from '../../companion/core/clock.ts';
import { loadConfig } from '../../companion/core/config.ts';
import type { Config } from '../../companion/core/config.ts';
import { createMemoryLogger } from '../../companion/core/log.ts';
import { openApiDocument } from '../../companion/core/openapi.ts';
import type { MemoryLogger } from '../../companion/core/log.ts';
import type { WalSyncOptions } from '../../companion/core/wal-sync.ts';
import { closeDeps, openDeps, openSqliteDeps } from '../../companion/deps.ts';
import type { AppDeps } from '../../companion/deps.ts';
import type { PostgresStore } from '../../companion/postgres-store.ts';
import type { SqliteStore } from '../../companion/store.ts';
import { assertDescribed } from '../helpers/described-responses.ts';
import { inject } from 'vitest';
import { numberedPlaceholders, postgresAt } from '../helpers/postgres.ts';

export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  /** Parsed JSON when the body is JSON or problem+json, else the text. */
  body: T;
  text: string;
}

export interface RequestOptions {
  method?: string;
  /** Serialised as JSON with content-type application/json unless `raw` is given. */
  json?: unknown;
  raw?: BodyInit;
  headers?: Record<string, string>;
  /** Sent as X-Service-Key. */
  key?: string;
}

export interface SignupResult {
  apiKey: string;
  tenantId: string;
  email: string;
  body: any;
}

export interface TestContext {
  dataDir: string;
  config: Config;
  deps: AppDeps & { store: SqliteStore };
  store: SqliteStore;
  app: App;
  clock: ManualClock;
  log: MemoryLogger;
  request<T = any>(pathAndQuery: string, options?: RequestOptions): Promise<TestResponse<T>>;
  /** A fresh sandbox tenant; a unique email unless one is given. */
  signup(email?: string): Promise<SignupResult>;
  /**
   * A production tenant with a svc_live_ key, written directly as rows and without a person, as tenants created before the people model are (account-upgrade.test.ts
   * drives the real upgrade flow).
   */
  productionTenant(): { apiKey: string; tenantId: string };
  /** The engine this context's database is on (SVC_TEST_DATABASE). */
  engine: 'sqlite' | 'postgres';
  /**
   * One SQL statement on this context's database, whichever the engine: for the rows a test
   * arranges or inspects that no store method answers. Written once for both engines: `?`
   * placeholders (numbered for PostgreSQL), no rowid or pragma, and a CAST to INTEGER around
   * sums (PostgreSQL's sum of a bigint is numeric, which the driver returns as a string).
   * Rows come back as objects, BLOB and bytea both as Buffers; a statement that returns no
   * rows answers [].
   */
  sql<T = Record<string, unknown>>(query: string, ...params: unknown[]): Promise<T[]>;
  /** Every table's rows, tables by name: to show that a request changed nothing stored. */
  dump(): Promise<{ table: string; rows: Record<string, unknown>[] }[]>;
  /**
   * Everything the database holds, as bytes, for the tests that a value is never stored: on
   * SQLite its files (the main file, the WAL and its index, so rows not yet checkpointed count);
   * on PostgreSQL every row of every table, bytea as its raw bytes.
   */
  storedBytes(): Promise<{ name: string; bytes: Buffer }[]>;
  /** Stops lifecycle hooks, closes the database and removes the data directory. */
  close(): Promise<void>;
}

export interface TestContextOptions {
  /** Extra environment, e.g. { SVC_MAX_BODY_BYTES: '2048' }. */
  env?: Record<string, string>;
  /** Reuse a data directory (e.g. to test restarts); it is then not removed on close... */
  dataDir?: string;
  /** ...unless this context takes it over: close() then removes it and its database. */
  takeOver?: boolean;
  /** A stand-in for the disk's fdatasync (wal-sync.test.ts). */
  walSync?: WalSyncOptions;
}

let emailCounter = 0;

export function makeTempDir(label = 'svc-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), label));
}

export async function createTestContext(options: TestContextOptions = {}): Promise<TestContext> {
  const ownsDir = options.dataDir === undefined || options.takeOver === true;
  const dataDir = options.dataDir ?? makeTempDir();
  const database = onPostgres() ? postgresDatabase(dataDir) : undefined;
  /** What this context made for itself, removed by close() (once, however often it is called) or when it fails to start. */
  let removed = false;
  const removeOwn = () => {
    if (!ownsDir || removed) return;
    removed = true;
    database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  const clock = new ManualClock('2025-01-01T00:00:00.000Z');
  const log = createMemoryLogger();
  // A bundle of the sealing thread built once per run (test/helpers/seal-thread-global-setup.ts), when the run has one.
  const sealThreadEntry = inject('sealThreadEntry');
  const depsOptions = {
    clock,
    log,
    ...(options.walSync ? { walSync: options.walSync } : {}),
    ...(sealThreadEntry ? { sealThreadEntry: new URL(sealThreadEntry) } : {}),
  };
  let config: Config;
  let deps: Awaited<ReturnType<typeof openSqliteDeps>>;
  try {
    config = loadConfig(
      { SVC_DATA_DIR: dataDir, PORT: '0', SVC_SEAL_THREAD: onSealThread() ? '1' : '0', SVC_SIGNUP_RATE_PER_MINUTE: '0', ...(database ? { SVC_DATABASE_URL: database.url } : {}), ...options.env },
      [],
    );
    // On PostgreSQL `store` is that engine's: the files run there use only the engine-neutral
    // members (the vitest project api-on-postgres lists them).
    deps = database ? ((await openDeps(config, depsOptions)) as Awaited<ReturnType<typeof openSqliteDeps>>) : await openSqliteDeps(config, depsOptions);
  } catch (err) {
    removeOwn();
    throw err;
  }
  const app = createApp(deps);

  let description: ReturnType<typeof openApiDocument> | undefined;

  /** Every response is checked against the app's own OpenAPI description (described-responses.ts). */
  async function request<T = any>(pathAndQuery: string, opts: RequestOptions = {}): Promise<TestResponse<T>> {
    const headers = new Headers(opts.headers);
    let body: BodyInit | undefined = opts.raw;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    }
    if (opts.key !== undefined) headers.set('x-service-key', opts.key);
    const method = opts.method ?? (body === undefined ? 'GET' : 'POST');
    const res = await app.request(pathAndQuery, { method, headers, body });
    const text = await res.text();
    const type = res.headers.get('content-type') ?? '';
    description ??= openApiDocument(app);
    assertDescribed(description, { method, path: new URL(pathAndQuery, 'http://localhost').pathname, status: res.status, contentType: res.headers.get('content-type'), text });
    const parsed = /json/.test(type) && text !== '' ? JSON.parse(text) : text;
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }

  async function signup(email = `person${++emailCounter}.${process.pid}@example.com`): Promise<SignupResult> {
    const res = await request('/signup/checkout', { json: { email } });
    if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${res.text}`);
    return { apiKey: res.body.api_key, tenantId: res.body.tenant_id, email, body: res.body };
  }

  function productionTenant(): { apiKey: string; tenantId: string } {
    const now = deps.clock.now().toISOString();
    const tenantId = deps.ids.next('ten');
    const key = generateApiKey('production');
    // Synchronous, so tests can call it anywhere: raw rows on the connection, in one transaction.
    if (database) {
      database.psql(`INSERT INTO tenants (id, kind, display_name, retain_statutory_metadata, created_at, updated_at) VALUES ('${tenantId}', 'production', 'Production tenant', 0, '${now}', '${now}');
        INSERT INTO api_keys (id, tenant_id, key_sha256, prefix, last_four, created_at) VALUES ('${deps.ids.next('key')}', '${tenantId}', '\\x${Buffer.from(key.hash).toString('hex')}', '${key.prefix}', '${key.lastFour}', '${now}');`);
      return { apiKey: key.key, tenantId };
    }
    const { db } = deps.store;
    db.transaction(() => {
      db.prepare("INSERT INTO tenants (id, kind, display_name, retain_statutory_metadata, created_at, updated_at) VALUES (?, 'production', 'Production tenant', 0, ?, ?)")
        .run(tenantId, now, now);
      db.prepare('INSERT INTO api_keys (id, tenant_id, key_sha256, prefix, last_four, created_at, person_id) VALUES (?, ?, ?, ?, ?, ?, NULL)')
        .run(deps.ids.next('key'), tenantId, Buffer.from(key.hash), key.prefix, key.lastFour, now);
    })();
    return { apiKey: key.key, tenantId };
  }

  const store = deps.store as unknown as SqliteStore | PostgresStore;

  async function sql<T>(query: string, ...params: unknown[]): Promise<T[]> {
    // The driver's result is an array with the command's details attached: the rows alone.
    if (store.engine === 'postgres') return [...(await store.sql.unsafe(numberedPlaceholders(query), params as never[]))] as T[];
    // Through the store's connection lock, so it never runs inside a transaction in flight.
    return store.withConnection((db) => {
      const statement = db.prepare(query);
      if (statement.reader) return statement.all(...params) as T[];
      statement.run(...params);
      return [];
    });
  }

  async function dump(): Promise<{ table: string; rows: Record<string, unknown>[] }[]> {
    const tables = await sql<{ name: string }>(
      store.engine === 'sqlite'
        ? "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
        : 'SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename',
    );
    const out = [];
    for (const { name } of tables) out.push({ table: name, rows: await sql<Record<string, unknown>>(`SELECT * FROM "${name}"`) });
    return out;
  }

  async function storedBytes(): Promise<{ name: string; bytes: Buffer }[]> {
    if (store.engine === 'sqlite') {
      return fs
        .readdirSync(dataDir)
        .filter((f) => f.startsWith(path.basename(store.file)))
        .map((f) => ({ name: f, bytes: fs.readFileSync(path.join(dataDir, f)) }));
    }
    const text = (v: unknown) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));
    return (await dump()).map(({ table, rows }) => ({
      name: table,
      bytes: Buffer.concat(rows.flatMap((row) => Object.values(row).map((v) => (Buffer.isBuffer(v) ? v : Buffer.from(text(v)))))),
    }));
  }

  return {
    dataDir,
    config,
    deps,
    store: deps.store,
    app,
    clock,
    log,
    request,
    signup,
    productionTenant,
    engine: store.engine,
    sql,
    dump,
    storedBytes,
    async close() {
      try {
        await closeDeps(deps);
      } finally {
        removeOwn();
      }
    },
  };
}

/**
 * SVC_TEST_SEAL_THREAD=1 seals on the sealing thread (seal-thread/), as the service does by
 * default; otherwise on the request thread, since each thread takes about a second to start
 * from source (the vitest project api-on-seal-thread runs the API files with it, each thread
 * started from a bundle its global setup builds once).
 */
export function onSealThread(): boolean {
  return process.env.SVC_TEST_SEAL_THREAD === '1';
}

/** SVC_TEST_DATABASE=postgres runs the test contexts on PostgreSQL instead of SQLite. */
function onPostgres(): boolean {
  return process.env.SVC_TEST_DATABASE === 'postgres';
}

interface TestDatabase {
  url: string;
  psql(sql: string): string;
  drop(): void;
}

/** One database per data directory, so a context reopened on a directory (a restart) finds its rows. */
const databases = new Map<string, TestDatabase>();
let databasesMade = 0;

/** The data directory's database on the run's PostgreSQL server (the companion migrates it at start). */
function postgresDatabase(dataDir: string): TestDatabase {
  const known = databases.get(dataDir);
  if (known) return known;
  const socketDir = inject('postgresSocketDir');
  if (!socketDir) throw new Error('no PostgreSQL server for this run: SVC_TEST_DATABASE=postgres needs the global setup of the vitest project api-on-postgres');
  const server = postgresAt(socketDir);
  const name = `ctx_${process.pid}_${++databasesMade}`;
  server.psql(`CREATE DATABASE ${name}`);
  const database: TestDatabase = {
    url: `postgres:///${name}?host=${encodeURIComponent(server.socketDir)}&user=postgres`,
    psql: (sql) => server.psql(`\\c ${name}\n${sql}`),
    drop: () => {
      databases.delete(dataDir);
      server.psql(`DROP DATABASE ${name} WITH (FORCE)`);
    },
  };
  databases.set(dataDir, database);
  return database;
}

/** A fresh context with one signed-up sandbox tenant: the setup most API tests start from. */
export async function freshTenantContext(options: TestContextOptions = {}): Promise<{ ctx: TestContext; key: string; tenantId: string }> {
  const ctx = await createTestContext(options);
  const { apiKey: key, tenantId } = await ctx.signup();
  return { ctx, key, tenantId };
}
