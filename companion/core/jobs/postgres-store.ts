/**
 * PostgreSQL implementation of JobStore. Several companion processes share the job tables, so
 * a claim locks the rows it takes with FOR UPDATE SKIP LOCKED (PostgreSQL "The Locking
 * Clause"): concurrent claims take disjoint rows without waiting for each other, and a row
 * whose lease expired is taken by whichever worker gets to it first. Completion and failure
 * stay conditional on the lease owner, as on SQLite.
 */
import type { Queryable } from '../postgres/connect.ts';
import { checkSpec, claimableSql } from './store.ts';
import type { JobRowBase, JobStore, JobTableSpec } from './store.ts';

interface Statements {
  claim: string;
  complete: string;
  fail: string;
  release: string;
  requeue: string;
}

function statementsFor(q: JobTableSpec): Statements {
  checkSpec(q);
  const t = q.table;
  // claimableSql's @now and @limit, numbered; OF j locks the job rows only, not the rows of
  // tables its condition reads (tenant_integrations).
  const due = claimableSql(t, q.claimableWhere).replace(/@now/g, '$2').replace(/@limit/g, '$5');
  return {
    claim: `UPDATE ${t} SET lease_owner = $1, lease_expires_at = $3, run_at = $3, attempt_count = attempt_count + 1, last_attempt_at = $4
            WHERE id IN (${due} FOR UPDATE OF j SKIP LOCKED)
            RETURNING *`,
    complete: `UPDATE ${t} SET status = '${q.doneStatus}', lease_owner = NULL, lease_expires_at = NULL, last_error = NULL, completed_at = $3
               WHERE id = ANY($1::text[]) AND lease_owner = $2 RETURNING id`,
    fail: `UPDATE ${t} SET status = CASE WHEN $3::boolean THEN 'dead' ELSE 'failed' END, run_at = $4,
             lease_owner = NULL, lease_expires_at = NULL, last_error = $5,
             completed_at = CASE WHEN $3::boolean THEN $6 ELSE NULL END
           WHERE id = $1 AND lease_owner = $2`,
    release: `UPDATE ${t} SET lease_owner = NULL, lease_expires_at = NULL, run_at = $3, attempt_count = attempt_count - 1
              WHERE id = $1 AND lease_owner = $2 AND attempt_count > 0`,
    requeue: `UPDATE ${t} SET status = 'pending', attempt_count = 0, run_at = $2, completed_at = NULL
              WHERE id = $1 AND lease_owner IS NULL`,
  };
}

export function createPostgresJobStore(sql: Queryable): JobStore {
  const cache = new Map<string, Statements>();
  const on = (q: JobTableSpec) => {
    let s = cache.get(q.table);
    if (!s) cache.set(q.table, (s = statementsFor(q)));
    return s;
  };
  return {
    async claim(q, { owner, now, until, at, limit }) {
      const rows = (await sql.unsafe(on(q).claim, [owner, now, until, at, limit])) as unknown as JobRowBase[];
      // RETURNING follows no order: hand the rows out in id order, as SQLite does.
      return [...rows].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    },
    async complete(q, ids, owner, at) {
      const rows = await sql.unsafe<{ id: string }[]>(on(q).complete, [ids as string[], owner, at]);
      return rows.map((r) => r.id);
    },
    async fail(q, id, owner, o) {
      return (await sql.unsafe(on(q).fail, [id, owner, o.dead, o.runAt, o.error, o.at])).count === 1;
    },
    async release(q, id, owner, now) {
      await sql.unsafe(on(q).release, [id, owner, now]);
    },
    async requeue(q, id, now) {
      return (await sql.unsafe(on(q).requeue, [id, now])).count === 1;
    },
    async recordTick(r, keep) {
      const [row] = await sql<{ id: number }[]>`INSERT INTO job_ticks (queue, worker, started_at, finished_at, claimed, succeeded, retrying, dead, lease_lost)
        VALUES (${r.queue}, ${r.worker}, ${r.startedAt}, ${r.finishedAt}, ${r.claimed}, ${r.succeeded}, ${r.retrying}, ${r.dead}, ${r.leaseLost})
        RETURNING id`;
      if (row && row.id % 1000 === 0) await sql`DELETE FROM job_ticks WHERE queue = ${r.queue} AND id <= ${row.id - keep}`;
    },
  };
}
