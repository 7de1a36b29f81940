/** The route dispatch outbox and callback signatures (routing capability) behave the same on SQLite and PostgreSQL. */
import { describe, expect, it } from 'vitest';
import { createPostgresRoutingStore } from '../../../companion/routing/postgres-store.ts';
import { createSqliteRoutingStore } from '../../../companion/routing/sqlite-store.ts';
import type { DispatchRow, NewDispatch, Resolution, RoutingStore } from '../../../companion/routing/store.ts';
import { databasePerCase, engines, interleaved, seedTenants } from './engines.ts';
import type { StoreFactories } from './engines.ts';

const ROUTING: StoreFactories<RoutingStore> = { sqlite: createSqliteRoutingStore, postgres: createPostgresRoutingStore };
const AT = '2025-01-01T00:00:00.000Z';
const RUN_AT = Date.parse(AT);

const t = (seconds: number) => new Date(Date.parse(AT) + seconds * 1000).toISOString();

function dispatch(n: number, over: Partial<NewDispatch> = {}): NewDispatch {
  return {
    id: `dsp_${String(n).padStart(4, '0')}`,
    tenantId: 'ten_a',
    actionKey: `fin:refund:${n}`,
    channel: 'chat',
    target: 'finance',
    body: `{"n":${n}}`,
    runAt: RUN_AT + n,
    createdAt: t(n),
    ...over,
  };
}

/** The row a fresh dispatch is stored as. */
function stored(d: NewDispatch, over: Partial<DispatchRow> = {}): DispatchRow {
  return {
    id: d.id,
    tenant_id: d.tenantId,
    action_key: d.actionKey,
    channel: d.channel,
    target: d.target,
    body: d.body,
    status: 'pending',
    prepared_at: null,
    attempt_count: 0,
    run_at: d.runAt,
    lease_owner: null,
    lease_expires_at: null,
    last_error: null,
    last_attempt_at: null,
    created_at: d.createdAt,
    completed_at: null,
    resolved_at: null,
    resolution: null,
    ...over,
  };
}

const resolution = (decision: string, over: Partial<Resolution> = {}): Resolution => ({
  decision,
  reviewer: 'ann',
  receipt_action_key: `review:${decision}`,
  via: 'review_api',
  external_reference: null,
  ...over,
});

const SIG = (c: string) => c.repeat(64);

