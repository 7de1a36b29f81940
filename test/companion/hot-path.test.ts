/**
 * The gate's hot path (companion/http/hot-path.ts) against the app it stands in front of: one
 * service, two listeners on loopback (the app alone, and the hot path in front of it), the same
 * raw requests sent to each, and the answers compared byte for byte (the Date line aside). Then
 * what the app's middleware does for these routes, checked on the hot path itself.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../companion/core/server.ts';
import type { RunningServer } from '../../companion/core/server.ts';
import { hotPathFront } from '../../companion/http/hot-path.ts';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { gateBody, recordBody } from './pack-fixtures.ts';

interface Raw {
  head: string;
  status: number;
  headers: Map<string, string>;
  body: string;
}

/** Sends `request` as written on a fresh connection, reads to the server's close. */
function send(port: number, request: Buffer): Promise<Raw> {
  return new Promise((resolve, reject) => {
    // Not half-closed: node's server aborts a request whose client ends its side (httpAllowHalfOpen).
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const head = text.slice(0, split).replace(/^date: .*$/im, 'date: (any)');
      const lines = head.split('\r\n');
      const headers = new Map(lines.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ head, status: Number(lines[0]!.split(' ')[1]), headers, body: text.slice(split + 4) });
    });
  });
}

interface Req {
  method?: string;
  path: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** Headers written exactly, after the others (repeats, odd framing). */
  rawHeaders?: string[];
}

let requestCounter = 0;

/** The raw request; an X-Request-Id of its own (one length for all, as the answers' lengths count it). */
function build(r: Req, key: string | undefined): Buffer {
  const body = typeof r.body === 'string' ? Buffer.from(r.body, 'utf8') : (r.body ?? Buffer.alloc(0));
  const headers: Record<string, string> = {
    host: '127.0.0.1',
    connection: 'close',
    'x-request-id': `hot-path-test-${String(++requestCounter).padStart(6, '0')}`,
    ...(r.body !== undefined ? { 'content-type': 'application/json', 'content-length': String(body.length) } : {}),
    ...(key !== undefined ? { 'x-service-key': key } : {}),
    ...r.headers,
  };
  const lines = [`${r.method ?? 'POST'} ${r.path} HTTP/1.1`, ...Object.entries(headers).filter(([, v]) => v !== '').map(([k, v]) => `${k}: ${v}`), ...(r.rawHeaders ?? [])];
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]);
}

let ctx: TestContext;
let key: string;
let tenantId: string;
let plain: RunningServer;
let hot: RunningServer;

beforeAll(async () => {
  ctx = await createTestContext({ env: { SVC_MAX_BODY_BYTES: '65536' } });
  ({ apiKey: key, tenantId } = await ctx.signup());
  const options = { host: '127.0.0.1', port: 0, graceMs: 1000, log: ctx.log };
  plain = await startServer(ctx.app, options);
  hot = await startServer(ctx.app, { ...options, front: hotPathFront(ctx.deps) });
});

afterAll(async () => {
  await Promise.all([plain?.close(), hot?.close()]);
  await ctx?.close();
});

const json = (v: unknown) => JSON.stringify(v);
const long = (n: number) => 'x'.repeat(n);

