/**
 * Pipelined group commit (core/wal-sync.ts) through the real app on a real SQLite file: the
 * disk's fdatasync is the only stand-in, so a test decides when each one completes (or fails)
 * and can see what the service does meanwhile.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DurabilityBoard, DurabilityError } from '../../companion/core/wal-sync.ts';
import { openSqliteStore } from '../../companion/store.ts';
import type { TestContext } from './helpers.ts';
import { freshTenantContext, makeTempDir } from './helpers.ts';
import { startReceiver } from './webhook-receiver.ts';
import type { Receiver } from './webhook-receiver.ts';

const LAW_GATE = {
  pack: 'law',
  proposed_action: 'File the motion to compel in matter 42',
  law_context: { matter_band: 'moderate', tool_id: 'drafting-assistant', doctrine_anchor: 'competence', jurisdiction: 'US-NY' },
};

/**
 * A disk whose fdatasync calls wait until the test completes them (each really run when it
 * does), or, while `passThrough` is set, run at once.
 */
function heldDisk() {
  const disk = {
    calls: [] as { complete(err?: NodeJS.ErrnoException): void }[],
    passThrough: false,
    fdatasync(fd: number, callback: (err: NodeJS.ErrnoException | null) => void) {
      if (disk.passThrough) return fs.fdatasync(fd, callback);
      disk.calls.push({ complete: (err) => (err ? callback(err) : fs.fdatasync(fd, callback)) });
    },
  };
  return disk;
}

let ctx: TestContext;
let rx: Receiver | undefined;
afterEach(async () => {
  await ctx?.close();
  ctx = undefined as never;
  await rx?.close();
  rx = undefined;
});

function tracked<T>(promise: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let settled = false;
  void promise.finally(() => (settled = true));
  return { promise, settled: () => settled };
}

const sealedCount = () => (ctx.store.db.prepare('SELECT count(*) AS n FROM sealed_records').get() as { n: number }).n;

