/**
 * The request thread's side of the sealing thread (./thread.ts). Requests that are plain data
 * are posted to the thread and sealed there, so that while a batch commits and its fsync runs,
 * this thread keeps parsing, deciding and answering; a request carrying a function (a review
 * decision's onSealed) is sealed here, on this thread's connection, by the in-process sealer.
 * Both connections write the one SQLite file; each seal transaction takes the write lock before
 * it reads a tenant's log head (core/sqlite-transaction.ts), so a tenant's log stays one
 * gapless chain whichever thread seals.
 *
 * If the thread dies, every seal it had not answered is refused with 503 problem+json (it may
 * or may not have committed: a retry with the same idempotency_key returns the stored answer
 * when it did), later seals run on the request thread, and a new thread is started. Nothing
 * answered is lost: an answer is posted only after its batch is on disk.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Clock } from '../core/clock.ts';
import { systemClock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { ProblemError } from '../core/errors.ts';
import type { Logger } from '../core/log.ts';
import type { WorkerStatus } from '../core/worker-status.ts';
import type { DurabilityBoard } from '../core/wal-sync.ts';
import type { SealParticipant } from '../evidence/participants.ts';
import type { Sealer, SealObserver, SealOutcome, SealPipeline, SealRequest } from '../evidence/sealer.ts';
import type { Store } from '../core/stores.ts';
import { decodeTexts, forThread, fromWire, travels } from './protocol.ts';
import type { CommittedBatch, FromThread, ThreadData, ToThread } from './protocol.ts';

export interface ThreadedSealerDeps {
  config: Config;
  clock: Clock;
  log: Logger;
  /** Seals the requests that cannot travel, on the request thread. */
  local: Sealer;
  /** The same participants as the thread's (../seal-participants.ts), told of its commits. */
  participants: readonly SealParticipant[];
  /** This thread's stores, which the participants refresh. */
  store: Store;
  /** Shared with the request thread's store (core/wal-sync.ts), which watches it. */
  board: DurabilityBoard;
  observer?: SealObserver;
  /** Rows were written for a background worker (its wake-up). */
  wake(queue: 'webhooks' | 'routing'): void;
  /**
   * Where the thread starts, if not at its entry beside this module (threadEntry): the test
   * runs start a bundle of the same sources, built once per run, instead of loading every
   * module through tsx at each start.
   */
  entry?: URL;
}

interface InFlight {
  request: SealRequest;
  resolve(outcome: SealOutcome): void;
  reject(err: unknown): void;
}

/** After the first restart, a thread that keeps dying is restarted at most this often. */
const RESTART_BACKOFF_MAX_MS = 5_000;

/** The thread's entry beside this module: thread.js once built, from source a loader for thread.ts. */
function threadEntry(): URL {
  const fromSource = path.extname(fileURLToPath(import.meta.url)) === '.ts';
  return new URL(fromSource ? './thread-from-source.mjs' : './thread.js', import.meta.url);
}

export class ThreadedSealer implements SealPipeline {
  readonly #deps: ThreadedSealerDeps;
  readonly #inFlight = new Map<number, InFlight>();
  /** In #inFlight, and not yet posted: the requests of this turn (#post). */
  #unsent: { id: number; request: SealRequest }[] = [];
  /** A borrowed clock's time at the last of them (ThreadData borrowedClock). */
  #unsentNow: number | undefined;
  #nextId = 1;
  #worker!: Worker;
  #closing = false;
  /** Between a thread's end and its successor's start: seals run on the request thread. */
  #down = true;
  #restarts = 0;
  #idle: (() => void)[] = [];
  #lastBatchAt: string | null = null;
  #lastError: string | null = null;

  /** A test's clock: each request carries its time to the thread (./protocol.ts ThreadData). */
  readonly #borrowedClock: boolean;

  private constructor(deps: ThreadedSealerDeps) {
    this.#deps = deps;
    this.#borrowedClock = deps.clock !== systemClock;
  }

  /** Starts the sealing thread; resolves once it has opened the database and its keys. */
  static async start(deps: ThreadedSealerDeps): Promise<ThreadedSealer> {
    const sealer = new ThreadedSealer(deps);
    await sealer.#spawn(true);
    return sealer;
  }