/** Bodies the schemas, strict JSON or the routes refuse: the answers carry no seal, so compare whole. */
const REFUSED: Req[] = [
  // Strict JSON (core/strict-json.ts), each rule.
  { path: '/v1/gate', body: '' },
  { path: '/v1/gate', body: '{' },
  { path: '/v1/gate', body: 'null' },
  { path: '/v1/gate', body: '[]' },
  { path: '/v1/gate', body: '"law"' },
  { path: '/v1/gate', body: '{"pack":"law","pack":"law"}' },
  { path: '/v1/gate', body: '{"pack":"\\ud800"}' },
  { path: '/v1/gate', body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]) },
  { path: '/v1/gate', body: '{"a":12345678901234567890}' },
  { path: '/v1/gate', body: `${'['.repeat(40)}${']'.repeat(40)}` },
  // The gate's schema: every failing field named, caller input kept out.
  { path: '/v1/gate', body: json({}) },
  { path: '/v1/gate', body: json({ pack: 'nope' }) },
  { path: '/v1/gate', body: json({ pack: 'law' }) },
  { path: '/v1/gate', body: json(gateBody('law', { proposed_action: '   ' })) },
  { path: '/v1/gate', body: json(gateBody('law', { proposed_action: '' })) },
  { path: '/v1/gate', body: json(gateBody('law', { proposed_action: long(32_001) })) },
  { path: '/v1/gate', body: json(gateBody('law', { surprise: 'OTTER-5512 secret', [long(80)]: 1 })) },
  { path: '/v1/gate', body: json(gateBody('law', { law_context: { matter_band: 'GIRAFFE-77' } })) },
  { path: '/v1/gate', body: json(gateBody('law', { client_nonce: 'short' })) },
  { path: '/v1/gate', body: json(gateBody('law', { idempotency_key: '' })) },
  { path: '/v1/gate', body: json(gateBody('law', { source_key: 'has spaces PELICAN' })) },
  { path: '/v1/gate', body: json(gateBody('defense', { action_type: 'not-a-type' })) },
  { path: '/v1/gate', body: json(gateBody('medicine', { context: 'a string' })) },
  { path: '/law/proposed-action', body: json(gateBody('law', { pack: 'defense' })) },
  { path: '/defense/proposed-action', body: json({ proposed_action: 1 }) },
  { path: '/education/proposed-action', body: json(gateBody('education', { context: {} })) },
  { path: '/us-regulatory/proposed-action', body: json([gateBody('us-regulatory')]) },
  // The record's schema and its own 422s.
  { path: '/v1/record', body: json({}) },
  { path: '/v1/record', body: json(recordBody({ pack: 'ca-sb942' })) },
  { path: '/v1/record', body: json(recordBody({ source_payload: {} })) },
  { path: '/v1/record', body: json(recordBody({ source_payload: { content_sha256: 'MARMOT-4471 confidential launch plan' } })) },
  { path: '/v1/record', body: json(recordBody({ event_type: 'output_deleted' })) },
  { path: '/v1/record', body: json(recordBody({ occurred_at: '2025-01-01T00:10:00Z' })) },
  { path: '/v1/record', body: json(recordBody({ metadata: { unknown_key: 'BADGER' } })) },
  // The media type's other spellings the hot path owns.
  { path: '/v1/gate', body: json({ pack: 'law' }), headers: { 'content-type': 'application/json; charset=utf-8' } },
  { path: '/v1/record', body: json({}), headers: { 'content-type': 'Application/JSON;charset="UTF-8"' } },
  // The body limit, before the credential is looked at.
  { path: '/v1/gate', body: json(gateBody('law', { redacted_text: long(70_000) })) },
];

/** Requests the credential decides. */
const CREDENTIALS: { req: Req; key: string | undefined }[] = [
  { req: { path: '/v1/gate', body: json(gateBody('law')) }, key: undefined },
  { req: { path: '/v1/gate', body: json(gateBody('law')) }, key: 'svc_test_not-a-key' },
  { req: { path: '/v1/gate', body: json(gateBody('law')) }, key: `svc_test_${'A'.repeat(43)}` },
  { req: { path: '/v1/record', body: '{' }, key: `svc_live_${'B'.repeat(43)}` },
  { req: { path: '/v1/gate', body: json(gateBody('law')), headers: { authorization: 'Basic abc' } }, key: undefined },
  { req: { path: '/v1/gate', body: json(gateBody('law')), headers: { authorization: `Bearer svc_test_${'C'.repeat(43)}` } }, key: 'KEY' },
];

/** Requests the hot path must leave to the app, which answers them as ever. */
const LEFT_TO_THE_APP: Req[] = [
  { method: 'GET', path: '/v1/gate' },
  { method: 'HEAD', path: '/v1/gate' },
  { method: 'OPTIONS', path: '/v1/gate' },
  { method: 'PUT', path: '/v1/record', body: '{}' },
  { path: '/v1/gate?x=1', body: json(gateBody('law')) },
  { path: '/v1/gate/', body: json(gateBody('law')) },
  { path: '/v1/gate', body: json(gateBody('law')), headers: { 'content-type': 'text/plain' } },
  { path: '/v1/gate', body: json(gateBody('law')), headers: { 'content-type': 'application/problem+json' } },
  { path: '/v1/gate', body: json(gateBody('law')), rawHeaders: ['content-type: application/json'] },
  { path: '/v1/gate', body: json({}), headers: { 'x-request-id': '' }, rawHeaders: ['x-request-id: short', 'x-request-id: another-one'] },
  {
    path: '/v1/gate',
    headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    body: Buffer.from(`2\r\n{}\r\n0\r\n\r\n`),
  },
];

