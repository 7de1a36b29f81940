/**
 * Forgetting expired idempotency keys (interface-spec Limits, "Idempotent retry": a key replays
 * within its window, then is forgotten): a periodic worker deletes the keys older than the
 * window in bounded batches, each its own short transaction, so no seal's transaction ever
 * pays for a DELETE. A key expired but not yet purged is never replayed (./replay.ts reads
 * only within the window) and is replaced by the next save under it, so how soon the worker
 * runs changes no answer, only how large the table grows between rounds.
 */
import type { Clock } from '../../core/clock.ts';
import { rfc3339 } from '../../core/clock.ts';
import type { IdempotencyStore } from './store.ts';
import { IDEMPOTENCY_TTL_DEFAULT_SECONDS } from './replay.ts';

/** Keys deleted per transaction: short enough that a seal batch waiting for the write lock hardly notices. */
export const PURGE_BATCH = 500;
/** At most this many batches per round; the rest waits for the next round. */
const MAX_BATCHES_PER_ROUND = 200;
/** How often the worker runs. */
export const IDEMPOTENCY_EXPIRY_INTERVAL_MS = 60_000;

export interface IdempotencyExpiryDeps {
  /** Each batch runs in a transaction of its own (a store's `transaction`). */
  transaction<T>(fn: (tx: { idempotency: IdempotencyStore }) => Promise<T>): Promise<T>;
  clock: Clock;
  ttlSeconds?: number;
}

/** One round: purges expired keys batch by batch; returns how many it deleted. */
export async function purgeExpiredIdempotencyKeys(deps: IdempotencyExpiryDeps): Promise<number> {
  const ttl = deps.ttlSeconds ?? IDEMPOTENCY_TTL_DEFAULT_SECONDS;
  const window = { notBefore: rfc3339(new Date(deps.clock.now().getTime() - ttl * 1000)) };
  let total = 0;
  for (let i = 0; i < MAX_BATCHES_PER_ROUND; i++) {
    const deleted = await deps.transaction((tx) => tx.idempotency.purgeExpired(window, PURGE_BATCH));
    total += deleted;
    if (deleted < PURGE_BATCH) break;
  }
  return total;
}
