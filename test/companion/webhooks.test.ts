/**
 * Signed event webhooks end to end, in process: the real app, SQLite file and delivery worker,
 * a ManualClock for retries, and a real loopback receiver (interface-spec "Webhook
 * integration", "Webhook delivery item", Events rules 1–7). Signatures are checked by an
 * independent verifier written here with node:crypto over the exact raw bytes received.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../shared/webhook-verifier.ts';
import { createTestContext, freshTenantContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { recordBody } from './pack-fixtures.ts';
import { startReceiver } from './webhook-receiver.ts';
import type { ReceivedRequest, Receiver } from './webhook-receiver.ts';

let ctx: TestContext;
let key: string;
let tenantId: string;
let rx: Receiver;

beforeEach(async () => {
  ({ ctx, key, tenantId } = await freshTenantContext({ env: { SVC_WEBHOOK_ALLOW_LOOPBACK: '1' } }));
  rx = await startReceiver();
});
afterEach(async () => {
  // A failure the worker swallowed (an outcome it could not store) must not pass unnoticed.
  expect(ctx.log.entries.filter((e) => e.level === 'error')).toEqual([]);
  await ctx.close();
  await rx.close();
});

const put = (target: string, json: unknown, k = key) => ctx.request(`/tenant/integrations/webhook/${target}`, { method: 'PUT', json, key: k });
const deliveries = (target: string, query = '') => ctx.request(`/tenant/integrations/webhook/${target}/deliveries${query}`, { key });
const record = () => ctx.request('/v1/record', { json: recordBody(), key });
/** Runs worker ticks until nothing more is due now. */
async function drain(): Promise<void> {
  for (let i = 0; i < 50; i++) if ((await ctx.deps.webhooks.worker.tick()).claimed === 0) return;
  throw new Error('the queue did not drain');
}

/** Independent receiver-side check of Events rules 3–5 with node:crypto. */
function independentlyVerify(req: ReceivedRequest, signingSecret: string): boolean {
  const derived = createHash('sha256').update(`service-webhook-signing:${signingSecret}`, 'utf8').digest('hex');
  const header = String(req.headers['x-service-signature']);
  const t = /^t=(\d+)/.exec(header)?.[1];
  const v1s = [...header.matchAll(/v1=([0-9a-f]{64})/g)].map((m) => m[1]!);
  if (t !== req.headers['x-service-timestamp']) return false;
  const mac = createHmac('sha256', derived).update(Buffer.concat([Buffer.from(`${t}.${String(req.headers['x-service-id'])}.`), req.raw])).digest();
  return v1s.some((v) => timingSafeEqual(Buffer.from(v, 'hex'), mac));
}

