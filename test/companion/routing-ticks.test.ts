/**
 * GET /routing/outbox/ticks shows a tenant the send worker's runs over its own dispatches only
 * (route_send_receipts, migration 0020): another tenant's dispatches, sent by the same worker in
 * the same runs, are never counted in its answer, and a tenant with no dispatches sees no runs.
 * The service-wide tick receipts (job_ticks) stay an operator's view.
 */
import { afterEach, expect, it } from 'vitest';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { SECRETS, VALUES, startStandIn } from './routing-fixtures.ts';
import type { StandIn } from './routing-fixtures.ts';
import { gateBody } from './pack-fixtures.ts';

let ctx: TestContext;
let platform: StandIn;
afterEach(async () => {
  expect(ctx.log.entries.filter((e) => e.level === 'error')).toEqual([]);
  await ctx.close();
  await platform.close();
});

interface Tick {
  claimed: number;
  succeeded: number;
  retrying: number;
  dead: number;
  lease_lost: number;
}

const total = (ticks: Tick[], field: keyof Tick) => ticks.reduce((n, t) => n + t[field], 0);

it("shows each tenant its own dispatches' runs of the send worker, never another tenant's", async () => {
  Object.assign(process.env, VALUES);
  platform = await startStandIn();
  ctx = await createTestContext({ env: { SVC_WEBHOOK_ALLOW_LOOPBACK: '1', SVC_OUTBOX_EXTERNAL_SEND: '1', SVC_PUBLIC_BASE_URL: 'https://gate.example.com', SVC_SECRET_GRANTS: JSON.stringify({ '*': [SECRETS.token] }) } });
  const a = await ctx.signup();
  const b = await ctx.signup();
  const c = await ctx.signup();
  for (const t of [a, b]) {
    const put = await ctx.request('/tenant/integrations/workflow/privacy-office', { method: 'PUT', json: { enabled: true, config: { url: platform.url }, secret_ref: SECRETS.token }, key: t.apiKey });
    expect(put.status, put.text).toBe(201);
  }
  const pause = async (key: string) => expect((await ctx.request('/v1/gate', { json: gateBody('medicine', { action_type: 'phi-export' }), key })).body.decision).toBe('needs_review');
  await pause(a.apiKey);
  await pause(a.apiKey);
  await pause(a.apiKey);
  await pause(b.apiKey);
  // One run of the worker claims every tenant's dispatches together.
  let claimed = 0;
  for (let i = 0; i < 20; i++) {
    const n = (await ctx.deps.routing.worker.tick()).claimed;
    if (n === 0) break;
    claimed += n;
  }
  expect(claimed).toBe(4);
  expect(platform.requests).toHaveLength(4);

  const ticksOf = async (key: string) => {
    const res = await ctx.request('/routing/outbox/ticks', { key });
    expect(res.status).toBe(200);
    expect(res.body.queue).toBe('route_dispatches');
    return res.body.ticks as (Tick & { worker: string; started_at: string; finished_at: string })[];
  };
  const ticksA = await ticksOf(a.apiKey);
  const ticksB = await ticksOf(b.apiKey);
  expect(total(ticksA, 'claimed')).toBe(3);
  expect(total(ticksA, 'succeeded')).toBe(3);
  expect(total(ticksB, 'claimed')).toBe(1);
  expect(total(ticksB, 'succeeded')).toBe(1);
  for (const t of [...ticksA, ...ticksB]) {
    expect(t.claimed).toBe(t.succeeded + t.retrying + t.dead + t.lease_lost);
    expect(t.started_at <= t.finished_at).toBe(true);
    expect(t.worker).toBe(ctx.deps.routing.worker.owner);
  }
  expect(await ticksOf(c.apiKey)).toEqual([]);
  // The queue's own receipts count both tenants together: never a tenant's answer.
  const [all] = await ctx.sql<{ claimed: number }>("SELECT CAST(sum(claimed) AS INTEGER) AS claimed FROM job_ticks WHERE queue = 'route_dispatches'");
  expect(all!.claimed).toBe(4);
  expect(total(ticksA, 'claimed')).not.toBe(all!.claimed);

  // A failing send is counted as the tenant's own retrying dispatch.
  await platform.close();
  platform = await startStandIn(() => ({ status: 503 }));
  await ctx.request('/tenant/integrations/workflow/privacy-office', { method: 'PUT', json: { enabled: true, config: { url: platform.url }, secret_ref: SECRETS.token }, key: b.apiKey });
  await pause(b.apiKey);
  expect((await ctx.deps.routing.worker.tick()).claimed).toBe(1);
  const [newest] = await ticksOf(b.apiKey);
  expect(newest).toMatchObject({ claimed: 1, succeeded: 0, retrying: 1, dead: 0, lease_lost: 0 });
  expect(total(await ticksOf(a.apiKey), 'claimed')).toBe(3);
});

it("keeps about the newest receipts of each tenant: pruning one tenant's busy history leaves another's quiet one", async () => {
  platform = await startStandIn();
  ctx = await createTestContext();
  const busy = await ctx.signup();
  const quiet = await ctx.signup();
  const receipt = (tenantId: string, n: number) => ({
    tenantId,
    worker: 'route-outbox:test',
    startedAt: new Date(Date.UTC(2025, 0, 1, 0, 0, n)).toISOString(),
    finishedAt: new Date(Date.UTC(2025, 0, 1, 0, 0, n)).toISOString(),
    claimed: 1,
    succeeded: 1,
    retrying: 0,
    dead: 0,
    leaseLost: 0,
  });
  await ctx.store.routing.recordSendReceipts([receipt(quiet.tenantId, 0), receipt(quiet.tenantId, 1)], 5);
  // The busy tenant's receipts reach the pruning point (every PRUNE_EVERY-th row of the table).
  await ctx.store.routing.recordSendReceipts(Array.from({ length: 998 }, (_, i) => receipt(busy.tenantId, i)), 5);
  const busyLeft = await ctx.store.routing.tenantSendReceipts(busy.tenantId, 100);
  expect(busyLeft).toHaveLength(5);
  expect(busyLeft[0]!.started_at).toBe(receipt(busy.tenantId, 997).startedAt); // newest first, the newest kept
  expect(await ctx.store.routing.tenantSendReceipts(quiet.tenantId, 100)).toHaveLength(2);
});
