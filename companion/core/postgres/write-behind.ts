/**
 * Rows a transaction writes behind (PostgreSQL): a seal batch inserts a record per seal and a
 * Merkle node every few seals, and on PostgreSQL each statement is a round trip made while the
 * batch holds its tenants' row locks (../../evidence/postgres-store.ts). A transaction opened
 * with a WriteBehind keeps such rows instead, per table, and sends each table's rows as one
 * multi-row INSERT just before the next statement of the transaction and before its COMMIT:
 * a batch of 64 seals then inserts its records in one statement, not 64.
 *
 * Nothing waits for those inserts when they are sent: the connection runs its statements in the
 * order they are written to it, so every later statement of the transaction (a read of the
 * records, a row that references one) runs after them and sees them, and the last of them go
 * out with the COMMIT right behind them. What it costs: a failing insert is noticed after the
 * seal that wrote the row has returned, and it aborts the transaction (PostgreSQL fails every
 * statement after it until ROLLBACK, and answers a COMMIT by rolling back), so whichever later
 * statement fails is not the culprit's. A transaction whose buffered insert failed is therefore
 * rolled back and run again with every statement awaited as it is made (writingBehind in
 * ../../postgres-store.ts), where the failure surfaces at the seal that caused it.
 *
 * Besides inserts, a table's rows may be one upsert per key (usage counters, tenant-log sizes,
 * idempotency keys): its insert function then merges a batch's rows per key first, since ON
 * CONFLICT DO UPDATE may not touch one row twice in a statement. Reads the batch makes ahead
 * are in ./batch-reads.ts.
 */
import { databaseUnavailableCode } from '../database-unavailable.ts';
import { attachBatchReads, isRead } from './batch-reads.ts';
import type { BatchReads } from './batch-reads.ts';
import type { PgTransaction, Queryable } from './connect.ts';

/** One table's buffered rows and the statement that inserts a list of them. */
interface Table {
  insert(sql: PgTransaction, rows: unknown[][]): PromiseLike<unknown> & { execute(): unknown };
  rows: unknown[][];
}

const buffers = new WeakMap<object, WriteBehind>();

export class WriteBehind {
  readonly #sql: PgTransaction;
  readonly #tables = new Map<string, Table>();
  readonly #sent: Promise<unknown>[] = [];
  #failure: { error: unknown } | undefined;

  readonly #tablesAllowed: ReadonlySet<string> | undefined;

  /** `only`: the tables whose rows are kept; others are written at once (the bench's earlier form). */
  constructor(sql: PgTransaction, only?: ReadonlySet<string>) {
    this.#sql = sql;
    this.#tablesAllowed = only;
  }

  /**
   * Keeps `row` for the table `key`, inserted with others by `insert`, which must be the same
   * function for every row of one key and write the rows in their order. False when this
   * buffer keeps no rows of that table: write it at once.
   */
  add(key: string, insert: Table['insert'], row: unknown[]): boolean {
    if (this.#tablesAllowed && !this.#tablesAllowed.has(key)) return false;
    let table = this.#tables.get(key);
    if (!table) this.#tables.set(key, (table = { insert, rows: [] }));
    table.rows.push(row);
    return true;
  }

  /** Writes every buffered row to the connection, without waiting for the answers. */
  send(): void {
    for (const table of this.#tables.values()) {
      if (table.rows.length === 0) continue;
      const rows = table.rows;
      table.rows = [];
      const query = table.insert(this.#sql, rows);
      // execute() writes the statement now, so it precedes whatever is written next.
      query.execute();
      this.#sent.push(
        Promise.resolve(query).catch((error: unknown) => {
          this.#failure ??= { error };
        }),
      );
    }
  }

  /** Waits for every insert sent so far; whether one of them failed. */
  async failed(): Promise<boolean> {
    await Promise.all(this.#sent);
    return this.#failure !== undefined;
  }

  /**
   * Waits for every insert sent so far; whether one of them was refused by the database (a
   * constraint, a type), which aborts the transaction, so it commits nothing: not a connection
   * that was cut, after which whether a COMMIT sent with them took effect is unknown.
   */
  async refused(): Promise<boolean> {
    await Promise.all(this.#sent);
    const error = this.#failure?.error as { name?: unknown } | undefined;
    return error?.name === 'PostgresError' && databaseUnavailableCode(error) === undefined;
  }
}

/**
 * The transaction `sql` seen through a WriteBehind: every statement made through it, and every
 * savepoint opened on it, first sends the buffered rows, so it runs after them. Stores built
 * over it find the buffer with `writeBehind`.
 */
export function withWriteBehind(sql: PgTransaction, buffer: WriteBehind, reads?: BatchReads): PgTransaction {
  const sending = new Set<PropertyKey>(['unsafe', 'savepoint', 'file']);
  const view = new Proxy(sql, {
    apply(target, thisArg, args) {
      buffer.send();
      // A statement that may write makes the batch's fresh reads stale (./batch-reads.ts).
      if (reads && !isRead(args[0])) reads.wrote();
      return Reflect.apply(target, thisArg, args) as unknown;
    },
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (!sending.has(key) || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        buffer.send();
        reads?.wrote();
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  buffers.set(view, buffer);
  if (reads) attachBatchReads(view, reads);
  return view;
}

/** The buffer of a transaction seen through withWriteBehind, or undefined: write at once. */
export function writeBehind(sql: Queryable): WriteBehind | undefined {
  return buffers.get(sql);
}
