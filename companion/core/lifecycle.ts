/**
 * Start and stop hooks for background work (the sealing queue, the WAL checkpointer, review
 * expiry; the epoch ticker and event outbox worker register here once they are built).
 * `createApp` does no I/O; the entry point starts the hooks after the server listens and
 * runs the stop hooks after in-flight requests finish and before the database closes, so a
 * queue can flush its last group commit.
 */
export type Hook = () => void | Promise<void>;

export class Lifecycle {
  readonly #start: Hook[] = [];
  readonly #stop: Hook[] = [];
  #state: 'new' | 'started' | 'stopped' = 'new';

  /** new (hooks not started), started, or stopped: readiness expects workers only once started. */
  get state(): 'new' | 'started' | 'stopped' {
    return this.#state;
  }

  onStart(hook: Hook): void {
    this.#start.push(hook);
  }

  /** Stop hooks run in reverse registration order (last started, first stopped). */
  onStop(hook: Hook): void {
    this.#stop.push(hook);
  }

  async start(): Promise<void> {
    if (this.#state !== 'new') return;
    this.#state = 'started';
    for (const hook of this.#start) await hook();
  }

  /** Runs every stop hook even if one fails; rethrows the first failure afterwards. */
  async stop(): Promise<void> {
    if (this.#state === 'stopped') return;
    this.#state = 'stopped';
    let first: unknown;
    for (const hook of [...this.#stop].reverse()) {
      try {
        await hook();
      } catch (err) {
        first ??= err;
      }
    }
    if (first !== undefined) throw first;
  }
}
