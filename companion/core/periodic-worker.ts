/**
 * A background worker that runs one round at start (so a restart settles what fell due while
 * the service was down) and then every `intervalMs`. Rounds never overlap: a tick that comes
 * while one runs is skipped. `stop` waits for the running round. Failures are logged
 * (./worker-failures.ts) and kept for the readiness probe; the next interval tries again.
 */
import type { Clock } from './clock.ts';
import { rfc3339 } from './clock.ts';
import type { Logger } from './log.ts';
import { WorkerFailures } from './worker-failures.ts';
import type { WorkerStatus } from './worker-status.ts';

export interface PeriodicWorkerOptions {
  name: string;
  intervalMs: number;
  /** One round of work. */
  round(): Promise<unknown>;
  clock: Clock;
  log: Logger;
}

export class PeriodicWorker {
  readonly #o: PeriodicWorkerOptions;
  #timer: ReturnType<typeof setInterval> | undefined;
  #running: Promise<void> | undefined;
  #state: 'new' | 'started' | 'stopped' = 'new';
  #lastTickAt: string | null = null;
  readonly #failures: WorkerFailures;

  constructor(options: PeriodicWorkerOptions) {
    if (!(options.intervalMs > 0)) throw new RangeError(`expected intervalMs > 0, got ${options.intervalMs}`);
    this.#o = options;
    this.#failures = new WorkerFailures(options.log, { worker: options.name });
  }

  get name(): string {
    return this.#o.name;
  }

  /** Runs one round now unless one is running (then waits for that one). */
  tick(): Promise<void> {
    if (this.#state === 'stopped') return Promise.resolve();
    this.#running ??= this.#o
      .round()
      .then(
        () => this.#failures.succeeded(),
        (err: unknown) => this.#failures.failed(`${this.#o.name} failed`, err),
      )
      .finally(() => {
        this.#lastTickAt = rfc3339(this.#o.clock.now());
        this.#running = undefined;
      });
    return this.#running;
  }

  async start(): Promise<void> {
    if (this.#state !== 'new') return;
    this.#state = 'started';
    await this.tick();
    if (this.#state !== 'started') return;
    this.#timer = setInterval(() => void this.tick(), this.#o.intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#state = 'stopped';
    if (this.#timer) clearInterval(this.#timer);
    await this.#running;
  }

  status(): WorkerStatus {
    return { name: this.#o.name, running: this.#state === 'started', lastTickAt: this.#lastTickAt, lastError: this.#failures.lastError, intervalMs: this.#o.intervalMs };
  }
}
