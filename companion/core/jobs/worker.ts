/**
 * Drives a JobQueue. Each tick claims due rows with a lease (as many as free slots allow) and
 * starts them; each job is completed or failed on its own as soon as it settles, so one slow
 * receiver holds one slot, never the whole queue. A tick's run receipt is written once all its
 * jobs have settled. Between ticks the loop sleeps `pollMs`, unless a slot frees up or `wake()`
 * says new work was just committed.
 *
 * Started and stopped by the service lifecycle only. `stop()` stops claiming, aborts the jobs
 * in flight and hands their rows back untried, so a graceful shutdown neither waits for slow
 * receivers nor burns an attempt; a kill -9 leaves leases that simply expire.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Logger } from '../log.ts';
import { errorFields } from '../log.ts';
import type { WorkerStatus } from '../worker-status.ts';
import type { ClaimedJob, FailOutcome, JobQueue, TickReceipt, TickReceipts } from './queue.ts';

export type JobOutcome = { ok: true } | { ok: false; error: string };
export type StoredOutcome = 'succeeded' | FailOutcome;

export interface JobWorkerOptions<Row extends { id: string; attempt_count: number }> {
  name: string;
  queue: JobQueue<Row>;
  receipts: TickReceipts;
  clock: Clock;
  log: Logger;
  /** Runs one attempt. `signal` aborts at the lease's end or on stop. */
  handle(job: ClaimedJob<Row>, signal: AbortSignal): Promise<JobOutcome>;
  /** Called after each outcome is stored (e.g. endpoint health bookkeeping). */
  settled?(job: ClaimedJob<Row>, outcome: JobOutcome, stored: StoredOutcome): void;
  leaseMs: number;
  /** Jobs in flight at once. */
  concurrency?: number;
  pollMs?: number;
}

export class JobWorker<Row extends { id: string; attempt_count: number }> {
  /** Unique per process start, so a restarted worker never mistakes an old lease for its own. */
  readonly owner: string;
  readonly #o: JobWorkerOptions<Row>;
  readonly #concurrency: number;
  readonly #pollMs: number;
  #running = false;
  #stopping = false;
  #wakeSleep: (() => void) | undefined;
  #loop: Promise<void> | undefined;
  readonly #inFlight = new Map<AbortController, Promise<void>>();
  #lastTickAt: string | null = null;
  #lastError: string | null = null;

  constructor(options: JobWorkerOptions<Row>) {
    this.#o = options;
    this.#concurrency = options.concurrency ?? 32;
    this.#pollMs = options.pollMs ?? 500;
    this.owner = `${options.name}:${process.pid}:${randomBytes(6).toString('hex')}`;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#stopping = true;
    for (const c of this.#inFlight.keys()) c.abort();
    this.#wakeSleep?.();
    await this.#loop;
    await Promise.all(this.#inFlight.values());
  }

  status(): WorkerStatus {
    return { name: this.#o.name, running: this.#running, lastTickAt: this.#lastTickAt, lastError: this.#lastError };
  }

  /** New work was committed: claim now instead of after the poll interval. */
  wake(): void {
    this.#wakeSleep?.();
  }

  /**
   * Claims what fits in the free slots and starts it. Resolves with the tick's receipt once
   * every job it claimed has settled (tests drive ticks directly and await this).
   */
  tick(): Promise<TickReceipt> {
    const { queue, clock, leaseMs } = this.#o;
    const startedAt = clock.now();
    const free = this.#concurrency - this.#inFlight.size;
    const jobs = free > 0 ? queue.claim(this.owner, startedAt, leaseMs, free) : [];
    this.#lastTickAt = startedAt.toISOString();
    const receipt: TickReceipt = {
      queue: queue.table,
      worker: this.owner,
      startedAt: startedAt.toISOString(),
      finishedAt: startedAt.toISOString(),
      claimed: jobs.length,
      succeeded: 0,
      retrying: 0,
      dead: 0,
      leaseLost: 0,
    };
    if (jobs.length === 0) return Promise.resolve(receipt);
    return Promise.all(jobs.map((job) => this.#start(job, receipt))).then(() => {
      receipt.finishedAt = clock.now().toISOString();
      this.#o.receipts.record(receipt);
      return receipt;
    });
  }

  #start(job: ClaimedJob<Row>, receipt: TickReceipt): Promise<void> {
    const controller = new AbortController();
    const done = this.#runOne(job, receipt, controller).finally(() => {
      this.#inFlight.delete(controller);
      this.#wakeSleep?.(); // a slot is free
    });
    this.#inFlight.set(controller, done);
    return done;
  }

  async #runOne(job: ClaimedJob<Row>, receipt: TickReceipt, controller: AbortController): Promise<void> {
    const { queue, clock, log } = this.#o;
    // The lease bounds the attempt: past it another worker may claim the row.
    const deadline = setTimeout(() => controller.abort(), Math.max(1, this.#o.leaseMs - 250));
    let outcome: JobOutcome;
    try {
      outcome = await this.#o.handle(job, controller.signal);
    } catch (err) {
      log.error('job handler threw', { queue: queue.table, job: job.row.id, ...errorFields(err) });
      outcome = { ok: false, error: 'internal error while running the job' };
    } finally {
      clearTimeout(deadline);
    }
    try {
      if (this.#stopping && controller.signal.aborted) {
        queue.release(job); // stopped mid-attempt: hand it back untried
        return;
      }
      const now = clock.now();
      const stored: StoredOutcome = outcome.ok ? (queue.complete(job, now) ? 'succeeded' : 'lease_lost') : queue.fail(job, outcome.error, now);
      if (stored === 'succeeded') receipt.succeeded++;
      else if (stored === 'retrying') receipt.retrying++;
      else if (stored === 'dead') receipt.dead++;
      else receipt.leaseLost++;
      this.#o.settled?.(job, outcome, stored);
    } catch (err) {
      // The database is gone (shutdown) or failing: the lease expires and the job is retried.
      log.error('job outcome not stored', { queue: queue.table, job: job.row.id, ...errorFields(err) });
    }
  }

  async #run(): Promise<void> {
    while (this.#running) {
      let claimed = 0;
      try {
        const free = this.#concurrency - this.#inFlight.size;
        if (free > 0) {
          const before = this.#inFlight.size;
          this.tick().catch((err: unknown) => this.#o.log.error('tick receipt not stored', { queue: this.#o.queue.table, ...errorFields(err) }));
          claimed = this.#inFlight.size - before;
        }
        this.#lastError = null;
      } catch (err) {
        this.#lastError = err instanceof Error ? err.message : String(err);
        this.#o.log.error('job tick failed', { queue: this.#o.queue.table, ...errorFields(err) });
      }
      if (!this.#running) break;
      // Claimed something and slots remain: more may be due right away.
      if (claimed > 0 && this.#inFlight.size < this.#concurrency) continue;
      await this.#sleep(this.#pollMs);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done(): void {
        clearTimeout(timer);
        self.#wakeSleep = undefined;
        resolve();
      }
      this.#wakeSleep = done;
    });
  }
}
