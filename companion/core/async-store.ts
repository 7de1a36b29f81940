/**
 * The async store boundary over an in-process engine. Every capability's store interface
 * answers with promises, so an engine that talks to a server (PostgreSQL) can implement it;
 * SQLite (better-sqlite3) answers synchronously, and this file lifts its synchronous
 * implementations onto that boundary without changing them.
 *
 * One SQLite connection serves the whole process, so a transaction that awaits between its
 * statements must not let anyone else's statement run inside it: a write would commit (or roll
 * back) with the wrong transaction, and a read would see rows that may yet roll back. The
 * `ConnectionLock` serialises them: outside a transaction a store call runs at once; while a
 * transaction holds the connection, it waits for the commit. Inside a transaction, code uses
 * the transaction's own stores (the `tx` its function receives), which run without waiting.
 */

/** A store interface's synchronous twin: what an engine answering in-process implements. */
export type Sync<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : T[K];
};

/** Runs `fn` now and hands back its result or its exception as a settled promise. */
export function settle<R>(fn: () => R): Promise<R> {
  try {
    return Promise.resolve(fn());
  } catch (err) {
    return Promise.reject(err);
  }
}

/** How long a caller waits behind one transaction before it is refused (ConnectionLock). */
const LOCK_WAIT_LIMIT_MS = 30_000;

interface Waiter {
  resolve(): void;
  reject(err: Error): void;
}

/**
 * Held by one transaction at a time, from BEGIN to COMMIT or ROLLBACK, across its awaits.
 *
 * A transaction that calls the outside stores (not its `tx`) would wait for itself forever.
 * Telling the holder's own calls from everyone else's would take AsyncLocalStorage, whose
 * promise hooks slow every promise in the process (measured: about a fifth of a webhook
 * delivery's CPU time on Node 20). Instead, as SQLite's busy_timeout does for its file lock,
 * callers waiting while one transaction has held the connection for `waitLimitMs` are refused
 * with an error naming the likely cause; the transaction that waited for itself then fails and
 * rolls back, and the connection is free again. A transaction on this engine holds it for
 * milliseconds, so the limit is far above any honest wait.
 */
export class ConnectionLock {
  readonly #waitLimitMs: number;
  #held = false;
  /** Counts holds, so the watchdog can tell whether the one it was armed for still holds. */
  #holds = 0;
  #heldSince = 0;
  #watchdog: NodeJS.Timeout | undefined;
  readonly #waiting: Waiter[] = [];

  constructor(options: { waitLimitMs?: number } = {}) {
    this.#waitLimitMs = options.waitLimitMs ?? LOCK_WAIT_LIMIT_MS;
  }

  /** Runs `fn` holding the connection; callers queue in arrival order. */
  async hold<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#held) await new Promise<void>((resolve, reject) => (this.#waiting.push({ resolve, reject }), this.#watch()));
    this.#held = true;
    this.#holds++;
    this.#heldSince = performance.now();
    try {
      return await fn();
    } finally {
      // Hand the connection straight to the next waiter, so nobody can slip in between.
      const next = this.#waiting.shift();
      if (next) next.resolve();
      else this.#held = false;
    }
  }

  /** Runs a synchronous `fn` as soon as no transaction holds the connection. */
  when<T>(fn: () => T): Promise<T> {
    return this.#held ? this.hold(async () => fn()) : settle(fn);
  }

  /** One timer per stretch of waiting, not one per waiter: it fires when the current hold reaches the limit. */
  #watch(): void {
    if (this.#watchdog) return;
    const holds = this.#holds;
    this.#watchdog = setTimeout(() => {
      this.#watchdog = undefined;
      if (this.#holds === holds && this.#held) {
        const err = new Error(
          `waited ${this.#waitLimitMs} ms for the database connection, held all that time by one transaction; a transaction that calls a store outside its transaction waits for itself: use the transaction's own stores (tx)`,
        );
        for (const waiter of this.#waiting.splice(0)) waiter.reject(err);
      } else if (this.#waiting.length > 0) this.#watch();
    }, Math.max(0, this.#heldSince + this.#waitLimitMs - performance.now()));
    this.#watchdog.unref();
  }
}

/** Each transaction's view (made by `promised` without a lock) and the implementation it lifts. */
const synchronous = new WeakMap<object, object>();

/**
 * The synchronous implementation behind a transaction's view of an in-process engine, or
 * undefined for any other store (an outside view, which must wait for the connection, or a
 * store behind a network). Code on a hot path inside a transaction calls it directly when it is
 * there: a settled promise still costs each caller up the chain a turn of the microtask queue
 * and an allocation, which over a seal's statements add up to more than the statements.
 */
export function syncOf<T extends object>(view: T): Sync<T> | undefined {
  return synchronous.get(view) as Sync<T> | undefined;
}

/**
 * The async view of a synchronous implementation: each method answers with a settled promise,
 * after waiting for `lock` when one is given (the outside view) or at once (a transaction's view).
 */
export function promised<T extends object>(impl: Sync<T>, lock?: ConnectionLock): T {
  const view: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(impl)) {
    if (typeof member !== 'function') {
      view[name] = member;
      continue;
    }
    const method = member as (...args: unknown[]) => unknown;
    view[name] = lock
      ? (...args: unknown[]) => lock.when(() => method(...args))
      : (...args: unknown[]) => settle(() => method(...args));
  }
  if (!lock) synchronous.set(view, impl);
  return view as T;
}
