/**
 * What crosses between the request thread and the sealing thread (companion/seal-thread/
 * protocol.ts): answers asked for as text cross as their UTF-8 bytes, a turn's answers in one
 * transferred buffer, byte for byte what Buffer.from would encode; the requests of one turn
 * cross in one message, and one request that cannot be cloned is refused alone; a shutdown in
 * the very turn that sealed still seals everything. Real threads and a real SQLite file.
 */
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SealPipeline, SealRequest } from '../../companion/evidence/sealer.ts';
import { sealGate } from '../../companion/gate/seal-gate.ts';
import type { GateBody } from '../../companion/gate/seal-gate.ts';
import { getGatePack } from '../../companion/packs/registry.ts';
import { currentOverlay } from '../../companion/policy/overlay.ts';
import { decodeTexts, encodeTexts } from '../../companion/seal-thread/protocol.ts';
import type { TextAnswer } from '../../companion/seal-thread/protocol.ts';
import { ThreadedSealer } from '../../companion/seal-thread/threaded-sealer.ts';
import { openSqliteStore } from '../../companion/store.ts';
import { cleanupCompanions } from '../helpers/companion-process.ts';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { gateBody } from './pack-fixtures.ts';

describe('answers as bytes', () => {
  const TEXTS = [
    '{"decision":"allow"}',
    '',
    // Two-byte text as a gate answer's next_step has it, and characters of three and four UTF-8 bytes.
    '{"explanation":"\u201cProposed action\u201d needs review"}',
    'é 漢字 עברית 😀 𝄞 \u2028',
    'x'.repeat(5000),
  ];

  it('crosses byte for byte as Buffer.from encodes the text, with each answer’s id, status and replay flag', () => {
    const scratch = { bytes: Buffer.allocUnsafeSlow(0) };
    // Twice through one scratch buffer: grown by the first turn, reused by the second.
    for (const turn of [TEXTS, [...TEXTS].reverse()]) {
      const answers: TextAnswer[] = turn.map((text, i) => ({ id: 1000 + i, status: i % 2 === 0 ? 201 : 409, replayed: i === 2, text }));
      const encoded = encodeTexts(answers, scratch);
      expect(encoded.count).toBe(answers.length);
      // Sized exactly: the table, then the bytes.
      expect(encoded.buffer.byteLength).toBe(answers.length * 16 + turn.reduce((n, t) => n + Buffer.byteLength(t), 0));
      const decoded: { id: number; status: number; replayed: boolean; text: string; bytes: Uint8Array }[] = [];
      decodeTexts(encoded, (id, outcome) => decoded.push({ id, status: outcome.status, replayed: outcome.replayed, text: Buffer.from(outcome.bytes!).toString('utf8'), bytes: outcome.bytes! }));
      expect(decoded.map(({ id, status, replayed, text }) => ({ id, status, replayed, text }))).toEqual(answers);
      for (const [i, d] of decoded.entries()) expect(Buffer.compare(Buffer.from(d.bytes), Buffer.from(turn[i]!))).toBe(0);
    }
  });

  it('is an ArrayBuffer of its own, which can be transferred', () => {
    const encoded = encodeTexts([{ id: 1, status: 201, replayed: false, text: 'small' }], { bytes: Buffer.allocUnsafeSlow(0) });
    const { port1, port2 } = new MessageChannel();
    port1.postMessage(encoded, [encoded.buffer]);
    expect(encoded.buffer.byteLength).toBe(0); // detached: moved, not copied
    port1.close();
    port2.close();
  });
});

describe('requests crossing to the sealing thread', () => {
  let ctx: TestContext | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await ctx?.close();
    ctx = undefined;
    cleanupCompanions();
  });

  /** A gate decision's seal request as the hot path makes it, and the thread's sealer. */
  async function threadedGate(): Promise<{ ctx: TestContext; sealer: ThreadedSealer; request: SealRequest; tenantId: string }> {
    ctx = await createTestContext({ env: { SVC_SEAL_THREAD: '1' } });
    const { tenantId } = ctx.productionTenant();
    const sealer = ctx.deps.sealer as ThreadedSealer;
    expect(sealer).toBeInstanceOf(ThreadedSealer);
    let captured: SealRequest | undefined;
    const capture = { seal: (r: SealRequest) => ((captured = r), Promise.resolve({ status: 201, body: {}, replayed: false })) } as unknown as SealPipeline;
    const auth = { tenantId, tenantKind: 'production' as const, keyId: 'key_test' };
    await sealGate({ ...ctx.deps, sealer: capture }, auth, getGatePack('law')!, gateBody('law') as GateBody, await currentOverlay(ctx.deps.store, tenantId, 'law'));
    return { ctx, sealer, request: { ...captured!, answerAsText: true }, tenantId };
  }

  const sealedCount = (c: TestContext, tenantId: string) => {
    const store = openSqliteStore({ dataDir: c.dataDir });
    try {
      return (store.db.prepare('SELECT count(*) AS n FROM sealed_records WHERE tenant_id = ?').get(tenantId) as { n: number }).n;
    } finally {
      store.close();
    }
  };

  it('posts the requests of one turn in one message, and answers each with its own bytes', async () => {
    const { sealer, request } = await threadedGate();
    const posted = vi.spyOn(Worker.prototype, 'postMessage');
    const outcomes = await Promise.all(Array.from({ length: 25 }, () => sealer.seal(request)));
    const seals = posted.mock.calls.map(([m]) => m as { type: string; seals?: unknown[] }).filter((m) => m.type === 'seal');
    expect(seals.map((m) => m.seals!.length)).toEqual([25]);
    const keys = new Set<string>();
    for (const o of outcomes) {
      expect(o).toMatchObject({ status: 201, replayed: false, body: undefined });
      const answer = JSON.parse(Buffer.from(o.bytes!).toString('utf8')) as { action_key: string; reasons: { explanation: string }[] };
      keys.add(answer.action_key);
      // The curly quotes of the law pack's explanation came through as UTF-8.
      expect(answer.reasons[0]!.explanation).toMatch(/\u201c.*\u201d/);
    }
    expect(keys.size).toBe(25);
  });

  it('refuses only the request that cannot be cloned, and seals the others of its turn', async () => {
    const { sealer, request } = await threadedGate();
    const uncloneable = { ...request, context: { ...request.context, oops: Symbol('not data') } };
    const settled = await Promise.allSettled([sealer.seal(request), sealer.seal(uncloneable), sealer.seal(request)]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((settled[1] as PromiseRejectedResult).reason).toMatchObject({ name: 'DataCloneError' });
    expect(sealer.queued).toBe(0);
  });

  it('seals the requests of the turn in which it is closed before the thread ends', async () => {
    const { ctx: c, sealer, request, tenantId } = await threadedGate();
    const before = sealedCount(c, tenantId);
    // No turn passes between these seals and the shutdown.
    const answers = Array.from({ length: 12 }, () => sealer.seal(request));
    const closed = sealer.close();
    const outcomes = await Promise.all(answers);
    await closed;
    expect(outcomes.map((o) => o.status)).toEqual(outcomes.map(() => 201));
    expect(sealedCount(c, tenantId) - before).toBe(12);
  });
});