describe('pipelined group commit', () => {
  it('answers a seal only after its fsync, and seals the next batch while that fsync runs', async () => {
    const disk = heldDisk();
    let key: string;
    ({ ctx, key } = await freshTenantContext({ walSync: { fdatasync: disk.fdatasync } }));
    const before = sealedCount();

    const first = tracked(ctx.request('/v1/gate', { json: LAW_GATE, key }));
    await vi.waitFor(() => expect(disk.calls).toHaveLength(1));
    expect(sealedCount()).toBe(before + 1); // committed, readable, not yet on disk
    const second = tracked(ctx.request('/v1/gate', { json: { ...LAW_GATE, source_key: 'second' }, key }));
    await vi.waitFor(() => expect(sealedCount()).toBe(before + 2)); // sealed while the first fsync is in flight
    expect(first.settled() || second.settled()).toBe(false);
    expect(disk.calls).toHaveLength(1); // one fsync at a time; the second batch waits for the next

    disk.calls[0]!.complete();
    expect((await first.promise).status).toBe(201);
    await vi.waitFor(() => expect(disk.calls).toHaveLength(2));
    expect(second.settled()).toBe(false); // its commit came after the first fsync began
    disk.calls[1]!.complete();
    expect((await second.promise).status).toBe(201);
    expect(ctx.store.walSync.syncs).toBe(2);
    // Only the seal batches skip the commit's fsync: the connection is back at FULL for any other write.
    expect(ctx.store.db.pragma('synchronous', { simple: true })).toBe(2);
  });

  it('after a failed fsync answers 503 problem+json to seals and reads, seals nothing more, and fails readiness', async () => {
    const disk = heldDisk();
    let key: string;
    ({ ctx, key } = await freshTenantContext({ walSync: { fdatasync: disk.fdatasync } }));
    const pending = ctx.request('/v1/gate', { json: LAW_GATE, key });
    await vi.waitFor(() => expect(disk.calls).toHaveLength(1));
    disk.calls[0]!.complete(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    const failed = await pending;
    expect(failed.status).toBe(503);
    expect(failed.headers.get('content-type')).toBe('application/problem+json');
    expect(failed.body.code).toBe('service_unavailable');

    const before = sealedCount();
    const refused = await ctx.request('/v1/gate', { json: { ...LAW_GATE, source_key: 'later' }, key });
    expect(refused.status).toBe(503);
    expect(sealedCount()).toBe(before); // not even committed
    const read = await ctx.request('/tenant/exports/records', { key });
    expect(read.status).toBe(503);
    expect(read.body.code).toBe('service_unavailable');
    expect(read.headers.get('x-total-count')).toBeNull();
    const ready = await ctx.request('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.checks.database_writable.detail).toMatch(/could not make the write-ahead log durable: EIO.*restart the service/);
  });

  it('sends no webhook delivery for a seal before that seal is on disk', async () => {
    const disk = heldDisk();
    let key: string;
    ({ ctx, key } = await freshTenantContext({ walSync: { fdatasync: disk.fdatasync }, env: { SVC_WEBHOOK_ALLOW_LOOPBACK: '1' } }));
    rx = await startReceiver();
    const put = await ctx.request('/tenant/integrations/webhook/ops', { method: 'PUT', key, json: { enabled: true, config: { url: rx.url, events: ['record.sealed'] } } });
    expect(put.status).toBe(201);
    // One delivery end to end first, so the client is loaded and connected: the one under test
    // would go out within milliseconds if nothing held it.
    disk.passThrough = true;
    expect((await ctx.request('/v1/gate', { json: LAW_GATE, key })).status).toBe(201);
    expect((await ctx.deps.webhooks.worker.tick()).succeeded).toBe(1);
    disk.passThrough = false;

    const gate = tracked(ctx.request('/v1/gate', { json: { ...LAW_GATE, source_key: 'held' }, key }));
    await vi.waitFor(() => expect(disk.calls).toHaveLength(1));
    // The delivery row committed with the seal: the worker claims it, but may not send it yet.
    const tick = tracked(ctx.deps.webhooks.worker.tick());
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.received).toHaveLength(1);
    expect(tick.settled() || gate.settled()).toBe(false);

    disk.calls[0]!.complete();
    expect((await gate.promise).status).toBe(201);
    expect((await tick.promise).succeeded).toBe(1);
    expect(rx.received).toHaveLength(2);
  });

  it('sends a records export page only once every record on it is on disk', async () => {
    const disk = heldDisk();
    let key: string;
    ({ ctx, key } = await freshTenantContext({ walSync: { fdatasync: disk.fdatasync } }));
    const gate = tracked(ctx.request('/v1/gate', { json: LAW_GATE, key }));
    await vi.waitFor(() => expect(disk.calls).toHaveLength(1));
    const page = tracked(ctx.request('/tenant/exports/records', { key }));
    await new Promise((r) => setTimeout(r, 100));
    expect(page.settled()).toBe(false);
    disk.calls[0]!.complete();
    expect((await gate.promise).status).toBe(201);
    const res = await page.promise;
    expect(res.status).toBe(200);
    expect(res.body.records.map((r: { action_key: string }) => r.action_key)).toEqual([(await gate.promise).body.action_key]);
  });
});

describe('two connections on one file (the sealing thread and the request thread)', () => {
  /** A writer connection publishing to a board and a reader connection watching it, each with its own held disk. */
  function pair() {
    const dir = makeTempDir();
    const board = new DurabilityBoard();
    const writerDisk = heldDisk();
    const readerDisk = heldDisk();
    const writer = openSqliteStore({ dataDir: dir, sharedWriters: true, walSync: { fdatasync: writerDisk.fdatasync, publish: board } });
    const reader = openSqliteStore({ dataDir: dir, sharedWriters: true, walSync: { fdatasync: readerDisk.fdatasync, watch: board } });
    writer.db.exec('CREATE TABLE probe (x INTEGER)');
    // A transaction that writes a frame to the WAL, committed without its fsync.
    const commit = () => writer.transaction(async () => void writer.db.prepare('INSERT INTO probe VALUES (1)').run(), { sync: 'deferred' });
    return {
      board,
      writer,
      reader,
      writerDisk,
      readerDisk,
      commit,
      close() {
        writer.close();
        reader.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }

  it("makes the reader sync the WAL itself before answering with the writer's commit not yet on disk", async () => {
    const p = pair();
    try {
      expect(p.reader.durable()).toBeUndefined();
      await p.commit();
      expect(p.board.pending).toBe(true);
      const settled = tracked(p.reader.durable()!);
      await vi.waitFor(() => expect(p.readerDisk.calls).toHaveLength(1));
      expect(settled.settled()).toBe(false);
      p.readerDisk.calls[0]!.complete();
      await settled.promise;

      // Once the writer's own fsync is done, the reader has nothing to wait for.
      const synced = tracked(p.writer.durable()!);
      await vi.waitFor(() => expect(p.writerDisk.calls).toHaveLength(1));
      p.writerDisk.calls[0]!.complete();
      await synced.promise;
      expect(p.board.pending).toBe(false);
      expect(p.reader.durable()).toBeUndefined();
    } finally {
      p.close();
    }
  });

  it("fails the reader's reads once the writer's fsync failed", async () => {
    const p = pair();
    try {
      await p.commit();
      const synced = p.writer.durable()!;
      await vi.waitFor(() => expect(p.writerDisk.calls).toHaveLength(1));
      p.writerDisk.calls[0]!.complete(Object.assign(new Error('EIO: i/o error'), { code: 'EIO' }));
      await expect(synced).rejects.toThrow(DurabilityError);
      expect(p.board.hasFailed).toBe(true);
      await expect(p.reader.durable()).rejects.toThrow(DurabilityError);
      expect(p.reader.walSync.failure).toBeInstanceOf(DurabilityError);
    } finally {
      p.close();
    }
  });
});
