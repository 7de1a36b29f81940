/** The one place background work starts (companion/workers.ts) and what it reports. */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../companion/core/clock.ts';
import { createMemoryLogger } from '../../companion/core/log.ts';
import { PeriodicWorker } from '../../companion/core/periodic-worker.ts';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';

let ctx: TestContext | undefined;
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
});

describe('workers', () => {
  it('are registered with the lifecycle by openDeps, not by routes, and report liveness', async () => {
    ctx = await createTestContext();
    const before = ctx.deps.workers.status();
    // WAL checkpoints are the SQLite engine's own upkeep (companion/workers.ts); PostgreSQL checkpoints itself.
    const names = before.map((w) => w.name);
    expect(names).toContain('review-expiry');
    if (ctx.engine === 'sqlite') expect(names).toContain('wal-checkpoint');
    else expect(names).not.toContain('wal-checkpoint');
    // The sealing thread (with SVC_SEAL_THREAD) runs from openDeps on, so that seals work before the lifecycle starts.
    expect(before.filter((w) => w.name !== 'seal-thread').every((w) => !w.running && w.lastTickAt === null)).toBe(true);

    await ctx.deps.lifecycle.start();
    const expiry = ctx.deps.workers.status().find((w) => w.name === 'review-expiry')!;
    // The first round runs before start resolves, on the service clock.
    expect(expiry).toEqual({ name: 'review-expiry', running: true, lastTickAt: ctx.clock.now().toISOString(), lastError: null, intervalMs: expect.any(Number) });

    await ctx.deps.lifecycle.stop();
    expect(ctx.deps.workers.status().every((w) => !w.running)).toBe(true);
  });

  it('keeps a failed round for the probe and clears it on the next success; rounds never overlap', async () => {
    const clock = new ManualClock();
    const log = createMemoryLogger();
    let fail = true;
    let active = 0;
    let overlapped = false;
    const worker = new PeriodicWorker({
      name: 'probe',
      intervalMs: 60_000,
      clock,
      log,
      round: async () => {
        active++;
        overlapped ||= active > 1;
        await new Promise((r) => setTimeout(r, 5));
        active--;
        if (fail) throw new Error('disk on fire');
      },
    });
    await worker.start();
    expect(worker.status()).toMatchObject({ running: true, lastError: 'disk on fire' });
    expect(log.entries.some((e) => e.level === 'error' && e.message === 'probe failed')).toBe(true);
    fail = false;
    await Promise.all([worker.tick(), worker.tick(), worker.tick()]);
    expect(overlapped).toBe(false);
    expect(worker.status()).toMatchObject({ running: true, lastError: null });
    await worker.stop();
    expect(worker.status().running).toBe(false);
  });
});
