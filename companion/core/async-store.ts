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
import { AsyncLocalStorage } from 'node:async_hooks';

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

/** Held by one transaction at a time, from BEGIN to COMMIT or ROLLBACK, across its awaits. */
export class ConnectionLock {
  #held = false;
  readonly #waiting: (() => void)[] = [];
  /** The holding transaction's token, and each async context's own, to catch self-deadlock. */
  #token: object | undefined;
  readonly #context = new AsyncLocalStorage<object>();

  /** Runs `fn` holding the connection; callers queue in arrival order. */
  async hold<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#held) {
      this.#refuseReentry();
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
    this.#held = true;
    // A fresh token per hold: work the transaction scheduled that runs after it ended (and so
    // inherited its context) is not mistaken for the transaction itself.
    const token = {};
    this.#token = token;
    try {
      return await this.#context.run(token, fn);
    } finally {
      this.#token = undefined;
      // Hand the connection straight to the next waiter, so nobody can slip in between.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#held = false;
    }
  }

  /** Runs a synchronous `fn` as soon as no transaction holds the connection. */
  when<T>(fn: () => T): Promise<T> {
    return this.#held ? this.hold(async () => fn()) : settle(fn);
  }

  /**
   * A transaction that calls the outside stores (not its `tx`) would wait for itself forever;
   * say so instead.
   */
  #refuseReentry(): void {
    if (this.#token !== undefined && this.#context.getStore() === this.#token) {
      throw new Error('a store was called outside its transaction from inside it: use the transaction\'s own stores (tx)');
    }
  }
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
  return view as T;
}
