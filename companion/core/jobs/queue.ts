/**
 * A leased job queue over one table, in the style of graphile-worker: a worker claims
 * due rows with a lease (owner + expiry), and only the lease holder may complete or fail them.
 * A worker that dies mid-job (kill -9) simply stops renewing nothing: its lease expires and
 * another worker claims the row again, so every job runs at least once and none is lost.
 *
 * The table is the capability's own (webhook deliveries, route dispatches); it needs these
 * columns, named as here:
 *   id TEXT PRIMARY KEY, status TEXT ('pending' | '<done>' | 'failed' | 'dead'),
 *   attempt_count INTEGER, run_at INTEGER (Unix ms), lease_owner TEXT, lease_expires_at INTEGER,
 *   last_error TEXT, last_attempt_at TEXT, completed_at TEXT
 * `pending` has not been tried yet (or was requeued), `failed` waits for its retry, `dead` is
 * the dead letter. attempt_count rises when a row is claimed, so a crash mid-attempt counts.
 *
 * The statements are the engine's (./store.ts JobStore); every call runs in the transaction
 * it is handed, so a claim or an outcome commits together with what the caller writes.
 */
import type { RetrySchedule } from './backoff.ts';
import { retryDelayMs } from './backoff.ts';
import { checkSpec } from './store.ts';
import type { JobStore, JobTableSpec } from './store.ts';

/** The columns a job table must have (above), as a row type the capability's row extends. */
export interface JobRow<Done extends string = string> {
  id: string;
  status: 'pending' | Done | 'failed' | 'dead';
  attempt_count: number;
  run_at: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  last_error: string | null;
  last_attempt_at: string | null;
  completed_at: string | null;
}

export interface JobQueueOptions extends JobTableSpec {
  schedule: RetrySchedule;
  random?: () => number;
}

export interface ClaimedJob<Row> {
  row: Row;
  /** This attempt's number, 1-based. */
  attempt: number;
  owner: string;
  leaseExpiresAt: number;
}

export type FailOutcome = 'retrying' | 'dead' | 'lease_lost';

/** What the queue's calls need of a transaction: the job statements. */
interface JobTx {
  readonly jobs: JobStore;
}

export class JobQueue<Row extends { id: string; attempt_count: number }> {
  readonly table: string;
  readonly schedule: RetrySchedule;
  readonly #spec: JobTableSpec;
  readonly #random: () => number;

  constructor(options: JobQueueOptions) {
    this.#spec = { table: options.table, doneStatus: options.doneStatus, claimableWhere: options.claimableWhere };
    checkSpec(this.#spec);
    this.table = options.table;
    this.schedule = options.schedule;
    this.#random = options.random ?? Math.random;
  }

  /**
   * Puts finished or dead-lettered rows back to pending with a fresh retry plan (dead-letter
   * requeue, replay). Leased rows are left alone: they are being tried right now.
   */
  async requeue(tx: JobTx, ids: readonly string[], now: Date): Promise<number> {
    let n = 0;
    for (const id of ids) if (await tx.jobs.requeue(this.#spec, id, now.getTime())) n++;
    return n;
  }

  /** Leases up to `limit` due rows to `owner` until now + leaseMs. */
  async claim(tx: JobTx, owner: string, now: Date, leaseMs: number, limit: number): Promise<ClaimedJob<Row>[]> {
    const until = now.getTime() + leaseMs;
    const rows = (await tx.jobs.claim(this.#spec, { owner, now: now.getTime(), until, at: now.toISOString(), limit })) as Row[];
    return rows.map((row) => ({ row, attempt: row.attempt_count, owner, leaseExpiresAt: until }));
  }

  /**
   * Marks the jobs done, all in one statement; returns the ids whose lease was lost (another
   * worker holds those rows now, and they are left alone).
   */
  async complete(tx: JobTx, jobs: readonly ClaimedJob<Row>[], owner: string, now: Date): Promise<Set<string>> {
    const lost = new Set(jobs.map((j) => j.row.id));
    if (lost.size === 0) return lost;
    for (const id of await tx.jobs.complete(this.#spec, [...lost], owner, now.toISOString())) lost.delete(id);
    return lost;
  }

  /**
   * Schedules the retry, or dead-letters the job after its last attempt. A receiver that asked
   * for a later retry (Retry-After) gets it, up to the schedule's cap.
   */
  async fail(tx: JobTx, job: ClaimedJob<Row>, error: string, now: Date, notBeforeMs = 0): Promise<FailOutcome> {
    const dead = job.attempt >= this.schedule.maxAttempts;
    const delay = Math.max(retryDelayMs(job.attempt, this.schedule, this.#random), Math.min(notBeforeMs, this.schedule.capMs));
    const runAt = dead ? now.getTime() : now.getTime() + delay;
    const held = await tx.jobs.fail(this.#spec, job.row.id, job.owner, { dead, runAt, error: error.slice(0, 500), at: now.toISOString() });
    if (!held) return 'lease_lost';
    return dead ? 'dead' : 'retrying';
  }

  release(tx: JobTx, job: ClaimedJob<Row>, now: Date): Promise<void> {
    return tx.jobs.release(this.#spec, job.row.id, job.owner, now.getTime());
  }
}
