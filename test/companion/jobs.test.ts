/**
 * The generic leased job queue (companion/core/jobs/) on a real SQLite file, with a table of
 * its own to show it is not tied to webhooks: leases, holder-only completion, retry plan,
 * dead letter, release, requeue.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_SCHEDULE, nominalDelayMs, retryDelayMs, retryPlan } from '../../companion/core/jobs/backoff.ts';
import { JobQueue, claimableSql } from '../../companion/core/jobs/queue.ts';
import type { Db } from '../../companion/core/db.ts';
import { DISPATCH_CLAIMABLE, DISPATCH_QUEUE } from '../../companion/routing/service.ts';
import { openSqliteStore } from '../../companion/store.ts';
import type { SqliteStore } from '../../companion/store.ts';
import { DELIVERY_CLAIMABLE, DELIVERY_QUEUE } from '../../companion/webhooks/service.ts';
import { makeTempDir } from './helpers.ts';

interface Row {
  id: string;
  attempt_count: number;
  status: string;
}

const dirs: string[] = [];
const stores: SqliteStore[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function queueOn(ids: string[], schedule = { ...DEFAULT_RETRY_SCHEDULE, maxAttempts: 3 }): { db: Db; store: SqliteStore; queue: JobQueue<Row> } {
  const dir = makeTempDir('svc-jobs-');
  dirs.push(dir);
  // The service's own store, with a job table of this test's own beside its tables.
  const store = openSqliteStore({ dataDir: dir });
  stores.push(store);
  const { db } = store;
  db.exec(`CREATE TABLE dispatches (id TEXT PRIMARY KEY, status TEXT NOT NULL DEFAULT 'pending', attempt_count INTEGER NOT NULL DEFAULT 0,
    run_at INTEGER NOT NULL, lease_owner TEXT, lease_expires_at INTEGER, last_error TEXT, last_attempt_at TEXT, completed_at TEXT) STRICT`);
  for (const id of ids) db.prepare('INSERT INTO dispatches (id, run_at) VALUES (?, 0)').run(id);
  return { db, store, queue: new JobQueue<Row>({ store, table: 'dispatches', doneStatus: 'sent', schedule, random: () => 0.5 }) };
}

const at = (ms: number) => new Date(ms);
const row = (db: Db, id: string) => db.prepare('SELECT * FROM dispatches WHERE id = ?').get(id) as Record<string, unknown>;

describe('JobQueue', () => {
  it('leases each row to one owner; another owner gets it only after the lease expires', () => {
    const { db, queue } = queueOn(['a', 'b']);
    const mine = queue.claim('w1', at(1000), 10_000, 10);
    expect(mine.map((j) => [j.row.id, j.attempt])).toEqual([['a', 1], ['b', 1]]);
    expect(queue.claim('w2', at(5000), 10_000, 10)).toEqual([]);
    const theirs = queue.claim('w2', at(11_000), 10_000, 1);
    expect(theirs.map((j) => [j.row.id, j.attempt])).toEqual([['a', 2]]);
    // The first holder lost the lease on a: its outcome is not stored.
    expect(queue.complete(mine[0]!, at(12_000))).toBe(false);
    expect(queue.fail(mine[0]!, 'late', at(12_000))).toBe('lease_lost');
    expect(queue.complete(theirs[0]!, at(12_000))).toBe(true);
    expect(row(db, 'a')).toMatchObject({ status: 'sent', lease_owner: null, attempt_count: 2, completed_at: at(12_000).toISOString() });
    // b's lease is still w1's: it can finish it.
    expect(queue.complete(mine[1]!, at(10_500))).toBe(true);
  });

  it('retries after the jittered backoff, then dead-letters after the last attempt', () => {
    const { db, queue } = queueOn(['a']);
    let now = 0;
    for (let attempt = 1; attempt <= 3; attempt++) {
      const [job] = queue.claim('w', at(now), 60_000, 1);
      expect(job?.attempt).toBe(attempt);
      const outcome = queue.fail(job!, `boom ${attempt}`, at(now));
      expect(outcome).toBe(attempt < 3 ? 'retrying' : 'dead');
      const r = row(db, 'a');
      if (attempt < 3) {
        expect(r.run_at).toBe(now + nominalDelayMs(attempt, queue.schedule)); // random 0.5: no jitter
        expect(queue.claim('w', at(now + 1), 60_000, 1)).toEqual([]);
        now = r.run_at as number;
      } else {
        expect(r).toMatchObject({ status: 'dead', last_error: 'boom 3', lease_owner: null });
      }
    }
    expect(queue.claim('w', at(now + 365 * 86_400_000), 60_000, 1)).toEqual([]);
    expect(queue.requeue(['a'], at(now))).toBe(1);
    expect(row(db, 'a')).toMatchObject({ status: 'pending', attempt_count: 0, completed_at: null });
    expect(queue.claim('w', at(now), 60_000, 1)[0]?.attempt).toBe(1);
  });

  it('hands a row back untried on release, and never requeues a leased row', () => {
    const { db, queue } = queueOn(['a']);
    const [job] = queue.claim('w', at(0), 60_000, 1);
    expect(queue.requeue(['a'], at(0))).toBe(0);
    queue.release(job!);
    expect(row(db, 'a')).toMatchObject({ status: 'pending', attempt_count: 0, lease_owner: null });
  });

  it('commits bookkeeping without an fsync and restores the durable setting after', async () => {
    const { db, queue } = queueOn(['a']);
    expect(db.pragma('synchronous', { simple: true })).toBe(2); // FULL
    const seen = await queue.transaction(() => db.pragma('synchronous', { simple: true }));
    expect(seen).toBe(1); // NORMAL inside
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    await expect(queue.transaction(() => { throw new Error('boom'); })).rejects.toThrow('boom');
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
  });

  it('refuses table names that are not plain identifiers', () => {
    const { store } = queueOn([]);
    expect(() => new JobQueue({ store, table: 'x; DROP TABLE y', doneStatus: 'sent', schedule: DEFAULT_RETRY_SCHEDULE })).toThrow(TypeError);
  });
});

describe('retry schedule', () => {
  it('doubles from 30 s, caps at 6 h and jitters within ±20%', () => {
    expect(retryPlan(DEFAULT_RETRY_SCHEDULE).delays_seconds).toEqual([30, 60, 120, 240, 480, 960, 1920, 3840, 7680, 15360, 21600]);
    expect(retryDelayMs(1, DEFAULT_RETRY_SCHEDULE, () => 0)).toBe(24_000);
    expect(retryDelayMs(1, DEFAULT_RETRY_SCHEDULE, () => 0.999999)).toBe(36_000);
    expect(retryDelayMs(1000, DEFAULT_RETRY_SCHEDULE, () => 0.5)).toBe(6 * 3600_000);
    expect(() => retryDelayMs(0, DEFAULT_RETRY_SCHEDULE)).toThrow(RangeError);
  });
});

describe('claims on the capabilities’ job tables', () => {
  it('read the due index in claim order, never gathering and sorting the backlog', () => {
    const dir = makeTempDir('svc-jobs-');
    dirs.push(dir);
    const store = openSqliteStore({ dataDir: dir });
    try {
      for (const [table, where] of [[DELIVERY_QUEUE, DELIVERY_CLAIMABLE], [DISPATCH_QUEUE, DISPATCH_CLAIMABLE]] as const) {
        const plan = store.db.prepare(`EXPLAIN QUERY PLAN ${claimableSql(table, where)}`).all({ now: 0, limit: 10 }) as { detail: string }[];
        const steps = plan.map((p) => p.detail).join(' | ');
        expect(steps).toContain(`USING INDEX ${table}_due`);
        expect(steps).not.toContain('TEMP B-TREE');
      }
    } finally {
      store.close();
    }
  });
});
