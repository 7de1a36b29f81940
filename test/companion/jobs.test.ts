/**
 * The generic leased job queue (companion/core/jobs/) on both engines (a real SQLite file, a
 * real PostgreSQL server), with a table of its own to show it is not tied to webhooks:
 * leases, holder-only completion, retry plan, dead letter, release, requeue, tick receipts,
 * and on PostgreSQL concurrent claims from several connections.
 */
import fs from 'node:fs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_SCHEDULE, nominalDelayMs, retryDelayMs, retryPlan } from '../../companion/core/jobs/backoff.ts';
import { createPostgresJobStore } from '../../companion/core/jobs/postgres-store.ts';
import { JobQueue } from '../../companion/core/jobs/queue.ts';
import { JobWorker } from '../../companion/core/jobs/worker.ts';
import { createSqliteJobStore } from '../../companion/core/jobs/sqlite-store.ts';
import { claimableSql } from '../../companion/core/jobs/store.ts';
import type { JobStore } from '../../companion/core/jobs/store.ts';
import { createMemoryLogger } from '../../companion/core/log.ts';
import { DISPATCH_CLAIMABLE, DISPATCH_QUEUE } from '../../companion/routing/service.ts';
import type { Tx } from '../../companion/store.ts';
import { openSqliteStore } from '../../companion/store.ts';
import { DELIVERY_CLAIMABLE, DELIVERY_QUEUE } from '../../companion/webhooks/service.ts';
import { makeTempDir } from './helpers.ts';
import { engines } from './store-contract/engines.ts';
import type { StoreFactories, TestDatabase } from './store-contract/engines.ts';

interface Row {
  id: string;
  attempt_count: number;
  status: string;
}

const JOBS: StoreFactories<JobStore> = { sqlite: createSqliteJobStore, postgres: createPostgresJobStore };
const at = (ms: number) => new Date(ms);

describe.each(engines())('JobQueue on $name', (engine) => {
  let db: TestDatabase;
  let tx: { jobs: JobStore };
  const queue = new JobQueue<Row>({ table: 'dispatches', doneStatus: 'sent', schedule: { ...DEFAULT_RETRY_SCHEDULE, maxAttempts: 3 }, random: () => 0.5 });
  beforeAll(() => engine.start(), 60_000);
  afterAll(() => engine.stop());
  beforeEach(async () => {
    db = await engine.open();
    // A job table of this test's own beside the service's, to show the queue is not tied to them.
    await db.exec(`CREATE TABLE dispatches (id TEXT PRIMARY KEY, status TEXT NOT NULL DEFAULT 'pending', attempt_count INTEGER NOT NULL DEFAULT 0,
      run_at BIGINT NOT NULL, lease_owner TEXT, lease_expires_at BIGINT, last_error TEXT, last_attempt_at TEXT, completed_at TEXT)`);
    tx = { jobs: db.store(JOBS) };
  });
  afterEach(() => db.close());
  const seed = async (...ids: string[]) => {
    for (const id of ids) await db.exec('INSERT INTO dispatches (id, run_at) VALUES (?, 0)', id);
  };
  const row = async (id: string) => (await db.rows<Record<string, unknown>>('SELECT * FROM dispatches WHERE id = ?', id))[0]!;

  it('leases each row to one owner; another owner gets it only after the lease expires', async () => {
    await seed('a', 'b');
    const mine = await queue.claim(tx, 'w1', at(1000), 10_000, 10);
    expect(mine.map((j) => [j.row.id, j.attempt])).toEqual([['a', 1], ['b', 1]]);
    // A leased row is due again when its lease runs out, so claims never read over it before.
    expect(await row('a')).toMatchObject({ run_at: 11_000, lease_expires_at: 11_000 });
    expect(await queue.claim(tx, 'w2', at(5000), 10_000, 10)).toEqual([]);
    const theirs = await queue.claim(tx, 'w2', at(11_000), 10_000, 1);
    expect(theirs.map((j) => [j.row.id, j.attempt])).toEqual([['a', 2]]);
    // The first holder lost the lease on a: its outcome is not stored.
    expect(await queue.complete(tx, [mine[0]!], 'w1', at(12_000))).toEqual(new Set(['a']));
    expect(await queue.fail(tx, mine[0]!, 'late', at(12_000))).toBe('lease_lost');
    expect(await queue.complete(tx, theirs, 'w2', at(12_000))).toEqual(new Set());
    expect(await row('a')).toMatchObject({ status: 'sent', lease_owner: null, attempt_count: 2, completed_at: at(12_000).toISOString() });
    // b's lease is still w1's: it can finish it, in the same statement that finds a lost.
    expect(await queue.complete(tx, mine, 'w1', at(10_500))).toEqual(new Set(['a']));
    expect(await row('b')).toMatchObject({ status: 'sent', completed_at: at(10_500).toISOString() });
    expect(await row('a')).toMatchObject({ completed_at: at(12_000).toISOString() });
  });

  it('retries after the jittered backoff, then dead-letters after the last attempt', async () => {
    await seed('a');
    let now = 0;
    for (let attempt = 1; attempt <= 3; attempt++) {
      const [job] = await queue.claim(tx, 'w', at(now), 60_000, 1);
      expect(job?.attempt).toBe(attempt);
      const outcome = await queue.fail(tx, job!, `boom ${attempt}`, at(now));
      expect(outcome).toBe(attempt < 3 ? 'retrying' : 'dead');
      const r = await row('a');
      if (attempt < 3) {
        expect(r.run_at).toBe(now + nominalDelayMs(attempt, queue.schedule)); // random 0.5: no jitter
        expect(await queue.claim(tx, 'w', at(now + 1), 60_000, 1)).toEqual([]);
        now = r.run_at as number;
      } else {
        expect(r).toMatchObject({ status: 'dead', last_error: 'boom 3', lease_owner: null });
      }
    }
    expect(await queue.claim(tx, 'w', at(now + 365 * 86_400_000), 60_000, 1)).toEqual([]);
    expect(await queue.requeue(tx, ['a'], at(now))).toBe(1);
    expect(await row('a')).toMatchObject({ status: 'pending', attempt_count: 0, completed_at: null });
    expect((await queue.claim(tx, 'w', at(now), 60_000, 1))[0]?.attempt).toBe(1);
  });

  it('hands a row back untried on release, and never requeues a leased row', async () => {
    await seed('a');
    const [job] = await queue.claim(tx, 'w', at(0), 60_000, 1);
    expect(await queue.requeue(tx, ['a'], at(0))).toBe(0);
    await queue.release(tx, job!, at(500));
    expect(await row('a')).toMatchObject({ status: 'pending', attempt_count: 0, lease_owner: null, run_at: 500 });
    expect((await queue.claim(tx, 'w', at(500), 60_000, 1)).map((j) => j.row.id)).toEqual(['a']);
  });

  it('keeps tick receipts, pruning the oldest a thousand at a time', async () => {
    const receipt = { queue: 'dispatches', worker: 'w', startedAt: at(0).toISOString(), finishedAt: at(1).toISOString(), claimed: 1, succeeded: 1, retrying: 0, dead: 0, leaseLost: 0 };
    for (let i = 0; i < 1000; i++) await tx.jobs.recordTick(receipt, 10);
    const [kept] = await db.rows<{ n: number; first: number }>('SELECT count(*) AS n, min(id) AS first FROM job_ticks WHERE queue = ?', 'dispatches');
    expect(kept).toEqual({ n: 10, first: 991 });
  });

  it('resolves a tick only once every outcome it claimed is stored, when they are stored in separate commits', async () => {
    await seed('a', 'b');
    const worker = new JobWorker<Row>({
      name: 'dispatches',
      queue,
      // The worker's transactions on this database; on PostgreSQL each takes a pooled connection.
      store: { transaction: (fn) => db.transaction((t) => fn({ jobs: t.store(JOBS) } as unknown as Tx)) },
      clock: { now: () => at(1000) },
      log: createMemoryLogger(),
      leaseMs: 60_000,
      // b settles well after a, so their outcomes are stored in two flushes...
      handle: async (job) => (job.row.id === 'b' && (await new Promise((r) => setTimeout(r, 20))), { ok: true }),
      // ...and a's flush is still open when b's begins (long enough for b's to open a
      // connection of its own on PostgreSQL, were the flushes not run one after another).
      settled: (results) => (results.some((r) => r.job.row.id === 'a') ? new Promise((r) => setTimeout(r, 500)) : undefined),
    });
    const receipt = await worker.tick();
    expect(receipt).toMatchObject({ claimed: 2, succeeded: 2 });
    expect((await db.rows<{ id: string; status: string }>('SELECT id, status FROM dispatches ORDER BY id')).map((r) => r.status)).toEqual(['sent', 'sent']);
  });

  it('refuses table names that are not plain identifiers', () => {
    expect(() => new JobQueue({ table: 'x; DROP TABLE y', doneStatus: 'sent', schedule: DEFAULT_RETRY_SCHEDULE })).toThrow(TypeError);
  });
});

