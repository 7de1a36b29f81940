/**
 * Operations: /healthz, /readyz, /metrics, the access log and request ids, the structured
 * logger's allowlist, and strict query parameters on every route of the description.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJsonLogger, errorFields, sanitiseFields, scrubMessage } from '../../companion/core/log.ts';
import { failed } from '../../companion/ops/readiness.ts';
import { createTestContext, freshTenantContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { gateBody } from './pack-fixtures.ts';
import { signIn } from './account-helpers.ts';

let ctx: TestContext;
let key: string;
beforeEach(async () => ({ ctx, key } = await freshTenantContext()));
afterEach(() => ctx.close());

/** The value of one series in a Prometheus text exposition, or 0 when absent. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe('GET /healthz and GET /readyz', () => {
  it('answers liveness, and readiness with every check named', async () => {
    expect((await ctx.request('/healthz')).body).toEqual({ status: 'ok' });
    const ready = await ctx.request('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({
      status: 'ready',
      checks: { database_writable: { ok: true }, migrations_current: { ok: true }, signer_usable: { ok: true }, workers_alive: { ok: true } },
    });
  });

  it('answers 503 problem+json naming the database when it no longer accepts writes', async () => {
    // A read-only connection (SQLite's own query_only switch): the same refusal a read-only file gives.
    ctx.store.db.pragma('query_only = ON');
    const res = await ctx.request('/readyz');
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.body).toMatchObject({ code: 'not_ready', detail: 'failing readiness checks: database_writable' });
    expect(res.body.checks.database_writable).toEqual({ ok: false, detail: 'the database refused a write (SQLITE_READONLY)' });
    expect(res.body.checks.signer_usable).toEqual({ ok: true });
    ctx.store.db.pragma('query_only = OFF');
    expect((await ctx.request('/readyz')).status).toBe(200);
  });

  it('runs checks other capabilities register, e.g. a background worker, and reports a thrown check without its message', async () => {
    ctx.deps.readiness.register('outbox_worker', () => failed('no heartbeat for 30 s'));
    ctx.deps.readiness.register('epoch_worker', () => {
      throw new Error('secret internal detail');
    });
    const res = await ctx.request('/readyz');
    expect(res.status).toBe(503);
    expect(res.body.detail).toBe('failing readiness checks: outbox_worker, epoch_worker');
    expect(res.body.checks.outbox_worker).toEqual({ ok: false, detail: 'no heartbeat for 30 s' });
    expect(res.body.checks.epoch_worker).toEqual({ ok: false, detail: 'check threw Error' });
    expect(() => ctx.deps.readiness.register('outbox_worker', () => failed('x'))).toThrow(/already registered/);
  });
});

describe('GET /metrics', () => {
  it('counts requests by route pattern and status, seals by kind, metered actions and group commits', async () => {
    const before = (await ctx.request('/metrics')).text;
    await ctx.request('/v1/packs');
    await ctx.request('/v1/packs?nope=1');
    const gated = await ctx.request('/v1/gate', { json: gateBody('law'), key });
    expect(gated.status).toBe(201);
    await ctx.request(`/v1/records/${gated.body.action_key}`, { key });

    const res = await ctx.request('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const after = res.text;
    const delta = (series: string) => sample(after, series) - sample(before, series);
    expect(delta('svc_http_requests_total{method="GET",route="/v1/packs",status="200"}')).toBe(1);
    expect(delta('svc_http_requests_total{method="GET",route="/v1/packs",status="422"}')).toBe(1);
    expect(delta('svc_http_requests_total{method="POST",route="/v1/gate",status="201"}')).toBe(1);
    // The pattern, never the concrete path with its action key.
    expect(delta('svc_http_requests_total{method="GET",route="/v1/records/{action_key}",status="200"}')).toBe(1);
    expect(after).not.toContain(gated.body.action_key);
    expect(delta('svc_http_request_duration_seconds_count{method="POST",route="/v1/gate"}')).toBe(1);
    expect(delta('svc_seals_total{kind="gate"}')).toBe(1);
    expect(delta('svc_actions_metered_total{tenant_kind="sandbox"}')).toBe(1);
    expect(sample(after, 'svc_actions_metered_total{tenant_kind="production"}')).toBe(0);
    expect(delta('svc_seal_batch_size_count')).toBeGreaterThanOrEqual(1);
    expect(delta('svc_seal_commit_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(after).toMatch(/^svc_seal_queue_depth 0$/m);
    expect(sample(after, 'svc_sqlite_wal_bytes')).toBeGreaterThan(0);
  });

  it('requires the operator token when SVC_METRICS_TOKEN is set', async () => {
    const token = 'metrics-token-0123456789';
    const guarded = await createTestContext({ env: { SVC_METRICS_TOKEN: token } });
    try {
      const missing = await guarded.request('/metrics');
      expect(missing.status).toBe(401);
      expect(missing.body.code).toBe('unauthorized');
      expect((await guarded.request('/metrics', { headers: { authorization: 'Bearer metrics-token-wrong-000000' } })).status).toBe(401);
      // An API key is not the metrics token.
      const signup = await guarded.signup();
      expect((await guarded.request('/metrics', { key: signup.apiKey })).status).toBe(401);
      expect((await guarded.request('/metrics', { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    } finally {
      await guarded.close();
    }
  });
});

describe('access log and request ids', () => {
  it('writes one line per request: method, route pattern, status, duration, request id, tenant id; no query values or bodies', async () => {
    ctx.log.entries.length = 0;
    const res = await ctx.request('/tenant/usage?secretvalue=hunter2', { key });
    await ctx.request('/signup/checkout', { json: { email: 'logged-never@example.com' } });
    const lines = ctx.log.entries.filter((e) => e.message === 'request');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({
      level: 'info',
      fields: { method: 'GET', route: '/tenant/usage', status: 422, request_id: res.body.request_id, tenant_id: expect.stringMatching(/^ten_/) },
    });
    expect(lines[0]!.fields.duration_ms).toEqual(expect.any(Number));
    expect(lines[1]!.fields).toMatchObject({ method: 'POST', route: '/signup/checkout', status: 201 });
    const logged = JSON.stringify(ctx.log.entries);
    for (const secret of ['hunter2', 'secretvalue', 'logged-never', key]) expect(logged).not.toContain(secret);
  });

  it('honours a well-formed incoming X-Request-Id, echoes it in the header and problem body, and replaces a malformed one', async () => {
    const mine = await ctx.request('/nowhere', { headers: { 'x-request-id': 'lb-7f3a9c2e.0001' } });
    expect(mine.headers.get('x-request-id')).toBe('lb-7f3a9c2e.0001');
    expect(mine.body.request_id).toBe('lb-7f3a9c2e.0001');
    const bad = await ctx.request('/nowhere', { headers: { 'x-request-id': 'evil\u00e9 id {"x":1}' } });
    expect(bad.headers.get('x-request-id')).toMatch(/^req_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(bad.body.request_id).toBe(bad.headers.get('x-request-id'));
    expect(ctx.log.entries.at(-1)!.fields).toMatchObject({ route: 'unmatched', status: 404 });
  });
});

describe('the structured logger', () => {
  it('keeps allowlisted fields only, redacts values of the wrong shape, and scrubs quoted spans from error messages', () => {
    const fields = sanitiseFields({
      request_id: 'req_1',
      tenant_id: 'ten_1 OR 1=1',
      route: '/v1/records/law:x:1?q=secret',
      ...({ email: 'a@b.example', body: '{"x":1}' } as object),
      ...errorFields(new SyntaxError('Unexpected token \'s\', "secret-json" is not valid JSON')),
    });
    expect(fields).toMatchObject({ request_id: 'req_1', tenant_id: '[redacted]', route: '[redacted]', dropped_fields: ['email', 'body'] });
    expect(JSON.stringify(fields)).not.toContain('secret');
    expect((fields.error as { name: string }).name).toBe('SyntaxError');
    expect(scrubMessage('The database connection is not open')).toBe('The database connection is not open');
  });

  it('writes JSON lines at or above its level only', () => {
    const lines: string[] = [];
    const log = createJsonLogger({ level: 'warn', write: (l) => lines.push(l), now: () => new Date(0) });
    log.info('request', { status: 200 });
    log.warn('wal checkpoint failed', { error: 'disk I/O error' });
    expect(lines).toEqual(['{"time":"1970-01-01T00:00:00.000Z","level":"warn","message":"wal checkpoint failed","error":"disk I/O error"}\n']);
  });
});

describe('unknown query parameters', () => {
  it('are refused with 422 naming them on every operation of the description', async () => {
    const doc = (await ctx.request('/openapi.json')).body;
    const operations: [string, string][] = [];
    for (const [template, item] of Object.entries<Record<string, unknown>>(doc.paths)) {
      for (const method of Object.keys(item)) operations.push([method.toUpperCase(), template]);
    }
    expect(operations.length).toBeGreaterThanOrEqual(29);
    // Account-session operations get the session cookie and CSRF token instead of the key.
    const session = await signIn(ctx, key);
    const usesSession = (method: string, template: string) =>
      (doc.paths[template][method.toLowerCase()].security ?? []).some((r: Record<string, unknown>) => 'ServiceAccountSession' in r);
    for (const [method, template] of operations) {
      const path = template.replace('{vertical}', 'law').replace('{action_key}', 'law:proposed-action:01JC0000000000000000000000');
      const credential = usesSession(method, template) ? { headers: { cookie: session.cookie, 'x-csrf-token': session.csrf } } : { key };
      const res = await ctx.request(`${path}?unknown_x=1&also_unknown=`, { method, ...credential, ...(method === 'GET' ? {} : { json: {} }) });
      expect({ op: `${method} ${template}`, status: res.status, code: res.body.code }).toEqual({ op: `${method} ${template}`, status: 422, code: 'validation_failed' });
      const named = res.body.errors.filter((e: { code?: string }) => e.code === 'unrecognized_key').map((e: { in: string; path: string }) => `${e.in}:${e.path}`);
      expect(named, `${method} ${template}`).toEqual(['query:/unknown_x', 'query:/also_unknown']);
    }
  });
});