  seal(request: SealRequest): Promise<SealOutcome> {
    if (!travels(request) || this.#closing || this.#down) return this.#deps.local.seal(request);
    return new Promise((resolve, reject) => {
      const id = this.#nextId++;
      this.#inFlight.set(id, { request, resolve, reject });
      // After the microtasks of this turn, which carry every request parsed in it to here; a
      // tick runs before any other event, so a thread's exit never finds requests unposted.
      if (this.#unsent.length === 0) process.nextTick(this.#post);
      this.#unsent.push({ id, request: forThread(request) });
      if (this.#borrowedClock) this.#unsentNow = this.#deps.clock.now().getTime();
    });
  }

  /** Posts the requests of this turn to the thread, in one message (./protocol.ts). */
  readonly #post = (): void => {
    const seals = this.#unsent.splice(0);
    if (seals.length === 0) return;
    const now = this.#unsentNow === undefined ? {} : { now: this.#unsentNow };
    try {
      this.#worker.postMessage({ type: 'seal', seals, ...now } satisfies ToThread);
    } catch {
      // One cannot be cloned, a programming error in its caller: each is posted alone, and only
      // what cannot be cloned is refused, like any other error.
      for (const seal of seals) {
        try {
          this.#worker.postMessage({ type: 'seal', seals: [seal], ...now } satisfies ToThread);
        } catch (err) {
          this.#inFlight.get(seal.id)?.reject(err);
          this.#inFlight.delete(seal.id);
        }
      }
      this.#settled();
    }
  };

  get queued(): number {
    return this.#deps.local.queued + this.#inFlight.size;
  }

  async drain(): Promise<void> {
    await this.#deps.local.drain();
    if (this.#inFlight.size > 0) await new Promise<void>((resolve) => this.#idle.push(resolve));
  }

  /** Seals what is queued, then ends the thread (graceful shutdown); later seals run on the request thread. */
  async close(): Promise<void> {
    if (this.#closing) return this.drain();
    this.#closing = true;
    if (this.#down) return this.#deps.local.drain();
    const exited = new Promise<void>((resolve) => this.#worker.once('exit', () => resolve()));
    // The requests of this turn go first: the thread seals what it received, then closes.
    this.#post();
    this.#worker.postMessage({ type: 'close' } satisfies ToThread);
    await Promise.all([exited, this.#deps.local.drain()]);
  }

  /** For readiness (workers_alive) and the deployment worker plan: down while a new thread starts. */
  status(): WorkerStatus {
    return { name: 'seal-thread', running: !this.#down, lastTickAt: this.#lastBatchAt, lastError: this.#lastError };
  }

  /** The thread's id, for tests and diagnostics. */
  get threadId(): number {
    return this.#worker.threadId;
  }

  /** Ends the thread at once, as a crash would (tests of the recovery path). */
  terminateThread(): Promise<number> {
    return this.#worker.terminate();
  }

  /** `first`: the service's start, which fails if the thread cannot start; later, a restart. */
  #spawn(first = false): Promise<void> {
    const workerData: ThreadData = { config: this.#deps.config, borrowedClock: this.#borrowedClock, board: this.#deps.board.buffer };
    const worker = new Worker(this.#deps.entry ?? threadEntry(), { workerData });
    this.#worker = worker;
    return new Promise((resolve, reject) => {
      let ready = false;
      worker.on('message', (message: FromThread) => {
        if (message.type === 'ready') {
          ready = true;
          this.#down = false;
          this.#restarts = 0;
          this.#lastError = null;
          // Shut down while this thread was starting: it ends at once.
          if (this.#closing) worker.postMessage({ type: 'close' } satisfies ToThread);
          resolve();
        } else this.#receive(message);
      });
      worker.on('error', (err) => {
        if (!ready) reject(err);
        else this.#deps.log.error('the sealing thread failed', { worker: 'seal-thread', error: err.message });
      });
      worker.on('exit', (code) => {
        if (!ready) reject(new Error(`the sealing thread exited with ${code} before it was ready`));
        if (first && !ready) this.#closing = true; // the service does not start
        this.#lost(code);
      });
    });
  }

  #receive(message: Exclude<FromThread, { type: 'ready' }>): void {
    for (const batch of message.committed) this.#committed(batch);
    for (const queue of message.wake) this.#deps.wake(queue);
    if (message.texts !== null) decodeTexts(message.texts, (id, outcome) => this.#take(id)?.resolve(outcome));
    for (const r of message.results) {
      const pending = this.#take(r.id);
      if (r.ok) pending?.resolve(r.outcome);
      else pending?.reject(fromWire(r.error));
    }
    this.#settled();
  }

  #committed({ size, seconds, durableSeconds, sealed: ids }: CommittedBatch): void {
    const sealed = ids.flatMap((id) => this.#inFlight.get(id)?.request ?? []);
    this.#lastBatchAt = this.#deps.clock.now().toISOString();
    this.#lastError = null;
    this.#deps.observer?.committed({ size, seconds, durableSeconds, sealed });
    const { participants, store } = this.#deps;
    for (const request of sealed) for (const p of participants) void p.committedElsewhere?.(request, store);
  }

  /** The seal `id` answered, if it still waits (a thread that died had its seals refused). */
  #take(id: number): InFlight | undefined {
    const pending = this.#inFlight.get(id);
    this.#inFlight.delete(id);
    return pending;
  }

  /** The thread is gone: its unanswered seals are refused, and unless closing, a new thread starts. */
  #lost(code: number): void {
    this.#down = true;
    if (!this.#closing) this.#lastError = `the thread exited with code ${code}`;
    if (this.#inFlight.size > 0) {
      const refused = new ProblemError({
        status: 503,
        code: 'service_unavailable',
        detail: 'the sealing thread stopped before this seal was answered; retry (with the same idempotency_key, a committed seal returns its stored answer)',
        headers: { 'retry-after': '1' },
      });
      for (const pending of this.#inFlight.values()) pending.reject(refused);
      this.#inFlight.clear();
      this.#settled();
    }
    if (this.#closing) return;
    this.#deps.log.error('the sealing thread stopped; starting a new one', { worker: 'seal-thread', reason: `exit code ${code}, restart ${this.#restarts + 1}` });
    const delay = this.#restarts === 0 ? 0 : Math.min(RESTART_BACKOFF_MAX_MS, 100 * 2 ** this.#restarts);
    this.#restarts++;
    setTimeout(() => {
      if (this.#closing) return;
      this.#spawn().catch((err: unknown) => this.#deps.log.error('the sealing thread did not start', { worker: 'seal-thread', error: err instanceof Error ? err.message : String(err) }));
    }, delay);
  }

  #settled(): void {
    if (this.#inFlight.size === 0) for (const done of this.#idle.splice(0)) done();
  }
}