describe('the hot path answers exactly as the app', () => {
  it('refuses every body the app refuses, with the same bytes', async () => {
    for (const req of REFUSED) {
      const [a, b] = [await send(plain.port, build(req, key)), await send(hot.port, build(req, key))];
      expect(b.status, `${req.path} ${String(req.body).slice(0, 80)}`).toBeGreaterThanOrEqual(400);
      expect(b.head, `${req.path} ${String(req.body).slice(0, 80)}`).toBe(a.head.replace(/hot-path-test-\d+/, b.headers.get('x-request-id')!));
      expect(b.body.replace(/hot-path-test-\d+/, 'ID'), `${req.path} ${String(req.body).slice(0, 80)}`).toBe(a.body.replace(/hot-path-test-\d+/, 'ID'));
    }
  });

  it('refuses every credential the app refuses, with the same bytes', async () => {
    for (const { req, key: k } of CREDENTIALS) {
      const [a, b] = [await send(plain.port, build(req, k === 'KEY' ? key : k)), await send(hot.port, build(req, k === 'KEY' ? key : k))];
      expect(b.status).toBeGreaterThanOrEqual(400);
      expect(b.head.replace(/hot-path-test-\d+/, 'ID')).toBe(a.head.replace(/hot-path-test-\d+/, 'ID'));
      expect(b.body.replace(/hot-path-test-\d+/, 'ID')).toBe(a.body.replace(/hot-path-test-\d+/, 'ID'));
    }
  });

  it('leaves other methods, paths, media types, queries and framings to the app', async () => {
    for (const req of LEFT_TO_THE_APP) {
      const [a, b] = [await send(plain.port, build(req, key)), await send(hot.port, build(req, key))];
      // A seal's length depends on its record (its log position, its review route), not on the path.
      const scrub = (s: string) => s.replace(/hot-path-test-\d+|req_[0-9A-Z]{26}/g, 'ID').replace(/content-length: \d+/i, a.status === 201 ? 'content-length: N' : '$&');
      expect(b.status, `${req.method ?? 'POST'} ${req.path}`).toBe(a.status);
      expect(scrub(b.head), `${req.method ?? 'POST'} ${req.path}`).toBe(scrub(a.head));
      if (a.status >= 400) expect(scrub(b.body)).toBe(scrub(a.body));
    }
  });

  it('seals with the same answer: a first seal on either path is the other path’s replay, byte for byte', async () => {
    const bodies: [string, Record<string, unknown>][] = [
      ['/v1/gate', gateBody('law')],
      ['/v1/gate', gateBody('defense', { surface: 'browser', client_nonce: 'q3Jm0V9x2s7VbX1yZp4T8w' })],
      ['/medicine/proposed-action', gateBody('medicine', { pack: undefined })],
      ['/law/proposed-action', gateBody('law', { proposed_action: 'Email opposing counsel the privileged memo ÄÖÜ 😀' })],
      ['/v1/record', recordBody()],
      ['/v1/record', recordBody({ metadata: undefined })],
    ];
    for (const [n, [path, body]] of bodies.entries()) {
      for (const [first, second] of [
        [hot, plain],
        [plain, hot],
      ] as const) {
        const req = { path, body: json({ ...body, idempotency_key: `hot-${n}-${first.port}` }) };
        const sealed = await send(first.port, build(req, key));
        expect(sealed.status, `${path} ${sealed.body}`).toBe(201);
        const replay = await send(second.port, build(req, key));
        const again = await send(first.port, build(req, key));
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
        expect(replay.body).toBe(sealed.body);
        // The replay on the other path, byte for byte: the first answer and this differ only in that header.
        expect(again.head.replace(/hot-path-test-\d+/, 'ID')).toBe(replay.head.replace(/hot-path-test-\d+/, 'ID'));
        expect(again.body).toBe(replay.body);
        expect(sealed.head.replace(/hot-path-test-\d+/, 'ID')).toBe(replay.head.replace(/hot-path-test-\d+/, 'ID').replace('idempotent-replayed: true\r\n', ''));
      }
    }
  });

  it('answers a fresh seal with the same header lines and members as the app', async () => {
    const req = { path: '/v1/gate', body: json(gateBody('law')) };
    const [a, b] = [await send(plain.port, build(req, key)), await send(hot.port, build(req, key))];
    expect(b.status).toBe(201);
    expect(b.head.replace(/hot-path-test-\d+/, 'ID').replace(/content-length: \d+/i, '')).toBe(a.head.replace(/hot-path-test-\d+/, 'ID').replace(/content-length: \d+/i, ''));
    expect(Object.keys(JSON.parse(b.body))).toEqual(Object.keys(JSON.parse(a.body)));
  });
});

