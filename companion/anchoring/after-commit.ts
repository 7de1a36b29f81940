/**
 * Log lines about what a job worker's storing transaction wrote, written once it has committed.
 * On PostgreSQL the transaction commits after its callback returns, so a line written inside it
 * ("epoch timestamped", "checkpoint cosigned") could be read before another connection sees the
 * row it announces (READ COMMITTED); whoever acts on the line (an operator, a test) would find
 * the epoch still awaiting. A transaction that rolls back writes none of its lines.
 */
import type { Store, TransactionOptions, Tx } from '../core/stores.ts';

export interface AfterCommit {
  /** The store to give the JobWorker: each of its transactions runs the lines queued in it once committed. */
  store: Pick<Store, 'transaction'>;
  /** Queues `line` until `tx` commits (runs it at once when `tx` is not one of this store's). */
  after(tx: Tx, line: () => void): void;
}

export function afterCommit(store: Pick<Store, 'transaction'>): AfterCommit {
  const pending = new WeakMap<Tx, (() => void)[]>();
  return {
    store: {
      async transaction<T>(fn: (tx: Tx) => Promise<T>, options?: TransactionOptions): Promise<T> {
        const lines: (() => void)[] = [];
        const result = await store.transaction((tx) => {
          // A transaction may run its callback again (stores.ts TransactionOptions): keep the last run's lines.
          lines.length = 0;
          pending.set(tx, lines);
          return fn(tx);
        }, options);
        for (const line of lines) line();
        return result;
      },
    },
    after(tx, line) {
      const lines = pending.get(tx);
      if (lines) lines.push(line);
      else line();
    },
  };
}