describe('JobQueue on postgres, several companions at once', () => {
  const [, engine] = engines();
  let db: TestDatabase;
  const queue = new JobQueue<Row>({ table: 'dispatches', doneStatus: 'sent', schedule: DEFAULT_RETRY_SCHEDULE });
  beforeAll(async () => {
    await engine!.start();
    db = await engine!.open();
    await db.exec(`CREATE TABLE dispatches (id TEXT PRIMARY KEY, status TEXT NOT NULL DEFAULT 'pending', attempt_count INTEGER NOT NULL DEFAULT 0,
      run_at BIGINT NOT NULL, lease_owner TEXT, lease_expires_at BIGINT, last_error TEXT, last_attempt_at TEXT, completed_at TEXT)`);
  }, 60_000);
  afterAll(async () => {
    await db.close();
    await engine!.stop();
  });

  it('gives concurrent claims disjoint rows (FOR UPDATE SKIP LOCKED) and every row to exactly one', async () => {
    for (let i = 0; i < 40; i++) await db.exec('INSERT INTO dispatches (id, run_at) VALUES (?, 0)', `d${String(i).padStart(2, '0')}`);
    // Four transactions on four pooled connections claim at once, each holding its rows
    // until it commits.
    const claims = await Promise.all(
      ['w1', 'w2', 'w3', 'w4'].map((owner) => db.transaction((t) => queue.claim({ jobs: t.store(JOBS) }, owner, at(1000), 60_000, 15))),
    );
    const ids = claims.flat().map((j) => j.row.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(Array.from({ length: 40 }, (_, i) => `d${String(i).padStart(2, '0')}`));
    const owners = await db.rows<{ lease_owner: string; n: number }>('SELECT lease_owner, count(*) AS n FROM dispatches GROUP BY lease_owner ORDER BY lease_owner');
    expect(owners.reduce((s, r) => s + r.n, 0)).toBe(40);
    for (const [i, claim] of claims.entries()) expect(owners.find((o) => o.lease_owner === `w${i + 1}`)?.n ?? 0).toBe(claim.length);
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
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