describe('PUT /tenant/integrations/webhook/{target}', () => {
  it('shows a whsec_ secret once with its derivation and keeps only the derived key', async () => {
    const res = await put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] } });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const secret: string = res.body.signing_secret;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(res.body.signing_key_derivation.input).toContain('service-webhook-signing:');
    expect(res.body).toMatchObject({ channel: 'webhook', target: 'ops', enabled: true, secret_ref: null, readiness: { state: 'ready' } });

    const again = await put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed', 'verify.failed'] } });
    expect(again.status).toBe(200);
    expect(again.body.signing_secret).toBeUndefined();
    expect(again.body.config.events).toEqual(['record.sealed', 'verify.failed']);

    // Stored sealed under the store's key-encryption key, never as the derived key itself (store-encryption.test.ts).
    const [stored] = await ctx.sql<{ key: string; kek_id: string }>('SELECT key, kek_id FROM webhook_signing_keys');
    expect(stored!.key).not.toContain(createHash('sha256').update(`service-webhook-signing:${secret}`).digest('hex'));
    expect(stored!.kek_id).toMatch(/^kek_[0-9a-f]{16}$/);
    const dump = JSON.stringify(await ctx.sql('SELECT * FROM tenant_integrations'));
    expect(dump).not.toContain(secret.slice(6));
  });

  it('answers a bad setup with 422 naming every failing field and leaves the target unchanged', async () => {
    process.env.WEBHOOK_TEST_UNGRANTED = 'value';
    await put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] } });
    const integrations = () => ctx.sql('SELECT * FROM tenant_integrations ORDER BY channel, target');
    const keys = () => ctx.sql('SELECT * FROM webhook_signing_keys ORDER BY id');
    const before = await integrations();
    const keysBefore = await keys();
    const cases: [unknown, string[]][] = [
      [{ enabled: true, config: { url: 'http://hooks.example.com/in', events: ['record.sealed'] } }, ['/config/url']],
      [{ enabled: true, config: { url: 'https://10.0.0.1/in', events: ['record.sealed'] } }, ['/config/url']],
      [{ enabled: true, config: { url: 'https://user:pw@hooks.example.com/', events: [] } }, ['/config/url']],
      [{ enabled: true, config: { url: rx.url, events: ['record.sealed'] }, secret_ref: 'whsec_rawsecretmaterialhere' }, ['/secret_ref']],
      [{ enabled: true, config: { url: rx.url, events: ['record.sealed'] }, secret_ref: 'env://WEBHOOK_TEST_UNGRANTED' }, ['/secret_ref']],
      [{ enabled: true, config: { url: rx.url, events: ['record.sealed', 'nope'] } }, ['/config/events/1']],
      [{ enabled: true, config: { url: rx.url, events: ['record.sealed', 'record.sealed'] } }, ['/config/events']],
      [{ enabled: true, config: { url: rx.url, events: [], meter_thresholds: [5, 5, 0] } }, ['/config/meter_thresholds/2', '/config/meter_thresholds']],
      [{ enabled: true, config: { url: rx.url, events: [], extra: 1 } }, ['/config/extra']],
      [{ enabled: 'yes', config: { url: rx.url, events: [] }, rotate: true }, ['/enabled', '/rotate']],
      [{ enabled: true, config: { url: 'https://[::ffff:127.0.0.1]/', events: [] }, secret_ref: 'raw material', rotate_signing_secret: true }, ['/config/url', '/secret_ref', '/rotate_signing_secret']],
    ];
    for (const [body, paths] of cases) {
      const res = await put('ops', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.body.errors.map((e: { path: string }) => e.path).sort(), JSON.stringify(body)).toEqual([...paths].sort());
      expect(res.text).not.toContain('rawsecretmaterialhere');
    }
    expect(await integrations()).toEqual(before);
    expect(await keys()).toEqual(keysBefore);
    // A channel other than webhook is not accepted yet.
    expect((await ctx.request('/tenant/integrations/chat/ops', { method: 'PUT', key, json: { enabled: true, config: { url: rx.url, events: [] } } })).status).toBe(422);
    delete process.env.WEBHOOK_TEST_UNGRANTED;
  });

  it('refuses rotation of a target that does not exist yet', async () => {
    const res = await put('new', { enabled: true, config: { url: rx.url, events: [] }, rotate_signing_secret: true });
    expect(res.status).toBe(422);
    expect(res.body.errors[0]).toMatchObject({ path: '/rotate_signing_secret', code: 'nothing_to_rotate' });
    expect(await ctx.store.integrations.find(tenantId, 'webhook', 'new')).toBeUndefined();
  });
});