describe.each(engines())('routing store on $name', (engine) => {
  const db = databasePerCase(engine, (fresh) => seedTenants(fresh, ['ten_a', 'ten_b'], AT));

  /** Sets a dispatch's job columns as the send queue would. */
  async function jobState(id: string, status: string, attempts: number, preparedAt: string | null = null): Promise<void> {
    await db.exec(
      `UPDATE route_dispatches SET status = ?, attempt_count = ?, lease_owner = 'w1', lease_expires_at = ?, last_error = 'boom',
         last_attempt_at = ?, completed_at = ?, prepared_at = ? WHERE id = ?`,
      status,
      attempts,
      RUN_AT + 60_000,
      t(30),
      t(31),
      preparedAt,
      id,
    );
  }

  it('inserts one dispatch per action and finds it by key and by action, in its tenant only', async () => {
    const routing = db.store(ROUTING);
    const d1 = dispatch(1, { channel: 'workflow', target: 'general-counsel' });
    expect(await routing.insert(d1)).toBe(true);
    // The same action again (another key, another target): nothing changes.
    expect(await routing.insert(dispatch(2, { actionKey: d1.actionKey, target: 'other' }))).toBe(false);
    // The same action key in another tenant is another dispatch.
    const d3 = dispatch(3, { tenantId: 'ten_b', actionKey: d1.actionKey });
    expect(await routing.insert(d3)).toBe(true);

    expect(await routing.find('ten_a', d1.id)).toEqual(stored(d1));
    expect(await routing.findByAction('ten_a', d1.actionKey)).toEqual(stored(d1));
    expect(await routing.findByAction('ten_b', d1.actionKey)).toEqual(stored(d3));
    expect(await routing.find('ten_b', d1.id)).toBeUndefined();
    expect(await routing.find('ten_a', 'dsp_0002')).toBeUndefined();
    expect(await routing.findByAction('ten_a', 'fin:refund:9')).toBeUndefined();
    const row = await routing.find('ten_a', d1.id);
    expect(typeof row?.run_at).toBe('number');
    expect(typeof row?.attempt_count).toBe('number');
  });

  it('retargets an unresolved dispatch, resetting its job, keeps a resolved one, and inserts a missing one', async () => {
    const routing = db.store(ROUTING);
    const d1 = dispatch(1);
    await routing.insert(d1);
    await jobState(d1.id, 'dead', 3, t(20));
    expect(await routing.find('ten_a', d1.id)).toMatchObject({ status: 'dead', attempt_count: 3, lease_owner: 'w1', prepared_at: t(20) });

    // The step's new row (another id) moves the existing dispatch, which keeps its key and created_at.
    const moved = dispatch(5, { actionKey: d1.actionKey, channel: 'webhook', target: 'cfo', body: '{"moved":true}' });
    expect(await routing.retarget(moved)).toBe(true);
    expect(await routing.find('ten_a', d1.id)).toEqual(
      stored(d1, { channel: 'webhook', target: 'cfo', body: '{"moved":true}', run_at: moved.runAt }),
    );
    expect(await routing.find('ten_a', moved.id)).toBeUndefined();

    // No dispatch yet: the row is inserted as is.
    const d2 = dispatch(2);
    expect(await routing.retarget(d2)).toBe(true);
    expect(await routing.find('ten_a', d2.id)).toEqual(stored(d2));

    // Resolved: stays where it is.
    expect(await routing.resolve('ten_a', d2.actionKey, t(40), resolution('approved'))).toBe(true);
    const before = await routing.find('ten_a', d2.id);
    expect(await routing.retarget(dispatch(6, { actionKey: d2.actionKey, target: 'elsewhere' }))).toBe(false);
    expect(await routing.find('ten_a', d2.id)).toEqual(before);
  });

  it('lists a tenant dispatches newest first, paged, optionally dead only', async () => {
    const routing = db.store(ROUTING);
    for (const n of [3, 1, 4, 2, 5]) await routing.insert(dispatch(n));
    await routing.insert(dispatch(6, { tenantId: 'ten_b' }));
    await jobState('dsp_0002', 'dead', 5);
    await jobState('dsp_0004', 'dead', 5);
    await jobState('dsp_0005', 'failed', 1);

    const ids = (rows: DispatchRow[]) => rows.map((r) => r.id);
    expect(ids(await routing.list({ tenantId: 'ten_a', limit: 10, offset: 0 }))).toEqual(['dsp_0005', 'dsp_0004', 'dsp_0003', 'dsp_0002', 'dsp_0001']);
    expect(ids(await routing.list({ tenantId: 'ten_a', deadOnly: false, limit: 2, offset: 1 }))).toEqual(['dsp_0004', 'dsp_0003']);
    expect(ids(await routing.list({ tenantId: 'ten_a', deadOnly: true, limit: 10, offset: 0 }))).toEqual(['dsp_0004', 'dsp_0002']);
    expect(ids(await routing.list({ tenantId: 'ten_a', deadOnly: true, limit: 10, offset: 1 }))).toEqual(['dsp_0002']);
    expect(await routing.list({ tenantId: 'ten_a', limit: 10, offset: 5 })).toEqual([]);
    expect(ids(await routing.list({ tenantId: 'ten_b', limit: 10, offset: 0 }))).toEqual(['dsp_0006']);
    const [first] = await routing.list({ tenantId: 'ten_a', deadOnly: true, limit: 1, offset: 0 });
    expect(first).toEqual(await routing.find('ten_a', 'dsp_0004'));
    expect(first).toMatchObject({ status: 'dead', attempt_count: 5, lease_expires_at: RUN_AT + 60_000 });
  });

  it('lists unprepared pending dispatches oldest first and marks one prepared once', async () => {
    const routing = db.store(ROUTING);
    for (const n of [4, 2, 1, 3, 5, 6]) await routing.insert(dispatch(n));
    await routing.insert(dispatch(7, { tenantId: 'ten_b' }));
    await jobState('dsp_0003', 'sent', 1);
    await routing.resolve('ten_a', 'fin:refund:5', t(50), resolution('rejected'));

    expect(await routing.unprepared('ten_a', 10)).toEqual(['dsp_0001', 'dsp_0002', 'dsp_0004', 'dsp_0006']);
    expect(await routing.markPrepared('ten_b', 'dsp_0002', t(60))).toBe(false);
    expect(await routing.markPrepared('ten_a', 'dsp_0002', t(60))).toBe(true);
    expect(await routing.markPrepared('ten_a', 'dsp_0002', t(61))).toBe(false);
    expect((await routing.find('ten_a', 'dsp_0002'))?.prepared_at).toBe(t(60));
    // Not pending: no.
    expect(await routing.markPrepared('ten_a', 'dsp_0003', t(60))).toBe(false);
    expect(await routing.markPrepared('ten_a', 'dsp_9999', t(60))).toBe(false);
    expect(await routing.unprepared('ten_a', 10)).toEqual(['dsp_0001', 'dsp_0004', 'dsp_0006']);
    expect(await routing.unprepared('ten_a', 2)).toEqual(['dsp_0001', 'dsp_0004']);
    expect(await routing.unprepared('ten_b', 10)).toEqual(['dsp_0007']);
  });

  it('resolves once; an escalation is replaced by the later decision', async () => {
    const routing = db.store(ROUTING);
    await routing.insert(dispatch(1));
    await routing.insert(dispatch(2));
    const escalated = resolution('escalated', { via: 'callback', external_reference: { ticket: 'T-1', n: 7 } });
    expect(await routing.resolve('ten_b', 'fin:refund:1', t(10), escalated)).toBe(false);
    expect(await routing.resolve('ten_a', 'fin:refund:9', t(10), escalated)).toBe(false);
    expect(await routing.resolve('ten_a', 'fin:refund:1', t(10), escalated)).toBe(true);
    const row = await routing.findByAction('ten_a', 'fin:refund:1');
    expect(row?.resolved_at).toBe(t(10));
    expect(JSON.parse(row!.resolution!)).toEqual(escalated);
    // Escalated again, then decided: both replace it; after that it is final.
    expect(await routing.resolve('ten_a', 'fin:refund:1', t(20), resolution('escalated'))).toBe(true);
    expect(await routing.resolve('ten_a', 'fin:refund:1', t(30), resolution('approved'))).toBe(true);
    expect(await routing.resolve('ten_a', 'fin:refund:1', t(40), resolution('rejected'))).toBe(false);
    expect(await routing.resolve('ten_a', 'fin:refund:1', t(40), resolution('escalated'))).toBe(false);
    const final = await routing.findByAction('ten_a', 'fin:refund:1');
    expect(final?.resolved_at).toBe(t(30));
    expect(JSON.parse(final!.resolution!)).toEqual(resolution('approved'));
    // A final decision straight away.
    expect(await routing.resolve('ten_a', 'fin:refund:2', t(10), resolution('rejected'))).toBe(true);
    expect(await routing.resolve('ten_a', 'fin:refund:2', t(11), resolution('approved'))).toBe(false);
  });

  it('counts a target dispatches by state', async () => {
    const routing = db.store(ROUTING);
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8]) await routing.insert(dispatch(n));
    await routing.insert(dispatch(9, { target: 'legal' }));
    await routing.insert(dispatch(10, { channel: 'workflow' }));
    await routing.insert(dispatch(11, { tenantId: 'ten_b' }));
    await routing.markPrepared('ten_a', 'dsp_0002', t(5));
    await jobState('dsp_0003', 'sent', 1);
    await jobState('dsp_0004', 'sent', 1);
    await jobState('dsp_0005', 'failed', 2);
    await jobState('dsp_0006', 'dead', 5);
    await routing.resolve('ten_a', 'fin:refund:7', t(9), resolution('approved'));
    await jobState('dsp_0008', 'sent', 1);
    await routing.resolve('ten_a', 'fin:refund:8', t(9), resolution('escalated'));

    expect(await routing.countByTarget('ten_a', 'chat', 'finance')).toEqual({ pending: 1, prepared: 1, sent: 2, failed: 1, dead: 1, resolved: 2 });
    expect(await routing.countByTarget('ten_a', 'chat', 'legal')).toEqual({ pending: 1, prepared: 0, sent: 0, failed: 0, dead: 0, resolved: 0 });
    expect(await routing.countByTarget('ten_a', 'workflow', 'finance')).toEqual({ pending: 1, prepared: 0, sent: 0, failed: 0, dead: 0, resolved: 0 });
    expect(await routing.countByTarget('ten_b', 'webhook', 'finance')).toEqual({ pending: 0, prepared: 0, sent: 0, failed: 0, dead: 0, resolved: 0 });
  });

  it('reads the newest ticks of one queue', async () => {
    const tick = (queue: string, worker: string, n: number) =>
      db.exec(
        `INSERT INTO job_ticks (queue, worker, started_at, finished_at, claimed, succeeded, retrying, dead, lease_lost)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        queue,
        worker,
        t(n),
        t(n + 1),
        n,
        n + 1,
        n + 2,
        n + 3,
        n + 4,
      );
    await tick('route_dispatches', 'w1', 1);
    await tick('webhook_deliveries', 'w1', 2);
    await tick('route_dispatches', 'w2', 3);
    await tick('route_dispatches', 'w1', 4);
    const routing = db.store(ROUTING);
    const row = (worker: string, n: number) => ({
      worker,
      started_at: t(n),
      finished_at: t(n + 1),
      claimed: n,
      succeeded: n + 1,
      retrying: n + 2,
      dead: n + 3,
      lease_lost: n + 4,
    });
    expect(await routing.ticks('route_dispatches', 10)).toEqual([row('w1', 4), row('w2', 3), row('w1', 1)]);
    expect(await routing.ticks('route_dispatches', 2)).toEqual([row('w1', 4), row('w2', 3)]);
    expect(await routing.ticks('webhook_deliveries', 10)).toEqual([row('w1', 2)]);
    expect(await routing.ticks('other', 10)).toEqual([]);
  });

  it('remembers a callback signature once per tenant', async () => {
    const routing = db.store(ROUTING);
    expect(await routing.rememberSignature('ten_a', SIG('a'), t(1))).toBe(true);
    expect(await routing.rememberSignature('ten_a', SIG('a'), t(2))).toBe(false);
    expect(await routing.rememberSignature('ten_b', SIG('a'), t(3))).toBe(true);
    expect(await routing.rememberSignature('ten_a', SIG('b'), t(4))).toBe(true);
    expect(await db.rows('SELECT tenant_id, signature_hash, received_at FROM route_callback_signatures ORDER BY tenant_id, signature_hash')).toEqual([
      { tenant_id: 'ten_a', signature_hash: SIG('a'), received_at: t(1) },
      { tenant_id: 'ten_a', signature_hash: SIG('b'), received_at: t(4) },
      { tenant_id: 'ten_b', signature_hash: SIG('a'), received_at: t(3) },
    ]);
  });

  it('rolls back a dispatch, its resolution and a remembered signature with their transaction', async () => {
    await db.store(ROUTING).insert(dispatch(1));
    await expect(
      db.transaction(async (tx) => {
        const routing = tx.store(ROUTING);
        expect(await routing.insert(dispatch(2))).toBe(true);
        expect(await routing.resolve('ten_a', 'fin:refund:1', t(5), resolution('approved'))).toBe(true);
        expect(await routing.rememberSignature('ten_a', SIG('c'), t(5))).toBe(true);
        expect(await routing.findByAction('ten_a', 'fin:refund:2')).toEqual(stored(dispatch(2)));
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    const routing = db.store(ROUTING);
    expect(await routing.findByAction('ten_a', 'fin:refund:2')).toBeUndefined();
    expect(await routing.find('ten_a', 'dsp_0001')).toEqual(stored(dispatch(1)));
    expect(await routing.rememberSignature('ten_a', SIG('c'), t(6))).toBe(true);
    expect(await routing.insert(dispatch(2))).toBe(true);
  });

  if (engine.name === 'postgres') describe('concurrent companions on PostgreSQL', () => {
    it('resolves a dispatch once under two simultaneous final decisions', async () => {
      await db.store(ROUTING).insert(dispatch(1));
      const results = await Promise.all(
        ['approved', 'rejected'].map((d) => db.transaction(async (tx) => tx.store(ROUTING).resolve('ten_a', 'fin:refund:1', t(10), resolution(d)))),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results[0] ? 'approved' : 'rejected';
      expect(JSON.parse((await db.store(ROUTING).find('ten_a', 'dsp_0001'))!.resolution!)).toEqual(resolution(winner));

      await db.store(ROUTING).insert(dispatch(2));
      const [first, second] = await interleaved(
        db,
        ROUTING,
        (s) => s.resolve('ten_a', 'fin:refund:2', t(10), resolution('approved')),
        (s) => s.resolve('ten_a', 'fin:refund:2', t(11), resolution('rejected')),
      );
      expect([first, second]).toEqual([true, false]);
      // After a concurrent escalation, the waiting decision replaces it.
      await db.store(ROUTING).insert(dispatch(3));
      expect(
        await interleaved(
          db,
          ROUTING,
          (s) => s.resolve('ten_a', 'fin:refund:3', t(10), resolution('escalated')),
          (s) => s.resolve('ten_a', 'fin:refund:3', t(11), resolution('approved')),
        ),
      ).toEqual([true, true]);
      expect(JSON.parse((await db.store(ROUTING).find('ten_a', 'dsp_0003'))!.resolution!)).toEqual(resolution('approved'));
    });

    it('does not retarget a dispatch a concurrent decision resolved', async () => {
      await db.store(ROUTING).insert(dispatch(1));
      const [resolved, retargeted] = await interleaved(
        db,
        ROUTING,
        (s) => s.resolve('ten_a', 'fin:refund:1', t(10), resolution('approved')),
        (s) => s.retarget(dispatch(2, { actionKey: 'fin:refund:1', target: 'cfo' })),
      );
      expect([resolved, retargeted]).toEqual([true, false]);
      expect(await db.store(ROUTING).find('ten_a', 'dsp_0001')).toMatchObject({ target: 'finance', resolved_at: t(10) });
    });

    it('inserts one dispatch per action, prepares once and remembers a signature once under simultaneous calls', async () => {
      const inserted = await Promise.all(
        [dispatch(1), dispatch(2, { actionKey: 'fin:refund:1' })].map((d) => db.transaction(async (tx) => tx.store(ROUTING).insert(d))),
      );
      expect(inserted.filter(Boolean)).toHaveLength(1);
      expect(await db.rows('SELECT count(*) AS n FROM route_dispatches')).toEqual([{ n: 1 }]);
      const key = inserted[0] ? 'dsp_0001' : 'dsp_0002';

      const prepared = await Promise.all([10, 11].map((s) => db.transaction(async (tx) => tx.store(ROUTING).markPrepared('ten_a', key, t(s)))));
      expect(prepared.filter(Boolean)).toHaveLength(1);

      expect(
        await interleaved(
          db,
          ROUTING,
          (s) => s.rememberSignature('ten_a', SIG('d'), t(1)),
          (s) => s.rememberSignature('ten_a', SIG('d'), t(2)),
        ),
      ).toEqual([true, false]);
      expect(await db.rows('SELECT received_at FROM route_callback_signatures')).toEqual([{ received_at: t(1) }]);
    });
  });
});