describe("the app's middleware for these routes, on the hot path", () => {
  const post = (port: number, path: string, body: unknown, k: string | undefined, headers: Record<string, string> = {}) =>
    send(port, build({ path, body: json(body), headers }, k));

  it('logs one access line and counts the request under its route pattern, with the tenant', async () => {
    const metric = async () => {
      const text = (await ctx.request('/metrics')).text;
      const line = text.split('\n').find((l) => l.startsWith('svc_http_requests_total{') && l.includes('route="/education/proposed-action"') && l.includes('status="201"'));
      return line === undefined ? 0 : Number(line.split(' ').pop());
    };
    const before = await metric();
    const res = await post(hot.port, '/education/proposed-action', gateBody('education', { pack: undefined }), key);
    expect(res.status, res.body).toBe(201);
    const id = res.headers.get('x-request-id')!;
    const lines = ctx.log.entries.filter((e) => e.message === 'request' && e.fields.request_id === id);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.fields).toMatchObject({ method: 'POST', route: '/education/proposed-action', status: 201, tenant_id: expect.stringMatching(/^ten_/) });
    expect(await metric()).toBe(before + 1);
  });

  it('replaces an X-Request-Id that is not an opaque token, and keeps one that is', async () => {
    const replaced = await post(hot.port, '/v1/gate', {}, key, { 'x-request-id': 'bad id!' });
    expect(replaced.headers.get('x-request-id')).toMatch(/^req_[0-9A-Z]{26}$/);
    expect(JSON.parse(replaced.body).request_id).toBe(replaced.headers.get('x-request-id'));
  });

  it("refuses a key without the route's capability, records a key's last use, and refuses a revoked key at once", async () => {
    const { signIn } = await import('./account-helpers.ts');
    const owner = await signIn(ctx, key);
    const narrow = await owner.request('/account/api-keys', { json: { capabilities: ['records:read'] } });
    expect(narrow.status, narrow.text).toBe(201);
    const [a, b] = [await post(plain.port, '/v1/gate', gateBody('law'), narrow.body.api_key), await post(hot.port, '/v1/gate', gateBody('law'), narrow.body.api_key)];
    expect(b.status).toBe(403);
    expect(b.head.replace(/hot-path-test-\d+/, 'ID')).toBe(a.head.replace(/hot-path-test-\d+/, 'ID'));
    expect(b.body.replace(/hot-path-test-\d+/, 'ID')).toBe(a.body.replace(/hot-path-test-\d+/, 'ID'));

    const minted = await owner.request('/account/api-keys', { json: {} });
    const secret = minted.body.api_key as string;
    const lastUse = async () => ((await owner.request('/account/api-keys')).body.keys as { id: string; last_used_at: string | null }[]).find((k) => k.id === minted.body.key.id)!.last_used_at;
    expect(await lastUse()).toBeNull();
    expect((await post(hot.port, '/v1/record', recordBody(), secret)).status).toBe(201);
    expect(await lastUse()).not.toBeNull();

    // Revoked through the account API; and a second key revoked by another connection to the
    // same database (another process's), which this process hears of only through the
    // credential version.
    const revoked = await owner.request(`/account/api-keys/${minted.body.key.id}/revoke`, { method: 'POST' });
    expect(revoked.status, revoked.text).toBe(200);
    expect((await post(hot.port, '/v1/gate', gateBody('law'), secret)).status).toBe(401);
    const second = await owner.request('/account/api-keys', { json: {} });
    expect((await post(hot.port, '/v1/gate', gateBody('law'), second.body.api_key)).status).toBe(201);
    const other = await createTestContext({ dataDir: ctx.dataDir });
    try {
      expect(await other.store.tenants.revokeApiKey(tenantId, second.body.key.id, '2025-01-01T00:00:00.000Z')).toBe(true);
    } finally {
      await other.close();
    }
    const refused = await post(hot.port, '/v1/gate', gateBody('law'), second.body.api_key);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="svc", error="invalid_token"');
  });
});
