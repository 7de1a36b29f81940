/**
 * The scale-out engine: every capability's store on PostgreSQL (`SVC_DATABASE_URL`), behind
 * the same async boundary as the embedded SQLite store (./store.ts). Several companion
 * processes may share one database; what keeps them exact is in each capability's
 * postgres-store.ts (row locks, conditional updates) and in the migrations' constraints.
 *
 * A transaction holds one pooled connection from BEGIN to COMMIT; its stores are built over
 * that connection, so everything `fn` does through `tx` is in it. Nested transactions are
 * savepoints. A commit is durable when it returns (synchronous_commit on), so `durable()` has
 * nothing to wait for; 'relaxed' bookkeeping commits with synchronous_commit off, the
 * PostgreSQL form of the same trade (PostgreSQL "Asynchronous Commit").
 */
import { createPostgresAccountStore, createPostgresTenantStore } from './account/postgres-store.ts';
import { createPostgresAnchoringStore, prefetchEdge } from './anchoring/postgres-store.ts';
import { createPostgresJobStore } from './core/jobs/postgres-store.ts';
import { databaseUnavailableCode } from './core/database-unavailable.ts';
import { connect, type Pool, type PgTransaction, type Queryable } from './core/postgres/connect.ts';
import { runPostgresMigrations } from './core/postgres/migrations.ts';
import { BatchReads } from './core/postgres/batch-reads.ts';
import type { TenantPrefetch } from './core/postgres/batch-reads.ts';
import { WriteBehind, withWriteBehind } from './core/postgres/write-behind.ts';
import type { StoreCipher } from './core/secrets/envelope.ts';
import { createPostgresKeyHistoryStore } from './core/signers/postgres-key-history.ts';
import { createPostgresIdempotencyStore } from './evidence/idempotency/postgres-store.ts';
import { createPostgresEvidenceStore } from './evidence/postgres-store.ts';
import { createPostgresExportStore } from './exports/postgres-store.ts';
import { createPostgresIntegrationStore } from './integrations/postgres-store.ts';
import { createPostgresUsageStore, prefetchUsage } from './metering/postgres-store.ts';
import { createPostgresPolicyStore } from './policy/postgres-store.ts';
import { createPostgresReviewStore } from './reviews/postgres-store.ts';
import { createPostgresReviewContextStore } from './review-context/postgres-store.ts';
import { createPostgresRoutingStore } from './routing/postgres-store.ts';
import type { PostgresStore, Stores, Tx } from './core/stores.ts';
import { createPostgresWebhookStore, prefetchSubscriptions } from './webhooks/postgres-store.ts';
import { createPostgresSignInStore } from './sign-in/postgres-store.ts';

// The type lives in core (core/stores.ts), for capabilities to name without importing this root.
export type { PostgresStore } from './core/stores.ts';

/**
 * Every capability's store over one connection: the pool, or an open transaction's.
 * `treeCacheKey`: the tenant-log trees' caches to share (anchoring/stored-tree.ts).
 */
export function postgresStores(sql: Queryable, treeCacheKey?: object, cipher?: StoreCipher): Stores {
  return {
    tenants: createPostgresTenantStore(sql),
    account: createPostgresAccountStore(sql),
    evidence: createPostgresEvidenceStore(sql),
    usage: createPostgresUsageStore(sql),
    idempotency: createPostgresIdempotencyStore(sql),
    anchoring: createPostgresAnchoringStore(sql, { treeCacheKey }),
    integrations: createPostgresIntegrationStore(sql),
    webhooks: createPostgresWebhookStore(sql, cipher),
    policy: createPostgresPolicyStore(sql),
    reviews: createPostgresReviewStore(sql),
    reviewContexts: createPostgresReviewContextStore(sql),
    routing: createPostgresRoutingStore(sql),
    exports: createPostgresExportStore(sql),
    productionKeys: createPostgresKeyHistoryStore(sql),
    jobs: createPostgresJobStore(sql),
    signIn: createPostgresSignInStore(sql),
  };
}

/**
 * A transaction's stores. Its savepoints share one tree cache with it, so a batch of seals reads
 * a tenant log's right edge once, not once per seal: by then the sealer holds the tenant's row
 * lock (evidence/postgres-store.ts), so no other process appends to that log until the
 * transaction ends, and a leaf a refused seal's savepoint rolled back is noticed by its size
 * (anchoring/stored-tree.ts). Each transaction starts with empty caches: another process may
 * have appended since the last.
 */
function txOf(sql: PgTransaction, treeCacheKey: object, cipher?: StoreCipher): Tx {
  return { ...postgresStores(sql, treeCacheKey, cipher), transaction: (fn) => sql.savepoint((sp) => fn(txOf(sp, treeCacheKey, cipher))) as Promise<never> };
}

/** A row written behind failed: the transaction is run again with every statement awaited. */
class WrittenBehindFailed extends Error {}

