/**
 * Drives a JobQueue. A tick claims due rows with a lease (as many as free slots allow) and
 * starts them; each job settles on its own, so one slow receiver holds one slot, never the
 * whole queue. Outcomes that settle within a millisecond of each other are stored in one
 * transaction, which also writes the run receipts of the ticks now complete and refills the
 * freed slots (group commit, as the sealer does for seals). Besides, the loop polls every
 * `pollMs`, or at once when `wake()` says new work was just committed.
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
  /**
   * Runs one attempt. `signal` aborts at the lease's end or on stop. `shared` is one map for
   * the jobs claimed together, so what they have in common (a target's settings and keys) is
   * looked up once per claim rather than once per job.
   */
  handle(job: ClaimedJob<Row>, signal: AbortSignal, shared: Map<string, unknown>): Promise<JobOutcome>;
  /**
   * Resolves once the claimed rows' own commit is on disk, when it may not be yet (a seal's
   * outbox rows, core/wal-sync.ts); nothing is sent on the strength of a row that could vanish.
   */
  durable?(): Promise<void> | undefined;
  /** Called in the storing transaction after each outcome (e.g. endpoint health bookkeeping). */
  settled?(job: ClaimedJob<Row>, outcome: JobOutcome, stored: StoredOutcome): void;
  leaseMs: number;
  /** Jobs in flight at once. */
  concurrency?: number;
  pollMs?: number;
}

const FLUSH_DELAY_MS = 1;

interface Tick {
  receipt: TickReceipt;
  remaining: number;
  shared: Map<string, unknown>;
  resolve(receipt: TickReceipt): void;
}

interface Settled<Row> {
  job: ClaimedJob<Row>;
  outcome: JobOutcome;
  tick: Tick;
  controller: AbortController;
  done(): void;
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
  #settling: Settled<Row>[] = [];
  #flushScheduled = false;
  #lastTickAt: string | null = null;
  #lastError: string | null = null;

  constructor(options: JobWorkerOptions<Row>) {
    this.#o = options;
    this.#concurrency = options.concurrency ?? 64;
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
    return { name: this.#o.name, running: this.#running, lastTickAt: this.#lastTickAt, lastError: this.#lastError, intervalMs: this.#pollMs };
  }

  /** New work was committed: claim now instead of after the poll interval. */
  wake(): void {
    this.#wakeSleep?.();
  }

  /**
   * Claims what fits in the free slots and starts it. Resolves with the tick's receipt once
   * every job it claimed is stored (tests drive ticks directly and await this).
   */
  tick(): Promise<TickReceipt> {
    const { queue, clock, leaseMs } = this.#o;
    const startedAt = clock.now();
    const free = this.#concurrency - this.#inFlight.size;
    const jobs = free > 0 ? queue.transaction(() => queue.claim(this.owner, startedAt, leaseMs, free)) : [];
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
    return new Promise((resolve) => {
      const tick: Tick = { receipt, remaining: jobs.length, shared: new Map(), resolve };
      for (const job of jobs) this.#start(job, tick);
    });
  }

  #start(job: ClaimedJob<Row>, tick: Tick): void {
    const controller = new AbortController();
    this.#inFlight.set(controller, this.#runOne(job, tick, controller));
  }

  async #runOne(job: ClaimedJob<Row>, tick: Tick, controller: AbortController): Promise<void> {
    // The lease bounds the attempt: past it another worker may claim the row.
    const deadline = setTimeout(() => controller.abort(), Math.max(1, this.#o.leaseMs - 250));
    let outcome: JobOutcome;
    try {
      await this.#o.durable?.();
      outcome = await this.#o.handle(job, controller.signal, tick.shared);
    } catch (err) {
      this.#o.log.error('job handler threw', { queue: this.#o.queue.table, job: job.row.id, ...errorFields(err) });
      outcome = { ok: false, error: 'internal error while running the job' };
    } finally {
      clearTimeout(deadline);
    }
    await new Promise<void>((done) => {
      this.#settling.push({ job, outcome, tick, controller, done });
      if (this.#flushScheduled) return;
      this.#flushScheduled = true;
      // A short wait lets the other jobs in flight settle into the same commit: one commit
      // per batch instead of one per job.
      setTimeout(() => this.#flush(), FLUSH_DELAY_MS);
    });
  }

  /** Stores every outcome settled since the last flush, then refills the slots, in one transaction. */
  #flush(): void {
    this.#flushScheduled = false;
    const batch = this.#settling.splice(0);
    const { queue, clock, log, receipts } = this.#o;
    const finished: Tick[] = [];
    try {
      queue.transaction(() => {
        const now = clock.now();
        for (const { job, outcome, tick, controller } of batch) {
          this.#inFlight.delete(controller);
          if (this.#stopping && controller.signal.aborted) {
            queue.release(job); // stopped mid-attempt: hand it back untried
          } else {
            const stored: StoredOutcome = outcome.ok ? (queue.complete(job, now) ? 'succeeded' : 'lease_lost') : queue.fail(job, outcome.error, now);
            if (stored === 'succeeded') tick.receipt.succeeded++;
            else if (stored === 'retrying') tick.receipt.retrying++;
            else if (stored === 'dead') tick.receipt.dead++;
            else tick.receipt.leaseLost++;
            this.#o.settled?.(job, outcome, stored);
          }
          if (--tick.remaining === 0) {
            tick.receipt.finishedAt = now.toISOString();
            receipts.record(tick.receipt);
            finished.push(tick);
          }
        }
        if (this.#running) void this.tick();
      });
      this.#lastError = null;
    } catch (err) {
      // The database is gone (shutdown) or failing: the leases expire and the jobs run again.
      for (const { controller } of batch) this.#inFlight.delete(controller);
      this.#lastError = err instanceof Error ? err.message : String(err);
      log.error('job outcomes not stored', { queue: queue.table, jobs: batch.length, ...errorFields(err) });
    }
    for (const tick of finished) tick.resolve(tick.receipt);
    for (const item of batch) item.done();
  }

  async #run(): Promise<void> {
    while (this.#running) {
      try {
        // Flushes refill the slots as jobs finish; the loop also claims when woken or on its
        // poll, so new work never waits behind a slow job in flight.
        if (this.#inFlight.size < this.#concurrency) void this.tick();
        this.#lastError = null;
      } catch (err) {
        this.#lastError = err instanceof Error ? err.message : String(err);
        this.#o.log.error('job tick failed', { queue: this.#o.queue.table, ...errorFields(err) });
      }
      if (!this.#running) break;
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
