/**
 * The HTTP layer's hardening, each over every operation of the service's own OpenAPI
 * description where it applies:
 * - the session cookie is Secure unless the public origin is plain-http loopback (RFC 6265bis
 *   §4.1.2.5), or a trusted proxy says the client came over https;
 * - every authenticated answer carries Cache-Control: no-store (RFC 9111 §5.2.2.5);
 * - no answer carries an absolute URL built from the request's Host or X-Forwarded-Host;
 * - no error's detail or instance repeats what the caller sent (RFC 9457 §3.1);
 * - signup is rate limited per client address and globally, 429 with Retry-After (RFC 6585 §4).
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../companion/core/server.ts';
import type { RunningServer } from '../../companion/core/server.ts';
import { signIn } from './account-helpers.ts';
import { createTestContext, freshTenantContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';

interface Operation {
  method: string;
  path: string;
  url: string;
  secured: boolean;
  json: boolean;
}

/** Every operation of the description, its path parameters filled with `fill(name)`. */
function operations(doc: any, fill: (name: string) => string = () => 'x'): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const op = item[method];
      if (!op) continue;
      const url = path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(fill(name)));
      const secured = (op.security ?? []).length > 0;
      out.push({ method: method.toUpperCase(), path, url, secured, json: op.requestBody?.content?.['application/json'] !== undefined });
    }
  }
  return out;
}

/** A GET over real HTTP on loopback with the headers given, Host included (fetch may not set Host). */
function rawRequest(server: RunningServer, path: string, headers: Record<string, string>, method = 'GET'): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: server.port, path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function serve(ctx: TestContext): Promise<RunningServer> {
  return startServer(ctx.app, { host: '127.0.0.1', port: 0, graceMs: 1000, log: ctx.log });
}