/**
 * The seal pipeline's batches ('deferred': its one transaction per group commit) write their
 * records and tree nodes behind (core/postgres/write-behind.ts), a multi-row INSERT per table
 * instead of a statement per seal. When such an insert fails, the statement that fails next is
 * not the culprit's, so the sealer could not tell which seal to leave out: the transaction is
 * rolled back and `fn` runs again, once, in a transaction that awaits every statement as it is
 * made, where the failure surfaces at the seal that caused it. `fn` must therefore be safe to
 * run twice (the sealer's is: each attempt starts from fresh batch state).
 */
async function writingBehind<T>(sql: Pool, fn: (tx: Tx) => Promise<T>, cipher?: StoreCipher, onlyRecords = false): Promise<T> {
  let buffer: WriteBehind | undefined;
  try {
    const result = (await sql.begin(async (t) => {
      buffer = onlyRecords ? new WriteBehind(t, RECORDS_AND_NODES) : new WriteBehind(t);
      const reads = onlyRecords ? undefined : new BatchReads(t, TENANT_PREFETCH);
      let result: T;
      try {
        result = await fn(txOf(withWriteBehind(t, buffer, reads), {}, cipher));
      } catch (error) {
        // No COMMIT was sent: whatever failed, nothing of this attempt commits. A connection
        // that is gone answers nothing more, so its rows are not waited for.
        if (!lostConnection(error) && (await buffer.failed())) throw new WrittenBehindFailed();
        throw error;
      }
      // The rows left go out now and COMMIT right behind them, in the same round trip. Should one
      // of them fail, PostgreSQL answers that COMMIT by rolling back (the transaction is aborted),
      // which the driver does not tell from a commit: hence the check below, once it answered.
      buffer.send();
      if (onlyRecords && (await buffer.failed())) throw new WrittenBehindFailed();
      return result;
    })) as T;
    // Answered, so every row sent before the COMMIT was answered too: refused, or written.
    if (!(await buffer!.refused())) return result;
  } catch (error) {
    if (!(error instanceof WrittenBehindFailed) && (lostConnection(error) || !(buffer && (await buffer.refused())))) throw error;
  }
  return sql.begin((t) => fn(txOf(t, {}, cipher))) as Promise<T>;
}

/** The database or the connection to it is gone (./core/database-unavailable.ts): the caller answers 503. */
function lostConnection(error: unknown): boolean {
  return databaseUnavailableCode(error) !== undefined;
}

/** What the bench's earlier form of write-behind kept (PostgresStoreOptions writeBehind 'records'). */
const RECORDS_AND_NODES: ReadonlySet<string> = new Set(['sealed_records', 'merkle_nodes']);

/** What a seal batch reads for each tenant together with its lock and log head (core/postgres/batch-reads.ts). */
const TENANT_PREFETCH: readonly TenantPrefetch[] = [prefetchUsage, prefetchSubscriptions, prefetchEdge];

export interface PostgresStoreOptions {
  /**
   * Seal batches write their rows behind and read ahead (writingBehind); default true. For the
   * bench that measures the gains: 'records' writes only records and tree nodes behind, awaits
   * them before the COMMIT and reads nothing ahead, as the first form of it did; false writes
   * each row with a statement of its own.
   */
  writeBehind?: boolean | 'records';
}

export function createPostgresStore(sql: Pool, cipher?: StoreCipher, options: PostgresStoreOptions = {}): PostgresStore {
  const behind = options.writeBehind ?? true;
  const onlyRecords = behind === 'records';
  return {
    engine: 'postgres',
    sql,
    ...postgresStores(sql, undefined, cipher),
    transaction: (fn, options) =>
      behind && options?.sync === 'deferred'
        ? writingBehind(sql, fn, cipher, onlyRecords)
        : (sql.begin(async (t) => {
            if (options?.sync === 'relaxed') await t`SET LOCAL synchronous_commit = off`;
            return fn(txOf(t, {}, cipher));
          }) as Promise<never>),
    durable: () => undefined,
    close: () => sql.end(),
  };
}

export interface OpenPostgresStoreOptions {
  url: string;
  /** Pooled connections; each open transaction holds one. */
  max?: number;
  /** Socket directory or host, overriding the URL's. */
  host?: string;
  /** Seals and opens the secrets the store holds (webhook signing keys); without it, they are refused. */
  storeCipher?: StoreCipher;
}

/**
 * Connects, checks the database's collation and brings its schema up to date. Keyset pages
 * and every text order in the stores assume byte order, SQLite's BINARY: a database created
 * with another collation would order ids and timestamps differently, so it is refused.
 */
export async function openPostgresStore(options: OpenPostgresStoreOptions): Promise<PostgresStore> {
  const sql = connect(options.url, { ...(options.max ? { max: options.max } : {}), ...(options.host ? { host: options.host } : {}) });
  try {
    const [db] = await sql<{ datcollate: string }[]>`SELECT datcollate FROM pg_database WHERE datname = current_database()`;
    if (db?.datcollate !== 'C' && db?.datcollate !== 'POSIX') {
      throw new Error(
        `the database's collation is ${String(db?.datcollate)}; Action Gate needs byte order: create it with CREATE DATABASE … LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`,
      );
    }
    await runPostgresMigrations(sql);
  } catch (err) {
    await sql.end();
    throw err;
  }
  return createPostgresStore(sql, options.storeCipher);
}
