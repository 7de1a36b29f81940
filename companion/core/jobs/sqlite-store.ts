/**
 * SQLite implementation of JobStore: statements prepared once per job table.
 *
 * The claim and the completion are prepared once per row count, with the count written into the
 * statement (a LIMIT, a list of `?`) rather than bound: measured on the webhook table, a claim
 * whose `IN (…LIMIT @limit)` is bound took 80–300 µs more than the same statement with its
 * LIMIT written in, and a completion through json_each more than one with its ids bound one by
 * one. The counts are small (a worker's free slots, a flush's outcomes), so the statements are few.
 */
import type { Sync } from '../async-store.ts';
import type { Db } from '../db.ts';
import { checkSpec, claimableSql } from './store.ts';
import type { JobRowBase, JobStore, JobTableSpec } from './store.ts';

type ClaimParams = { owner: string; now: number; until: number; at: string };

/** Rows completed by one statement at most; a longer list runs in chunks of this many. */
const COMPLETE_CHUNK = 64;

/** `make(n)` prepared once per n. */
function perCount<S>(make: (n: number) => S): (n: number) => S {
  const made = new Map<number, S>();
  return (n) => {
    if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`expected a positive row count, got ${n}`);
    let s = made.get(n);
    if (!s) made.set(n, (s = make(n)));
    return s;
  };
}

function prepareTable(db: Db, q: JobTableSpec) {
  checkSpec(q);
  const t = q.table;
  return {
    // One statement: choosing rows and leasing them is atomic, so two workers never hold the
    // same row (SQLite serialises writers).
    claim: perCount((limit) =>
      db.prepare<ClaimParams, JobRowBase>(
        `UPDATE ${t} SET lease_owner = @owner, lease_expires_at = @until, run_at = @until, attempt_count = attempt_count + 1, last_attempt_at = @at
         WHERE id IN (${claimableSql(t, q.claimableWhere).replace('@limit', String(limit))})
         RETURNING *`,
      ),
    ),
    // Parameters: completed_at, then the ids, then the owner.
    complete: perCount((n) =>
      db
        .prepare<string[], string>(
          `UPDATE ${t} SET status = '${q.doneStatus}', lease_owner = NULL, lease_expires_at = NULL, last_error = NULL, completed_at = ?
           WHERE id IN (${Array<string>(n).fill('?').join(', ')}) AND lease_owner = ?
           RETURNING id`,
        )
        .pluck(),
    ),
    fail: db.prepare<{ id: string; owner: string; dead: number; runAt: number; error: string; at: string }>(
      `UPDATE ${t} SET status = CASE WHEN @dead = 1 THEN 'dead' ELSE 'failed' END, run_at = @runAt,
         lease_owner = NULL, lease_expires_at = NULL, last_error = @error,
         completed_at = CASE WHEN @dead = 1 THEN @at ELSE NULL END
       WHERE id = @id AND lease_owner = @owner`,
    ),
    release: db.prepare<{ id: string; owner: string; now: number }>(
      `UPDATE ${t} SET lease_owner = NULL, lease_expires_at = NULL, run_at = @now, attempt_count = attempt_count - 1
       WHERE id = @id AND lease_owner = @owner AND attempt_count > 0`,
    ),
    requeue: db.prepare<{ id: string; now: number }>(
      `UPDATE ${t} SET status = 'pending', attempt_count = 0, run_at = @now, completed_at = NULL
       WHERE id = @id AND lease_owner IS NULL`,
    ),
  };
}

export function createSqliteJobStore(db: Db): Sync<JobStore> {
  const tables = new Map<string, ReturnType<typeof prepareTable>>();
  const on = (q: JobTableSpec) => {
    let t = tables.get(q.table);
    if (!t) tables.set(q.table, (t = prepareTable(db, q)));
    return t;
  };
  const insertTick = db.prepare(
    `INSERT INTO job_ticks (queue, worker, started_at, finished_at, claimed, succeeded, retrying, dead, lease_lost)
     VALUES (@queue, @worker, @startedAt, @finishedAt, @claimed, @succeeded, @retrying, @dead, @leaseLost)`,
  );
  const pruneTicks = db.prepare('DELETE FROM job_ticks WHERE queue = ? AND id <= ?');
  return {
    claim: (q, { limit, ...lease }) => (limit > 0 ? on(q).claim(limit).all(lease) : []),
    complete(q, ids, owner, at) {
      const done: string[] = [];
      for (let i = 0; i < ids.length; i += COMPLETE_CHUNK) {
        const chunk = ids.slice(i, i + COMPLETE_CHUNK);
        done.push(...on(q).complete(chunk.length).all(at, ...chunk, owner));
      }
      return done;
    },
    fail: (q, id, owner, o) => on(q).fail.run({ id, owner, dead: o.dead ? 1 : 0, runAt: o.runAt, error: o.error, at: o.at }).changes === 1,
    release: (q, id, owner, now) => {
      on(q).release.run({ id, owner, now });
    },
    requeue: (q, id, now) => on(q).requeue.run({ id, now }).changes === 1,
    recordTick(receipt, keep) {
      const id = Number(insertTick.run(receipt).lastInsertRowid);
      if (id % 1000 === 0) pruneTicks.run(receipt.queue, id - keep);
    },
  };
}