describe('event delivery', () => {
  it('delivers record.sealed with the spec headers, signed over the exact raw body', async () => {
    const secret = (await put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] } })).body.signing_secret;
    const sealed = await record();
    expect(sealed.status).toBe(201);
    await drain();

    expect(rx.received).toHaveLength(1);
    const req = rx.received[0]!;
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['x-service-event']).toBe('record.sealed');
    expect(req.headers['x-service-id']).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(req.headers['x-service-timestamp']).toBe(String(Math.floor(ctx.clock.now().getTime() / 1000)));
    expect(req.headers['x-service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(independentlyVerify(req, secret)).toBe(true);
    const tampered = { ...req, raw: Buffer.concat([req.raw, Buffer.from(' ')]) };
    expect(independentlyVerify(tampered, secret)).toBe(false);

    const actionKey: string = sealed.body.evidence_packet.action_key;
    expect(req.json).toEqual({
      event: 'record.sealed',
      tenant: tenantId,
      created_at: (await ctx.store.evidence.findRecord(tenantId, actionKey))!.recordedAt,
      action_key: actionKey,
      decision: 'recorded',
      attestation_root: sealed.body.evidence_packet.seal.attestation_hash,
      stamp_id: `${tenantId}/0`,
      href: sealed.body.evidence_packet.href,
    });
    // The shared receiver-side verifier agrees.
    const now = Math.floor(ctx.clock.now().getTime() / 1000);
    expect(verifyWebhook({ headers: req.headers as Record<string, string>, rawBody: new Uint8Array(req.raw), secrets: [secret], now })).toMatchObject({
      ok: true,
      scheme: 'service',
      id: req.headers['x-service-id'],
      event: 'record.sealed',
    });

    const list = await deliveries('ops');
    expect(list.status).toBe(200);
    expect(list.body.deliveries).toHaveLength(1);
    expect(list.body.deliveries[0]).toMatchObject({ id: req.headers['x-service-id'], status: 'delivered', attempt_count: 1, last_error: null, dead_lettered: false, payload: req.json });
  });

  it('enqueues only subscribed kinds, for enabled targets, at most once per underlying event', async () => {
    await put('audit', { enabled: true, config: { url: rx.url, events: ['verify.failed'] } });
    await put('off', { enabled: false, config: { url: rx.url, events: ['record.sealed'] } });
    await record();
    await drain();
    expect(rx.received).toHaveLength(0);
    expect((await deliveries('audit')).body.deliveries).toHaveLength(0);
    expect((await deliveries('off')).body.deliveries).toHaveLength(0);

    // The same underlying event offered twice is one delivery (Events rule 2).
    const e = { tenantId, event: 'record.sealed' as const, eventKey: 'record.sealed:x', fields: { action_key: 'x', decision: 'allow', attestation_root: 'a', stamp_id: 's', href: 'h' }, createdAt: ctx.clock.now().toISOString() };
    await put('audit', { enabled: true, config: { url: rx.url, events: ['record.sealed'] } });
    expect(await ctx.store.transaction((tx) => ctx.deps.webhooks.outbox.enqueue(e, tx))).toBe(1);
    expect(await ctx.store.transaction((tx) => ctx.deps.webhooks.outbox.enqueue(e, tx))).toBe(0);
  });

  it('retries with capped exponential backoff, dead-letters after the last attempt, and replays with the same id', async () => {
    await put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] } });
    rx.status = 500;
    await record();
    const plan = (await deliveries('ops')).body.retry_plan;
    expect(plan.max_attempts).toBe(12);
    expect(plan.delays_seconds.slice(0, 4)).toEqual([30, 60, 120, 240]);
    expect(Math.max(...plan.delays_seconds)).toBe(6 * 3600);

    let previousAt = ctx.clock.now().getTime();
    for (let attempt = 1; attempt <= 12; attempt++) {
      const tick = await ctx.deps.webhooks.worker.tick();
      expect(tick.claimed, `attempt ${attempt}`).toBe(1);
      // Nothing more is due until the backoff passes.
      expect((await ctx.deps.webhooks.worker.tick()).claimed).toBe(0);
      const d = (await deliveries('ops')).body.deliveries[0];
      expect(d.attempt_count).toBe(attempt);
      expect(d.last_error).toBe('HTTP 500');
      if (attempt < 12) {
        expect(d).toMatchObject({ status: 'failed', dead_lettered: false });
        const wait = Date.parse(d.next_attempt_at) - ctx.clock.now().getTime();
        const nominal = plan.delays_seconds[attempt - 1] * 1000;
        expect(wait).toBeGreaterThanOrEqual(nominal * 0.8);
        expect(wait).toBeLessThanOrEqual(nominal * 1.2);
        ctx.clock.set(Date.parse(d.next_attempt_at));
        expect(ctx.clock.now().getTime()).toBeGreaterThan(previousAt);
        previousAt = ctx.clock.now().getTime();
      } else {
        expect(d).toMatchObject({ status: 'failed', dead_lettered: true, next_attempt_at: null });
      }
    }
    ctx.clock.advance(7 * 24 * 3600_000);
    expect((await ctx.deps.webhooks.worker.tick()).claimed).toBe(0);
    expect(rx.received).toHaveLength(12);
    const ids = new Set(rx.received.map((r) => r.headers['x-service-id']));
    expect(ids.size).toBe(1);
    expect((await deliveries('ops', '?status=failed')).body.deliveries).toHaveLength(1);

    rx.status = 204;
    const from = new Date(ctx.clock.now().getTime() - 30 * 24 * 3600_000).toISOString();
    const replay = await ctx.request('/tenant/integrations/webhook/ops/replay', { key, json: { from, to: ctx.clock.now().toISOString(), status: 'failed' } });
    expect(replay.body).toEqual({ target: 'ops', requeued: 1 });
    await drain();
    expect(rx.received).toHaveLength(13);
    expect(rx.received[12]!.headers['x-service-id']).toBe([...ids][0]);
    expect((await deliveries('ops')).body.deliveries[0]).toMatchObject({ status: 'delivered', attempt_count: 1, dead_lettered: false });
    // The tick receipts recorded every run that claimed work.
    const ticks = await ctx.sql(
      "SELECT CAST(sum(claimed) AS INTEGER) AS claimed, CAST(sum(dead) AS INTEGER) AS dead, CAST(sum(succeeded) AS INTEGER) AS ok FROM job_ticks WHERE queue = 'webhook_deliveries'",
    );
    expect(ticks).toEqual([{ claimed: 13, dead: 1, ok: 1 }]);
  });

  it("waits as long as a rate-limited or unavailable receiver's Retry-After asks, up to the schedule's cap", async () => {
    await put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] } });
    await record();
    const nextWait = async () => {
      expect((await ctx.deps.webhooks.worker.tick()).claimed).toBe(1);
      const d = (await deliveries('ops')).body.deliveries[0];
      ctx.clock.set(Date.parse(d.next_attempt_at));
      return { wait: Date.parse(d.next_attempt_at) - Date.parse(d.last_attempt_at), error: d.last_error as string };
    };
    // 429 (RFC 6585 §4) with delay-seconds: an hour, not the schedule's 30 s.
    rx.status = 429;
    rx.headers = { 'retry-after': '3600' };
    expect(await nextWait()).toEqual({ wait: 3600_000, error: 'HTTP 429, retry after 3600 s' });
    // 503 with an HTTP-date (RFC 9110 §10.2.3), ten minutes on.
    rx.status = 503;
    rx.headers = { 'retry-after': new Date(ctx.clock.now().getTime() + 600_000).toUTCString() };
    expect(await nextWait()).toEqual({ wait: 600_000, error: 'HTTP 503, retry after 600 s' });
    // Never later than the cap (6 h), and never sooner than the schedule: a Retry-After of 1 s waits the backoff.
    rx.headers = { 'retry-after': String(30 * 24 * 3600) };
    expect((await nextWait()).wait).toBe(6 * 3600_000);
    rx.headers = { 'retry-after': '1' };
    const { wait } = await nextWait();
    expect(wait).toBeGreaterThanOrEqual(0.8 * 240_000);
    // Retry-After on other statuses, or unreadable, is not a receiver's request to wait.
    rx.status = 500;
    rx.headers = { 'retry-after': '3600' };
    expect((await nextWait()).error).toBe('HTTP 500');
    rx.status = 429;
    rx.headers = { 'retry-after': 'soon' };
    expect((await nextWait()).error).toBe('HTTP 429');
    rx.status = 204;
    rx.headers = {};
    await drain();
    expect((await deliveries('ops')).body.deliveries[0].status).toBe('delivered');
  });

  it('requeues one failed or dead-lettered delivery by id, and refuses the others', async () => {
    await put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] } });
    rx.status = 500;
    await record();
    await record();
    expect((await ctx.deps.webhooks.worker.tick()).claimed).toBe(2);
    const [second, first] = (await deliveries('ops')).body.deliveries;
    expect(first).toMatchObject({ status: 'failed', dead_lettered: false, attempt_count: 1 });
    const requeue = (target: string, id: string) => ctx.request(`/tenant/integrations/webhook/${target}/deliveries/${id}/requeue`, { method: 'POST', key });

    // A failed delivery waiting for its retry: due now, with a fresh plan.
    const now = ctx.clock.now().toISOString();
    const res = await requeue('ops', first.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: first.id, status: 'pending', dead_lettered: false, attempt_count: 0, next_attempt_at: now });
    // Pending now: nothing to requeue.
    const again = await requeue('ops', first.id);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'delivery_not_requeueable', delivery_status: 'pending' });

    // The requeued one is sent at once; the other runs out of attempts and is dead-lettered.
    rx.status = 204;
    expect((await ctx.deps.webhooks.worker.tick()).claimed).toBe(1);
    rx.status = 500;
    for (let i = 0; i < 11; i++) {
      // To the jittered moment the retry plan chose, so every attempt is due and none is early.
      ctx.clock.set((await deliveries('ops')).body.deliveries.find((d: { id: string }) => d.id === second.id).next_attempt_at);
      expect((await ctx.deps.webhooks.worker.tick()).claimed).toBe(1);
    }
    const dead = (await deliveries('ops')).body.deliveries.find((d: { id: string }) => d.id === second.id);
    expect(dead).toMatchObject({ status: 'failed', dead_lettered: true, attempt_count: 12 });
    rx.status = 204;
    const revived = await requeue('ops', second.id);
    expect(revived.status).toBe(200);
    expect(revived.body).toMatchObject({ id: second.id, status: 'pending', dead_lettered: false, attempt_count: 0 });
    await drain();
    const sent = rx.received.filter((r) => r.headers['x-service-id'] === second.id);
    expect(sent).toHaveLength(13);
    expect((await deliveries('ops')).body.deliveries.map((d: { status: string }) => d.status)).toEqual(['delivered', 'delivered']);

    // Delivered: replay a range to send it again instead.
    const delivered = await requeue('ops', second.id);
    expect(delivered.status).toBe(409);
    expect(delivered.body.delivery_status).toBe('delivered');
    expect((await requeue('ops', 'evt_01JD3Z8Q4W6K2M9N7P5R3T1V0X')).status).toBe(404);
    expect((await requeue('nope', first.id)).status).toBe(404);
    const bad = await requeue('ops', 'not-an-id');
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0]).toMatchObject({ in: 'path', path: '/delivery_id' });
  });

  it('sends both signatures during a rotation overlap, then only the new one', async () => {
    const first = (await put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] } })).body.signing_secret;
    const rotated = await put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] }, rotate_signing_secret: true });
    expect(rotated.status).toBe(200);
    const second = rotated.body.signing_secret;
    expect(second).not.toBe(first);
    expect(Date.parse(rotated.body.signing.previous_key_retires_at) - ctx.clock.now().getTime()).toBe(24 * 3600_000);

    await record();
    await drain();
    const during = rx.received[0]!;
    expect(String(during.headers['x-service-signature']).match(/v1=/g)).toHaveLength(2);
    expect(independentlyVerify(during, first)).toBe(true);
    expect(independentlyVerify(during, second)).toBe(true);

    ctx.clock.advance(24 * 3600_000 + 1000);
    await record();
    await drain();
    const after = rx.received[1]!;
    expect(String(after.headers['x-service-signature']).match(/v1=/g)).toHaveLength(1);
    expect(independentlyVerify(after, second)).toBe(true);
    expect(independentlyVerify(after, first)).toBe(false);
  });

  it('fires meter.threshold exactly once per threshold, also when one batch crosses several', async () => {
    await put('ops', { enabled: true, config: { url: rx.url, events: ['meter.threshold'], meter_thresholds: [2, 3, 5, 50] } });
    await put('quiet', { enabled: true, config: { url: rx.url, events: ['meter.threshold'] } }); // no thresholds: none sent
    expect((await ctx.request('/v1/record/batch', { key, json: [recordBody(), recordBody(), recordBody(), recordBody()] })).status).toBe(201);
    await drain();
    expect(rx.received.map((r) => r.json.threshold)).toEqual([2, 3]);
    expect(rx.received.map((r) => r.json)).toEqual([
      // Each crossing reports the total of the seal that reached it.
      expect.objectContaining({ event: 'meter.threshold', threshold: 2, meter_total: 2, usage_unit: 'actions' }),
      expect.objectContaining({ event: 'meter.threshold', threshold: 3, meter_total: 3, usage_unit: 'actions' }),
    ]);
    await record();
    await record();
    await drain();
    expect(rx.received.map((r) => r.json.threshold)).toEqual([2, 3, 5]);
    expect((await deliveries('quiet')).body.deliveries).toHaveLength(0);
  });

  it('delivers every event to a receiver that was down for an hour, once it is back', async () => {
    await put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] } });
    rx.status = 503;
    const sealedKeys: string[] = [];
    for (let minute = 0; minute < 60; minute += 5) {
      sealedKeys.push((await record()).body.evidence_packet.action_key);
      await drain();
      ctx.clock.advance(5 * 60_000);
    }
    expect(rx.received.length).toBeGreaterThan(12);
    rx.status = 200;
    for (let step = 0; step < 24 && (await deliveries('ops', '?status=delivered&limit=100')).body.deliveries.length < 12; step++) {
      ctx.clock.advance(10 * 60_000);
      await drain();
    }
    const delivered = (await deliveries('ops', '?status=delivered&limit=100')).body.deliveries;
    expect(delivered).toHaveLength(12);
    const okIds = new Set(rx.received.map((r) => r.json.action_key));
    expect([...okIds].sort()).toEqual([...sealedKeys].sort());
    expect((await ctx.request('/tenant/integrations/readiness', { key })).body.integrations[0].readiness).toMatchObject({ state: 'ready', failing: null });
  });

  it('disables a target after sustained failure, says so, and resumes when saved enabled', async () => {
    await put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] } });
    rx.status = 500;
    for (let hour = 0; hour <= 74; hour += 2) {
      await record();
      await drain();
      ctx.clock.advance(2 * 3600_000);
    }
    const list = (await deliveries('ops')).body;
    expect(list.endpoint).toMatchObject({ state: 'auto_disabled', disabled_reason: expect.stringContaining('consecutive failed attempts') });
    const ready = (await ctx.request('/tenant/integrations/readiness', { key })).body.integrations[0];
    expect(ready.readiness.state).toBe('auto_disabled');
    const seen = rx.received.length;
    ctx.clock.advance(3600_000);
    await drain();
    expect(rx.received.length).toBe(seen); // nothing is sent while disabled

    rx.status = 200;
    await put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] } });
    ctx.clock.advance(8 * 3600_000); // past the longest retry wait: the 6 h cap plus 20% jitter
    await drain();
    expect((await deliveries('ops')).body.endpoint.state).toBe('enabled');
    expect((await deliveries('ops', '?status=pending')).body.deliveries).toHaveLength(0);
  });

  it('signs in Standard Webhooks mode when the target asks for it', async () => {
    const res = await put('std', { enabled: true, config: { url: rx.url, events: ['record.sealed'], signature_scheme: 'standard-webhooks' } });
    const stdSecret: string = res.body.standard_webhooks_secret;
    expect(stdSecret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    await record();
    await drain();
    const req = rx.received[0]!;
    expect(req.headers['x-service-signature']).toBeUndefined();
    // Independent check per the Standard: key = base64 body of the secret, content id.ts.body.
    const keyBytes = Buffer.from(stdSecret.slice('whsec_'.length), 'base64');
    const content = Buffer.concat([Buffer.from(`${String(req.headers['webhook-id'])}.${String(req.headers['webhook-timestamp'])}.`), req.raw]);
    expect(req.headers['webhook-signature']).toBe(`v1,${createHmac('sha256', keyBytes).update(content).digest('base64')}`);
    const now = Number(req.headers['webhook-timestamp']);
    expect(verifyWebhook({ headers: req.headers as Record<string, string>, rawBody: new Uint8Array(req.raw), secrets: [stdSecret], now })).toMatchObject({ ok: true, scheme: 'standard-webhooks' });
  });
});

