/**
 * What the leased job queue (./queue.ts) needs from storage, independent of the engine: the
 * statements on one job table, named by its spec, and the tick run receipts. The SQLite
 * implementation is ./sqlite-store.ts, the PostgreSQL one ./postgres-store.ts.
 */

/** A capability's job table (webhook deliveries, route dispatches); columns as in ./queue.ts. */
export interface JobTableSpec {
  table: string;
  /** Status of a finished job, e.g. 'delivered'. */
  doneStatus: string;
  /** Extra SQL condition on claimable rows, over the table aliased `j` (e.g. skip disabled targets). */
  claimableWhere?: string | undefined;
}

export interface JobRowBase {
  id: string;
  attempt_count: number;
}

export interface TickReceipt {
  queue: string;
  worker: string;
  startedAt: string;
  finishedAt: string;
  claimed: number;
  succeeded: number;
  retrying: number;
  dead: number;
  leaseLost: number;
}

export interface JobStore {
  /**
   * Leases up to `limit` due rows (run_at <= now, no live lease, claimableWhere), taken in
   * (run_at, id) order, to `owner` until `until`, raising attempt_count; returns them as leased,
   * in id order. Two workers never lease the same row. A leased row's run_at becomes `until`:
   * it is due again exactly when its lease runs out, and until then it sits past `now` in the
   * due index, so a claim never reads over the rows in flight (they would otherwise stay at
   * the front of the index and be skipped one by one by every claim).
   */
  claim(q: JobTableSpec, lease: { owner: string; now: number; until: number; at: string; limit: number }): Promise<JobRowBase[]>;
  /** Marks the rows done, in one statement; returns the ids `owner` still held (the others are not touched). */
  complete(q: JobTableSpec, ids: readonly string[], owner: string, at: string): Promise<string[]>;
  /** Schedules the retry at `runAt`, or dead-letters it; false when `owner` no longer holds it. */
  fail(q: JobTableSpec, id: string, owner: string, outcome: { dead: boolean; runAt: number; error: string; at: string }): Promise<boolean>;
  /** Hands a row back untried (shutdown), due at `now`: the attempt did not happen. */
  release(q: JobTableSpec, id: string, owner: string, now: number): Promise<void>;
  /** Back to pending with a fresh retry plan, unless leased right now; false when it was. */
  requeue(q: JobTableSpec, id: string, now: number): Promise<boolean>;
  /** Stores a tick's receipt, keeping about the newest `keep` of its queue. */
  recordTick(receipt: TickReceipt, keep: number): Promise<void>;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/** Table and status names go into SQL text: plain lowercase identifiers only. */
export function checkSpec(q: JobTableSpec): void {
  if (!IDENTIFIER.test(q.table) || !IDENTIFIER.test(q.doneStatus)) {
    throw new TypeError(`expected a lowercase SQL identifier, got ${JSON.stringify(q.table)} / ${JSON.stringify(q.doneStatus)}`);
  }
}

/**
 * The rows a claim takes, in the order it takes them, with named parameters @now and @limit
 * (the SQLite form; ./postgres-store.ts numbers them). A job table needs an index on
 * (run_at, id) over its claimable statuses for this to read only the rows it returns.
 */
export function claimableSql(table: string, claimableWhere?: string): string {
  const extra = claimableWhere ? ` AND (${claimableWhere})` : '';
  return `SELECT j.id FROM ${table} j
         WHERE j.status IN ('pending', 'failed') AND j.run_at <= @now
           AND (j.lease_expires_at IS NULL OR j.lease_expires_at <= @now)${extra}
         ORDER BY j.run_at, j.id LIMIT @limit`;
}
