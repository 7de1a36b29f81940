/**
 * Reads a seal batch makes ahead (PostgreSQL): once a batch has locked a tenant and asked for
 * its log head (../../evidence/postgres-store.ts), the rows its seals will read next are known:
 * the tenant's usage counters, its webhook subscriptions, its log's right edge. Each capability's
 * store registers what it reads for a tenant (a TenantPrefetch), and they are all written to the
 * connection together with the lock and the head read, so the batch waits for one round trip
 * where it waited for five; each store's read then answers from what came back.
 *
 * Every prefetched statement runs after the tenant's lock statement on the same connection, so
 * it reads what a statement made at that point would (READ COMMITTED: a snapshot per statement,
 * taken once the lock is held). What stays true after that point:
 * - `fixed` reads (tree nodes, records' attestation hashes) are of rows that never change once
 *   committed, so they hold for the whole transaction.
 * - `fresh` reads (counters, subscriptions) may be changed by this transaction's own writes, so
 *   they are forgotten at its next statement that is not a read (withWriteBehind tells `wrote`);
 *   rows written behind are to tables whose readers account for them (metering's counters,
 *   ../../metering/postgres-store.ts). Another transaction's commit after the prefetch is seen
 *   as by a read made just before it, which READ COMMITTED allows and the tenant's row lock
 *   makes moot for the rows only its sealers write.
 */
import type { PgTransaction, Queryable } from './connect.ts';

/** Writes the reads a store will want for `tenantId` to the connection, each kept in `reads`. */
export type TenantPrefetch = (sql: PgTransaction, tenantId: string, reads: BatchReads) => void;

const registry = new WeakMap<object, BatchReads>();

export class BatchReads {
  readonly #sql: PgTransaction;
  readonly #prefetch: readonly TenantPrefetch[];
  readonly #fresh = new Map<string, Promise<unknown>>();
  readonly #fixed = new Map<string, Promise<unknown>>();

  constructor(sql: PgTransaction, prefetch: readonly TenantPrefetch[]) {
    this.#sql = sql;
    this.#prefetch = prefetch;
  }

  /** Called after the tenant's lock and head statements were written: writes every store's reads. */
  tenant(tenantId: string): void {
    for (const prefetch of this.#prefetch) prefetch(this.#sql, tenantId, this);
  }

  /** Keeps a read's answer under `key`; one never asked for must not fail the process. */
  put(key: string, answer: Promise<unknown>, kind: 'fresh' | 'fixed'): void {
    answer.catch(() => {});
    (kind === 'fresh' ? this.#fresh : this.#fixed).set(key, answer);
  }

  /** The answer kept under `key`, or undefined: read it from the database. */
  get<T>(key: string): Promise<T> | undefined {
    return (this.#fresh.get(key) ?? this.#fixed.get(key)) as Promise<T> | undefined;
  }

  /** A statement that may write was made: the fresh reads may be stale. */
  wrote(): void {
    this.#fresh.clear();
  }
}

/** Makes `reads` the batch reads of the transaction view `sql`. */
export function attachBatchReads(sql: Queryable, reads: BatchReads): void {
  registry.set(sql, reads);
}

/** The batch reads of a transaction view, or undefined: read from the database. */
export function batchReads(sql: Queryable): BatchReads | undefined {
  return registry.get(sql);
}

/** A statement's text starts with SELECT: it changes no row this transaction reads ahead. */
export function isRead(strings: unknown): boolean {
  const first = Array.isArray(strings) ? (strings as readonly string[])[0] : undefined;
  return typeof first === 'string' && /^\s*SELECT\s/i.test(first);
}