describe('secret references', () => {
  it('signs with the resolved value of a granted reference, reports an unresolvable one, and refuses a scheme without a provider', async () => {
    // Grants are operator configuration keyed by tenant id: sign up, then reopen the same
    // data directory with the grant in the environment.
    const env = { SVC_WEBHOOK_ALLOW_LOOPBACK: '1' };
    const base = await createTestContext({ env });
    const tenant = await base.signup();
    const dataDir = base.dataDir;
    await base.deps.lifecycle.stop();
    base.store.close();
    const grants = JSON.stringify({ [tenant.tenantId]: ['env://WEBHOOK_TEST_KEY', 'env://WEBHOOK_TEST_UNSET'] });
    const granted = await createTestContext({ dataDir, env: { ...env, SVC_SECRET_GRANTS: grants } });
    process.env.WEBHOOK_TEST_KEY = 'resolved-secret-value';
    try {
      const k = tenant.apiKey;
      const res = await granted.request('/tenant/integrations/webhook/ref', { method: 'PUT', key: k, json: { enabled: true, config: { url: rx.url, events: ['record.sealed'] }, secret_ref: 'env://WEBHOOK_TEST_KEY' } });
      expect(res.status).toBe(201);
      expect(res.body.signing_secret).toBeUndefined();
      expect(res.body.readiness.state).toBe('ready');
      await granted.request('/v1/record', { json: recordBody(), key: k });
      await granted.deps.webhooks.worker.tick();
      const req = rx.received[0]!;
      const t = String(req.headers['x-service-timestamp']);
      const mac = createHmac('sha256', 'resolved-secret-value').update(Buffer.concat([Buffer.from(`${t}.${String(req.headers['x-service-id'])}.`), req.raw])).digest('hex');
      expect(req.headers['x-service-signature']).toBe(`t=${t},v1=${mac}`);

      const unset = await granted.request('/tenant/integrations/webhook/unset', { method: 'PUT', key: k, json: { enabled: true, config: { url: rx.url, events: [] }, secret_ref: 'env://WEBHOOK_TEST_UNSET' } });
      expect(unset.body.readiness).toMatchObject({ state: 'waiting_on_secret', secret: { provider: 'env', resolvable: false } });
      expect(JSON.stringify(unset.body)).not.toContain('resolved-secret-value');

      // A scheme this service cannot resolve is refused when configured, never stored to wait forever.
      for (const ref of ['gcp-sm://projects/p/secrets/hook', 'azure-kv://vault/hook', 'aws-sm://prod/hook', 'vault://secret/hook#key']) {
        const cloud = await granted.request('/tenant/integrations/webhook/cloud', { method: 'PUT', key: k, json: { enabled: true, config: { url: rx.url, events: [] }, secret_ref: ref } });
        expect(cloud.status, ref).toBe(422);
        expect(cloud.body.errors).toEqual([expect.objectContaining({ in: 'body', path: '/secret_ref', code: 'secret_provider_unavailable' })]);
        expect(cloud.text).not.toContain(ref);
      }
      const stored = (await granted.request('/tenant/integrations/readiness', { key: k })).body.integrations.map((i: { target: string }) => i.target);
      expect(stored).not.toContain('cloud');
    } finally {
      delete process.env.WEBHOOK_TEST_KEY;
      await granted.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('GET /tenant/integrations/webhook/{target}/deliveries', () => {
  it('lists newest first with status filter, limit and offset, and rejects unknown parameters', async () => {
    await put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] } });
    for (let i = 0; i < 5; i++) {
      await record();
      ctx.clock.advance(1000);
    }
    rx.status = 500;
    await drain();
    const all = (await deliveries('ops')).body.deliveries;
    expect(all).toHaveLength(5);
    const created = all.map((d: { created_at: string }) => d.created_at);
    expect(created).toEqual([...created].sort().reverse());
    expect((await deliveries('ops', '?limit=2&offset=1')).body.deliveries.map((d: { id: string }) => d.id)).toEqual(all.slice(1, 3).map((d: { id: string }) => d.id));
    expect((await deliveries('ops', '?status=failed')).body.deliveries).toHaveLength(5);
    expect((await deliveries('ops', '?status=delivered')).body.deliveries).toHaveLength(0);
    for (const q of ['?status=dead', '?limit=0', '?limit=101', '?offset=-1', '?page=2']) expect((await deliveries('ops', q)).status, q).toBe(422);
    expect((await deliveries('missing')).status).toBe(404);
    const other = await ctx.signup();
    expect((await ctx.request('/tenant/integrations/webhook/ops/deliveries', { key: other.apiKey })).status).toBe(404);
  });
});
