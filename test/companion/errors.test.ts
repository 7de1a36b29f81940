/** Every error leaves as RFC 9457 problem+json with a stable code (DESIGN.md §6). */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestContext } from './helpers.ts';
import type { TestContext, TestResponse } from './helpers.ts';

let ctx: TestContext;
beforeEach(async () => {
  ctx = await createTestContext({ env: { SVC_MAX_BODY_BYTES: '2048' } });
});
afterEach(async () => {
  await ctx.close();
});

function expectProblem(res: TestResponse, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/problem+json');
  expect(res.body).toMatchObject({ type: 'about:blank', status, code });
  expect(typeof res.body.title).toBe('string');
  expect(res.body.request_id).toBe(res.headers.get('x-request-id'));
}

describe('problem+json', () => {
  it('answers an unknown path with 404 not_found', async () => {
    const res = await ctx.request('/no/such/thing');
    expectProblem(res, 404, 'not_found');
    // The path is the caller's text, not a route pattern: neither instance nor detail repeats it.
    expect(res.body.instance).toBeUndefined();
    expect(res.text).not.toContain('/no/such/thing');
  });

  it("names a matched route's pattern as instance, never the path the caller sent", async () => {
    const { apiKey } = await ctx.signup();
    const res = await ctx.request('/v1/records/law:proposed-action:01JD3Q8Z5V7N4M2K6H8G0F1E2D', { key: apiKey });
    expectProblem(res, 404, 'not_found');
    expect(res.body.instance).toBe('/v1/records/{action_key}');
    expect(res.text).not.toContain('01JD3Q8Z5V7N4M2K6H8G0F1E2D');
  });

  it('answers a known path with the wrong method with 405 and an Allow header', async () => {
    const res = await ctx.request('/signup/checkout', { method: 'GET' });
    expectProblem(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toBe('POST');

    const del = await ctx.request('/.well-known/service-keys.json', { method: 'DELETE' });
    expectProblem(del, 405, 'method_not_allowed');
    expect(del.headers.get('allow')).toBe('GET, HEAD');
  });

  it('answers a body over the limit with 413 payload_too_large, declared length or streamed', async () => {
    const big = JSON.stringify({ email: `${'a'.repeat(4000)}@example.com` });
    const declared = await ctx.request('/signup/checkout', { raw: big, headers: { 'content-type': 'application/json' } });
    expectProblem(declared, 413, 'payload_too_large');

    const chunks = [new TextEncoder().encode(big.slice(0, 1500)), new TextEncoder().encode(big.slice(1500))];
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    const streamed = await ctx.app.request('/signup/checkout', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(streamed.headers.get('content-type')).toBe('application/problem+json');
    expect((await streamed.json()).code).toBe('payload_too_large');
  });

  it('answers malformed JSON with 422 malformed_json', async () => {
    const res = await ctx.request('/signup/checkout', { raw: '{"email": ', headers: { 'content-type': 'application/json' } });
    expectProblem(res, 422, 'malformed_json');
  });

  it('lists every failing field on validation errors, unknown fields included', async () => {
    const res = await ctx.request('/signup/checkout', { json: { email: 42, plan: 'gold', extra: true } });
    expectProblem(res, 422, 'validation_failed');
    const paths = res.body.errors.map((e: { in: string; path: string }) => `${e.in}:${e.path}`).sort();
    expect(paths).toEqual(['body:/email', 'body:/extra', 'body:/plan']);
    for (const e of res.body.errors) expect(typeof e.message).toBe('string');
  });

  it('reports a missing body as the missing fields', async () => {
    const res = await ctx.request('/signup/checkout', { method: 'POST' });
    expectProblem(res, 422, 'validation_failed');
    expect(res.body.errors).toEqual([expect.objectContaining({ in: 'body', path: '/email', code: 'invalid_type' })]);
  });

  it('rejects unknown query parameters, never ignores them', async () => {
    const { apiKey } = await ctx.signup();
    const res = await ctx.request('/tenant/api-keys?limit=5&cursor=x', { key: apiKey });
    expectProblem(res, 422, 'validation_failed');
    expect(res.body.errors.map((e: { in: string; path: string }) => `${e.in}:${e.path}`).sort()).toEqual(['query:/cursor', 'query:/limit']);
  });

  it('answers a body of the wrong media type with 415 problem+json', async () => {
    const res = await ctx.request('/signup/checkout', { raw: 'email=a@b.c', headers: { 'content-type': 'text/plain' } });
    expectProblem(res, 415, 'unsupported_media_type');
  });

  it('turns an unexpected failure into 500 internal_error without leaking it, and logs it', async () => {
    // The store now throws: SQLite's "The database connection is not open", the PostgreSQL
    // driver's CONNECTION_ENDED.
    await ctx.store.close();
    const res = await ctx.request('/signup/checkout', { json: { email: 'crash@example.com' } });
    expectProblem(res, 500, 'internal_error');
    expect(res.text).not.toMatch(/database|connection|stack|at .*\.ts/i);
    const logged = ctx.log.entries.find((e) => e.level === 'error');
    expect(logged?.fields.request_id).toBe(res.body.request_id);
    expect(JSON.stringify(logged?.fields)).toMatch(ctx.engine === 'sqlite' ? /database connection is not open/ : /CONNECTION_ENDED/);
    expect(JSON.stringify(logged?.fields)).not.toContain('crash@example.com');
  });
});