describe('the session cookie follows the public origin', () => {
  it('is Secure with an https SVC_PUBLIC_BASE_URL while listening on loopback, and the plans say TLS is required', async () => {
    const { ctx, key } = await freshTenantContext({ env: { HOST: '127.0.0.1', SVC_PUBLIC_BASE_URL: 'https://gate.example.com' } });
    try {
      const s = await signIn(ctx, key);
      expect(s.res.headers.get('set-cookie')).toMatch(/; Secure(;|$)/);
      const out = await ctx.request('/account/logout', { method: 'POST', headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
      expect(out.headers.get('set-cookie')).toMatch(/; Secure(;|$)/);
      const domain = await ctx.request('/deployment/domain-plan');
      expect(domain.body).toMatchObject({ base_url: 'https://gate.example.com', scheme: 'https', host: 'gate.example.com', tls_required: true, session_cookie: { secure: true } });
      const proxy = await ctx.request('/deployment/proxy-plan');
      expect(proxy.body).toMatchObject({ upstream: 'https://gate.example.com', tls_required: true, session_cookie_secure: true });
    } finally {
      await ctx.close();
    }
  });

  it('is not Secure only for a plain-http loopback origin, which the plans report', async () => {
    const { ctx, key } = await freshTenantContext({ env: { HOST: '127.0.0.1' } });
    try {
      const s = await signIn(ctx, key);
      expect(s.res.headers.get('set-cookie')).not.toContain('Secure');
      expect((await ctx.request('/deployment/domain-plan')).body).toMatchObject({ tls_required: false, session_cookie: { secure: false } });
      expect((await ctx.request('/deployment/proxy-plan')).body).toMatchObject({ tls_required: false, session_cookie_secure: false });
    } finally {
      await ctx.close();
    }
  });

  it('is Secure when a trusted proxy forwards X-Forwarded-Proto: https, and the header is ignored from any other peer', async () => {
    const trusted = await freshTenantContext({ env: { HOST: '127.0.0.1', SVC_TRUST_PROXY: '127.0.0.1' } });
    const untrusted = await freshTenantContext({ env: { HOST: '127.0.0.1', SVC_TRUST_PROXY: '192.0.2.1' } });
    const a = await serve(trusted.ctx);
    const b = await serve(untrusted.ctx);
    try {
      const viaProxy = await rawRequest(a, '/account/session', { 'x-service-key': trusted.key, 'x-forwarded-proto': 'https' }, 'POST');
      expect(viaProxy.status).toBe(201);
      expect(String(viaProxy.headers['set-cookie'])).toMatch(/; Secure(;|$)/);
      const plain = await rawRequest(a, '/account/session', { 'x-service-key': trusted.key }, 'POST');
      expect(String(plain.headers['set-cookie'])).not.toContain('Secure');
      const spoofed = await rawRequest(b, '/account/session', { 'x-service-key': untrusted.key, 'x-forwarded-proto': 'https' }, 'POST');
      expect(spoofed.status).toBe(201);
      expect(String(spoofed.headers['set-cookie'])).not.toContain('Secure');
    } finally {
      await a.close();
      await b.close();
      await trusted.ctx.close();
      await untrusted.ctx.close();
    }
  });

  it('refuses an SVC_TRUST_PROXY that is not a list of IP addresses', async () => {
    await expect(createTestContext({ env: { SVC_TRUST_PROXY: 'proxy.example.com' } })).rejects.toThrow(/SVC_TRUST_PROXY/);
  });
});

describe('over every operation of the OpenAPI description', () => {
  let ctx: TestContext;
  let doc: any;
  let server: RunningServer;

  beforeAll(async () => {
    ctx = await createTestContext({ env: { HOST: '127.0.0.1' } });
    doc = (await ctx.request('/openapi.json')).body;
    server = await serve(ctx);
  });
  afterAll(async () => {
    await server.close();
    await ctx.close();
  });

  it('answers every operation with a security requirement with Cache-Control: no-store, with or without a credential', async () => {
    const secured = operations(doc).filter((o) => o.secured);
    expect(secured.length).toBeGreaterThan(40);
    const missing: string[] = [];
    for (const op of secured) {
      // A fresh tenant per operation: a write (a revoke, a rotation) cannot spoil the next one's key.
      const { apiKey } = await ctx.signup();
      const session = await signIn(ctx, apiKey);
      const body = op.json ? '{}' : undefined;
      const type: Record<string, string> = op.json ? { 'content-type': 'application/json' } : {};
      const tries: [string, Record<string, string>][] = [
        ['none', { ...type }],
        ['key', { ...type, 'x-service-key': apiKey }],
        ['session', { ...type, cookie: session.cookie, 'x-csrf-token': session.csrf }],
      ];
      for (const [label, headers] of tries) {
        const res = await ctx.app.request(op.url, { method: op.method, headers, ...(body !== undefined ? { body } : {}) });
        await res.arrayBuffer();
        if (!/(^|,)\s*no-store\s*(,|$)/.test(res.headers.get('cache-control') ?? '')) missing.push(`${op.method} ${op.path} (${label}: ${res.status})`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('puts no Host or X-Forwarded-Host into any answer of any GET operation', async () => {
    const { apiKey } = await ctx.signup();
    const gets = operations(doc).filter((o) => o.method === 'GET');
    const leaked: string[] = [];
    for (const op of gets) {
      const res = await rawRequest(server, op.url, { host: 'evil.example:1', 'x-forwarded-host': 'evil.example:2', 'x-forwarded-proto': 'https', 'x-service-key': apiKey });
      if (res.text.includes('evil.example') || JSON.stringify(res.headers).includes('evil.example')) leaked.push(`${op.method} ${op.path} (${res.status})`);
    }
    expect(leaked).toEqual([]);
  });

  it('repeats no caller input in any error: a canary in path parameters, the query and the body', async () => {
    const { apiKey } = await ctx.signup();
    const CANARY = 'canary7<script>alert(1)</script>';
    const enc = encodeURIComponent(CANARY);
    const echoed: string[] = [];
    const check = async (label: string, url: string, init: RequestInit) => {
      const res = await ctx.app.request(url, init);
      const text = await res.text();
      if (res.status < 400) return;
      if (text.includes('canary7') || text.includes(enc)) echoed.push(`${label} ${url.slice(0, 80)} (${res.status}): ${text.slice(0, 200)}`);
    };
    for (const op of operations(doc, () => CANARY)) {
      const headers = { 'x-service-key': apiKey, 'content-type': 'application/json' };
      const body = op.json ? JSON.stringify({ email: CANARY, name: CANARY, id: CANARY, url: CANARY, kind: CANARY }) : undefined;
      await check(`${op.method} path`, op.url, { method: op.method, headers, ...(body ? { body } : {}) });
      await check(`${op.method} query`, `${op.url}?limit=${enc}&cursor=${enc}&policy_pack=${enc}`, { method: op.method, headers, ...(body ? { body } : {}) });
      if (op.json) await check(`${op.method} body`, op.url, { method: op.method, headers, body: `{"a": "${CANARY}", ` });
    }
    // Paths no route serves, and the console's file route.
    await check('GET unmatched', `/no/such/${enc}`, {});
    await check('DELETE wrong method', `/console/${enc}`, { method: 'DELETE' });
    await check('GET console file', `/console/${enc}.html`, {});
    expect(echoed).toEqual([]);
  });
});

describe('signup rate limit', () => {
  it('answers 429 with Retry-After past SVC_SIGNUP_RATE_PER_MINUTE from one address, and 0 turns it off', async () => {
    const ctx = await createTestContext({ env: { SVC_SIGNUP_RATE_PER_MINUTE: '3' } });
    try {
      const statuses: number[] = [];
      let last: Response | undefined;
      for (let i = 0; i < 5; i++) {
        last = await ctx.app.request('/signup/checkout', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `rate${i}@example.com` }) });
        statuses.push(last.status);
      }
      expect(statuses).toEqual([201, 201, 201, 429, 429]);
      expect(last!.headers.get('content-type')).toBe('application/problem+json');
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await last!.json()).code).toBe('rate_limited');
      // A minute later the bucket has refilled.
      ctx.clock.advance(60_000);
      const again = await ctx.app.request('/signup/checkout', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'rate-later@example.com' }) });
      expect(again.status).toBe(201);
    } finally {
      await ctx.close();
    }
    const off = await createTestContext({ env: { SVC_SIGNUP_RATE_PER_MINUTE: '0' } });
    try {
      for (let i = 0; i < 40; i++) {
        const res = await off.app.request('/signup/checkout', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `free${i}@example.com` }) });
        expect(res.status).toBe(201);
      }
    } finally {
      await off.close();
    }
  });

  it('limits each client address over real HTTP, and all addresses together at ten times the rate', async () => {
    const ctx = await createTestContext({ env: { SVC_SIGNUP_RATE_PER_MINUTE: '2', SVC_TRUST_PROXY: '127.0.0.1' } });
    const server = await serve(ctx);
    try {
      const signup = (i: number, forwardedFor?: string) =>
        new Promise<number>((resolve, reject) => {
          const body = JSON.stringify({ email: `addr${i}@example.com` });
          const req = http.request(
            { host: '127.0.0.1', port: server.port, path: '/signup/checkout', method: 'POST', headers: { 'content-type': 'application/json', ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) } },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode!));
            },
          );
          req.on('error', reject);
          req.end(body);
        });
      // Each forwarded client has its own bucket of 2; the global bucket holds 20.
      const statuses: number[] = [];
      let i = 0;
      for (let client = 1; client <= 11; client++) for (let k = 0; k < 3; k++) statuses.push(await signup(++i, `198.51.100.${client}`));
      const perClient = Array.from({ length: 11 }, (_, c) => statuses.slice(c * 3, c * 3 + 3));
      for (const s of perClient.slice(0, 10)) expect(s).toEqual([201, 201, 429]);
      // The eleventh client is within its own rate, but the service-wide bucket is empty.
      expect(perClient[10]).toEqual([429, 429, 429]);
    } finally {
      await server.close();
      await ctx.close();
    }
  });
});
