/**
 * The review-context sweep, a background worker (companion/workers.ts). Two jobs:
 *
 * 1. Orphans: ciphertexts of an action whose review is no longer open (decided or expired on a
 *    path that did not erase them, an item whose window ended before its expiry receipt was
 *    sealed, or rows of an action that never paused) are erased, in bounded rounds. The seal
 *    that ends a review erases its action's ciphertexts itself (./participant.ts); this is the
 *    backstop.
 * 2. On SQLite, the WAL: an erased row's cells are zeroed in the database file (secure_delete,
 *    ./sqlite-store.ts), but the WAL still holds the frames that once carried it until it is
 *    reset and overwritten. `PRAGMA wal_checkpoint(TRUNCATE)` copies every frame back and
 *    truncates the WAL to zero bytes (SQLite "PRAGMA wal_checkpoint"). It runs on a connection of
 *    its own with no busy wait: when a reader or writer is in the way it reports busy and the
 *    next round tries again, so it never stalls the request thread. It runs only in databases
 *    where someone registered a review key.
 */
import Database from 'better-sqlite3';
import type { Clock } from '../core/clock.ts';
import { rfc3339 } from '../core/clock.ts';
import type { Logger } from '../core/log.ts';
import type { Store } from '../core/stores.ts';

/** Rows erased per statement, and statements per round, so one round is bounded. */
export const SWEEP_BATCH = 500;
const SWEEP_MAX_ROUNDS = 20;
/** How often the sweep runs. */
export const SWEEP_INTERVAL_MS = 60_000;

export interface SweepDeps {
  store: Pick<Store, 'reviewContexts' | 'engine'> & { file?: string; withConnection?: <T>(fn: (db: Database.Database) => T) => Promise<T> };
  clock: Clock;
  log: Logger;
}

export interface SweepOutcome {
  erased: number;
  /** SQLite only: whether the WAL was truncated this round (false: busy, or nothing to do). */
  walTruncated: boolean;
}

export async function sweepReviewContexts(deps: SweepDeps): Promise<SweepOutcome> {
  let erased = 0;
  const now = rfc3339(deps.clock.now());
  for (let round = 0; round < SWEEP_MAX_ROUNDS; round++) {
    const n = await deps.store.reviewContexts.eraseOrphans(now, SWEEP_BATCH);
    erased += n;
    if (n < SWEEP_BATCH) break;
  }
  if (erased > 0) deps.log.info('review context erased', { reason: `${erased} ciphertexts of reviews no longer open` });
  return { erased, walTruncated: await truncateWal(deps) };
}

async function truncateWal(deps: SweepDeps): Promise<boolean> {
  const { store } = deps;
  if (store.engine !== 'sqlite' || store.file === undefined || store.withConnection === undefined) return false;
  const used = await store.withConnection((db) => db.prepare('SELECT 1 FROM review_keys LIMIT 1').get() !== undefined);
  if (!used) return false;
  const db = new Database(store.file, { timeout: 0, fileMustExist: true });
  try {
    const [r] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number; log: number; checkpointed: number }[];
    return r !== undefined && r.busy === 0;
  } catch (err) {
    // SQLITE_BUSY and the like: another connection holds what the checkpoint needs; next round.
    deps.log.debug('review context wal truncation deferred', { reason: err instanceof Error ? err.message : String(err) });
    return false;
  } finally {
    db.close();
  }
}
