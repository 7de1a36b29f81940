/**
 * The sealing thread (companion/seal-thread/): seals that are plain data commit on a worker
 * thread with its own connection to the SQLite file, review decisions (which carry their own
 * in-transaction work) on the request thread's. Real threads, a real file, real signatures:
 * the two writers keep each tenant's log one gapless chain whose Merkle proofs verify; a thread
 * that dies refuses only what it had not answered, with 503 problem+json, and is replaced; a
 * shutdown seals everything queued; and a kill -9 of the whole process loses nothing answered.
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { failedAnchorChecks, verifyInclusionProof } from '../../shared/anchor-verify.ts';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import { failedChecks, verifyEvidence } from '../../shared/verify.ts';
import { ThreadedSealer } from '../../companion/seal-thread/threaded-sealer.ts';
import { openSqliteStore } from '../../companion/store.ts';
import { cleanupCompanions, gateLoad, start, tempDataDir } from '../helpers/companion-process.ts';
import { expectOneUnbrokenChain, logEntries, TENANT_LOG_SQL } from '../helpers/tenant-log.ts';
import type { LogRow } from '../helpers/tenant-log.ts';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { gateBody, usageOf } from './pack-fixtures.ts';

let ctx: TestContext;
afterEach(async () => {
  const open = ctx as TestContext | undefined;
  ctx = undefined as never;
  await open?.close();
  cleanupCompanions();
});

async function threaded(): Promise<{ sealer: ThreadedSealer; key: string; tenantId: string }> {
  ctx = await createTestContext({ env: { SVC_SEAL_THREAD: '1' } });
  const { apiKey: key, tenantId } = ctx.productionTenant();
  expect(ctx.deps.sealer).toBeInstanceOf(ThreadedSealer);
  return { sealer: ctx.deps.sealer as ThreadedSealer, key, tenantId };
}

/** A law action the pack sends to review (needs_review), or, with `allowed`, one it allows. */
const gate = (key: string, allowed = true) =>
  ctx.request('/v1/gate', {
    json: gateBody('law', allowed ? { proposed_action: 'Summarise the public docket entries for matter 42.' } : {}),
    key,
  });

const tenantLog = async (tenantId: string) => logEntries(await ctx.sql<LogRow>(TENANT_LOG_SQL, tenantId));

describe('the sealing thread', () => {
  it('seals gate decisions off the request thread: the same answers, verifiable, in one gapless chain', async () => {
    const { key, tenantId } = await threaded();
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => gate(key, i % 3 !== 0)));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 201));
    const log = await tenantLog(tenantId);
    expect(log).toHaveLength(60);
    expectOneUnbrokenChain(log);

    // Every answer is what the request thread would send: the record view rebuilds it.
    const keys = trustedKeySet((await ctx.request('/.well-known/service-keys.json')).body);
    for (const a of answers.slice(0, 10)) {
      const stored = await ctx.request(`/v1/records/${a.body.action_key}`, { key });
      expect(stored.body.evidence_packet).toEqual(a.body.evidence_packet);
      expect(failedChecks(await verifyEvidence(a.body.verify_request, keys))).toEqual([]);
    }
    // Metered exactly once each, by the thread's own connection.
    expect((await usageOf(ctx, tenantId)).actions_used).toBe(60);
  });

  it('refuses on the thread as on the request thread: problem+json with its code and fields', async () => {
    const { key } = await threaded();
    const first = await ctx.request('/v1/gate', { json: gateBody('law', { idempotency_key: 'k-1' }), key });
    expect(first.status).toBe(201);
    const replay = await ctx.request('/v1/gate', { json: gateBody('law', { idempotency_key: 'k-1' }), key });
    expect(replay.status).toBe(201);
    expect(replay.text).toBe(first.text);
    const reused = await ctx.request('/v1/gate', { json: gateBody('law', { idempotency_key: 'k-1', proposed_action: 'Something else.' }), key });
    expect(reused.status).toBe(422);
    expect(reused.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(reused.body).toMatchObject({ code: 'idempotency_key_reused', errors: [{ path: '/idempotency_key' }] });
  });

  it("joins review decisions sealed on the request thread into the same chain, and every leaf's inclusion proof verifies", async () => {
    const { key, tenantId } = await threaded();
    const keys = trustedKeySet((await ctx.request('/.well-known/service-keys.json')).body);
    const expectProofs = async () => {
      for (const entry of await tenantLog(tenantId)) {
        const proof = await ctx.request(`/v1/records/${entry.action_key}/inclusion-proof`, { key });
        expect(proof.status).toBe(200);
        expect(failedAnchorChecks(await verifyInclusionProof(proof.body, keys, entry.attestation_hash))).toEqual([]);
      }
    };
    const decide = (actionKey: string, reviewer: string) =>
      ctx.request('/v1/reviews', { json: { pack: 'law', action_key: actionKey, reviewer, decision: 'approved' }, key });

    ctx.clock.set('2025-01-01T10:15:00.000Z');
    const paused = await Promise.all([gate(key, false), gate(key, false)]);
    expect(paused.map((p) => p.body.decision)).toEqual(['needs_review', 'needs_review']);
    ctx.clock.set('2025-01-01T11:00:00.000Z');
    expect(await ctx.deps.workers.epochs.closeDue()).toHaveLength(1);
    // The request thread now holds the tenant's log in memory for proofs.
    await expectProofs();

    // Two decisions on one item race in one batch on the request thread: the loser's seal is
    // refused after its leaf was appended, and rolls back. Then the thread seals exactly one
    // gate, at the very size the rolled-back leaf had: the request thread's trees must not
    // serve the leaf it rolled back.
    const [a, b] = await Promise.all([decide(paused[0]!.body.action_key, 'attorney-1'), decide(paused[0]!.body.action_key, 'attorney-2')]);
    expect([a.status, b.status].sort()).toEqual([201, 409]);
    expect((await gate(key)).status).toBe(201);
    ctx.clock.set('2025-01-01T12:00:00.000Z');
    expect(await ctx.deps.workers.epochs.closeDue()).toHaveLength(1);
    await expectProofs();

    // And under load: decisions on the request thread among gates on the thread.
    const mixed = await Promise.all([decide(paused[1]!.body.action_key, 'attorney-3'), ...Array.from({ length: 20 }, () => gate(key))]);
    expect(mixed.map((r) => r.status)).toEqual(mixed.map(() => 201));
    const log = await tenantLog(tenantId);
    expect(log).toHaveLength(2 + 1 + 1 + 21);
    expectOneUnbrokenChain(log);
    ctx.clock.set('2025-01-01T13:00:00.000Z');
    expect(await ctx.deps.workers.epochs.closeDue()).toHaveLength(1);
    await expectProofs();
  });

  it('refuses only what a dying thread had not answered, with 503 problem+json, and goes on with a new thread', async () => {
    const { sealer, key, tenantId } = await threaded();
    const before = sealer.threadId;
    // Another connection holds the write lock: the thread's batch waits in BEGIN IMMEDIATE.
    const holder = new Database(ctx.store.file);
    holder.exec('BEGIN IMMEDIATE');
    const answers = Array.from({ length: 40 }, () => gate(key));
    await expect.poll(() => sealer.queued, { timeout: 10_000 }).toBe(40);
    // End the thread as a crash would; it stops as soon as the lock lets it run again.
    const terminated = sealer.terminateThread();
    holder.exec('ROLLBACK');
    holder.close();
    await terminated;
    const settled = await Promise.all(answers);
    const refused = settled.filter((s) => s.status !== 201);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.status).toBe(503);
      expect(r.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(r.body.code).toBe('service_unavailable');
    }
    expect(ctx.log.entries.some((e) => e.message === 'the sealing thread stopped; starting a new one')).toBe(true);
    // Readiness reports it down while its successor starts (workers_alive).
    expect(ctx.deps.workers.status().find((w) => w.name === 'seal-thread')).toMatchObject({ running: false, lastError: expect.stringContaining('exited') });

    // A new thread takes over; meanwhile the request thread seals.
    // A thread takes about a second to start from source.
    await expect.poll(() => sealer.threadId !== before && sealer.status().running && sealer.queued === 0, { timeout: 20_000 }).toBe(true);
    const after = await Promise.all(Array.from({ length: 10 }, () => gate(key)));
    expect(after.map((s) => s.status)).toEqual(after.map(() => 201));
    expect(sealer.status()).toMatchObject({ running: true, lastError: null });

    const log = await tenantLog(tenantId);
    expectOneUnbrokenChain(log);
    const sealed = new Set(log.map((e) => e.action_key));
    for (const s of [...settled, ...after].filter((s) => s.status === 201)) expect(sealed.has(s.body.action_key)).toBe(true);
  });

  it('seals everything queued before a shutdown ends the thread', async () => {
    const { key, tenantId } = await threaded();
    const answers = Array.from({ length: 30 }, () => gate(key));
    await new Promise((r) => setImmediate(r));
    const dataDir = ctx.dataDir;
    await ctx.deps.lifecycle.stop();
    expect((await Promise.all(answers)).map((a) => a.status)).toEqual(answers.map(() => 201));
    const store = openSqliteStore({ dataDir });
    try {
      const n = store.db.prepare('SELECT count(*) AS n FROM sealed_records WHERE tenant_id = ?').get(tenantId) as { n: number };
      expect(n.n).toBe(30);
    } finally {
      store.close();
    }
  });
});

describe('a companion sealing on its thread', () => {
  it('loses nothing it answered to a kill -9 mid-load, and continues the same chain after a restart', async () => {
    const dataDir = tempDataDir();
    const seed = await createTestContext({ dataDir });
    const { apiKey, tenantId } = seed.productionTenant();
    await seed.close();
    const logOf = () => {
      const store = openSqliteStore({ dataDir });
      try {
        return logEntries(store.db.prepare(TENANT_LOG_SQL).all(tenantId) as LogRow[]);
      } finally {
        store.close();
      }
    };

    const a = await start(dataDir);
    let killed = false;
    const acknowledged: string[] = [];
    const loads = gateLoad(a.url, apiKey, gateBody('law'), { n: 10_000, concurrency: 10, acknowledged, killed: () => killed });
    while (acknowledged.length < 150) await new Promise((r) => setTimeout(r, 10));
    killed = true;
    a.child.kill('SIGKILL');
    expect(await a.exited).toEqual({ code: null, signal: 'SIGKILL' });
    await loads;

    // The stored log has every answered seal, in one unbroken chain.
    const log = logOf();
    expectOneUnbrokenChain(log);
    const sealed = new Set(log.map((e) => e.action_key));
    for (const key of acknowledged) expect(sealed.has(key)).toBe(true);

    // A restarted companion appends to the same chain.
    killed = false;
    const b = await start(dataDir);
    const before = acknowledged.length;
    await gateLoad(b.url, apiKey, gateBody('law'), { n: 5, concurrency: 1, acknowledged });
    expect(acknowledged.length).toBe(before + 5);
    b.child.kill('SIGTERM');
    await b.exited;
    const after = logOf();
    expect(after).toHaveLength(log.length + 5);
    expectOneUnbrokenChain(after);
  });
});
