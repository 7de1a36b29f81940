/**
 * Review routing, against baselines measured in this run (loopback only):
 *   1. open-review-modal latency over real HTTP: p50/p99 of a Slack-signed block-action
 *      request (signature check, replay record, two reads, the views.open envelope) as a ratio
 *      to a plain Hono JSON route served the same way, and against Slack's three-second
 *      acknowledgement window;
 *   2. dispatch throughput: 1,000 paused actions on a workflow route, each with its outbox
 *      item written in its seal, then sent by the worker under SVC_OUTBOX_EXTERNAL_SEND=1
 *      through the guarded client, as a ratio to a plain node:http POST loop.
 */
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createApp } from '../companion/app.ts';
import { hashApiKey } from '../companion/core/auth.ts';
import { loadConfig } from '../companion/core/config.ts';
import { createMemoryLogger } from '../companion/core/log.ts';
import { closeDeps, openSqliteDeps } from '../companion/deps.ts';
import type { AppDeps } from '../companion/deps.ts';
import type { SqliteStore } from '../companion/store.ts';
import { seedProductionTenant } from './companion-gate.ts';
import { line, percentile, section } from './harness.ts';
import { plainPostLoop, receiver } from './webhooks.ts';

const REQUESTS = 2000;
const PAUSED = 1000;
const SIGNING = 'bench-slack-signing-secret';
const TOKEN = 'bench-route-token';

type BenchDeps = AppDeps & { store: SqliteStore; dataDir: string; tenantId: string; apiKey: string };

async function open(env: Record<string, string> = {}): Promise<BenchDeps> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-routing-'));
  const apiKey = await seedProductionTenant(dataDir);
  const probe = await openSqliteDeps(loadConfig({ SVC_DATA_DIR: dataDir }, []), { log: createMemoryLogger() });
  const tenantId = (await probe.store.tenants.findActiveApiKeyByHash(hashApiKey(apiKey)))!.tenantId;
  await probe.store.close();
  process.env.BENCH_ROUTE_TOKEN = TOKEN;
  process.env.BENCH_SLACK_SIGNING = SIGNING;
  const grants = JSON.stringify({ [tenantId]: ['env://BENCH_ROUTE_TOKEN', 'env://BENCH_SLACK_SIGNING'] });
  const deps = await openSqliteDeps(loadConfig({ SVC_DATA_DIR: dataDir, SVC_WEBHOOK_ALLOW_LOOPBACK: '1', SVC_SECRET_GRANTS: grants, ...env }, []), { log: createMemoryLogger() });
  return Object.assign(deps, { dataDir, tenantId, apiKey });
}

async function call(app: ReturnType<typeof createApp>, apiKey: string, method: string, url: string, body: unknown): Promise<any> {
  const res = await app.request(url, { method, headers: { 'content-type': 'application/json', 'x-service-key': apiKey }, body: JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`${method} ${url} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/** Sequential requests over one keep-alive socket; the latency of each, in ms. */
async function latencies(port: number, requests: { path: string; headers: Record<string, string>; body: string }[]): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const out: number[] = [];
  for (const r of requests) {
    const start = performance.now();
    await new Promise<void>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path: r.path, method: 'POST', agent, headers: { ...r.headers, 'content-length': Buffer.byteLength(r.body) } }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`answered ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(r.body);
    });
    out.push(performance.now() - start);
  }
  agent.destroy();
  return out;
}

function listen(fetch: (req: Request) => Response | Promise<Response>): Promise<{ port: number; close: () => Promise<void> }> {
  return new Promise((resolve) => {
    const server = serve({ fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
      resolve({ port: info.port, close: () => new Promise<void>((r) => { (server as http.Server).closeAllConnections(); server.close(() => r()); }) });
    });
  });
}

async function modalLatency(): Promise<{ plain: number[]; modal: number[] }> {
  const deps = await open();
  const app = createApp(deps);
  const plainApp = new Hono().post('/plain', (c) => c.json({ ok: true, trigger_id: 'x' }));
  const served = await listen(app.fetch);
  const plain = await listen(plainApp.fetch);
  try {
    await call(app, deps.apiKey, 'PUT', '/tenant/integrations/chat/legal-desk', { enabled: true, config: { channel_id: 'C1', signing_secret_ref: 'env://BENCH_SLACK_SIGNING' }, secret_ref: 'env://BENCH_ROUTE_TOKEN' });
    await call(app, deps.apiKey, 'PUT', '/tenant/policy?policy_pack=law', { review_routes: { 'proposed-action': 'chat:legal-desk' } });
    const gate = await call(app, deps.apiKey, 'POST', '/v1/gate', { pack: 'law', proposed_action: 'Draft the reply in matter 42', law_context: { matter_band: 'moderate', tool_id: 'drafting-assistant', doctrine_anchor: 'competence', jurisdiction: 'US-NY' } });
    const dispatchKey = (await deps.store.routing.findByAction(deps.tenantId, gate.action_key))!.id;
    const ts = Math.floor(Date.now() / 1000);
    // Each request differs (action_ts), so none is refused as a replay; signed before timing.
    const modalRequests = Array.from({ length: REQUESTS + 200 }, (_, i) => {
      const payload = { type: 'block_actions', trigger_id: `398738663015.47445629121.${i}`, user: { id: 'U1' }, actions: [{ action_id: 'open-law-mirror-review', value: dispatchKey, type: 'button', action_ts: `${ts}.${i}` }] };
      const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
      const signature = `v0=${createHmac('sha256', SIGNING).update(`v0:${ts}:${body}`).digest('hex')}`;
      return { path: `/integrations/callbacks/${deps.tenantId}/chat/legal-desk/open-review-modal`, headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': String(ts), 'x-slack-signature': signature }, body };
    });
    const plainRequests = Array.from({ length: REQUESTS + 200 }, () => ({ path: '/plain', headers: { 'content-type': 'application/json' }, body: '{}' }));
    await latencies(plain.port, plainRequests.slice(0, 200)); // warm-up
    await latencies(served.port, modalRequests.slice(0, 200));
    return { plain: await latencies(plain.port, plainRequests.slice(200)), modal: await latencies(served.port, modalRequests.slice(200)) };
  } finally {
    await served.close();
    await plain.close();
    await closeDeps(deps);
    fs.rmSync(deps.dataDir, { recursive: true, force: true });
  }
}

const PAUSE_BODY = { pack: 'medicine', proposed_action: 'Export the visit summary', action_type: 'phi-export', context: { care_setting: 'outpatient', tool_id: 'ambient-scribe', phi_involved: false, tool_baa_status: 'baa-signed' } };

/** Seals PAUSED needs_review decisions, 50 in flight; the rate per second. */
async function pauseAll(app: ReturnType<typeof createApp>, apiKey: string): Promise<number> {
  const start = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: 50 }, async () => { while (next++ < PAUSED) await call(app, apiKey, 'POST', '/v1/gate', PAUSE_BODY); }));
  return (PAUSED * 1000) / (performance.now() - start);
}

async function dispatchRate(url: string, count: () => number): Promise<{ noRoute: number; sealRate: number; sendRate: number }> {
  const bare = await open();
  let noRoute: number;
  try {
    noRoute = await pauseAll(createApp(bare), bare.apiKey);
  } finally {
    await closeDeps(bare);
    fs.rmSync(bare.dataDir, { recursive: true, force: true });
  }
  const deps = await open({ SVC_OUTBOX_EXTERNAL_SEND: '1' });
  const app = createApp(deps);
  try {
    await call(app, deps.apiKey, 'PUT', '/tenant/integrations/workflow/privacy-office', { enabled: true, config: { url }, secret_ref: 'env://BENCH_ROUTE_TOKEN' });
    const sealRate = await pauseAll(app, deps.apiKey);
    const pending = deps.store.db.prepare("SELECT count(*) AS n FROM route_dispatches WHERE status = 'pending'").get() as { n: number };
    if (pending.n !== PAUSED) throw new Error(`expected ${PAUSED} pending dispatches, found ${pending.n}`);
    const before = count();
    const start = performance.now();
    await deps.lifecycle.start();
    const unsent = deps.store.db.prepare("SELECT 1 FROM route_dispatches WHERE status IN ('pending', 'failed') LIMIT 1");
    while (unsent.get() !== undefined) await new Promise((r) => setTimeout(r, 10));
    const sendRate = (PAUSED * 1000) / (performance.now() - start);
    if (count() - before !== PAUSED) throw new Error(`the stand-in saw ${count() - before} of ${PAUSED} dispatches`);
    return { noRoute, sealRate, sendRate };
  } finally {
    await closeDeps(deps);
    fs.rmSync(deps.dataDir, { recursive: true, force: true });
  }
}

const ms = (x: number) => `${x.toFixed(2)} ms`;

export async function benchRouting(): Promise<void> {
  section('Review routing (loopback)');
  const { plain, modal } = await modalLatency();
  const p50 = [percentile(plain, 50), percentile(modal, 50)] as const;
  const p99 = [percentile(plain, 99), percentile(modal, 99)] as const;
  line('baseline: plain Hono JSON route', `p50 ${ms(p50[0])}, p99 ${ms(p99[0])} (${REQUESTS} sequential requests)`);
  line('open-review-modal (Slack-signed block action)', `p50 ${ms(p50[1])}, p99 ${ms(p99[1])} (${(p99[1] / p99[0]).toFixed(2)}x baseline p99; ${(p99[1] / 3000 * 100).toFixed(3)}% of Slack's 3 s window)`);

  const rx = await receiver();
  try {
    await plainPostLoop(rx.url, 500); // warm-up
    const plainRate = await plainPostLoop(rx.url, PAUSED);
    line('baseline: plain node:http POST loop', `${Math.round(plainRate).toLocaleString('en-US')}/s`);
    const r = await dispatchRate(rx.url, rx.count);
    line(`baseline: ${PAUSED.toLocaleString('en-US')} paused actions sealed, no route integration`, `${Math.round(r.noRoute).toLocaleString('en-US')}/s (50 in flight)`);
    line(`${PAUSED.toLocaleString('en-US')} paused actions sealed with their dispatch`, `${Math.round(r.sealRate).toLocaleString('en-US')}/s (${(r.sealRate / r.noRoute).toFixed(2)}x baseline)`);
    line('route dispatches sent by the worker (guarded client, bearer)', `${Math.round(r.sendRate).toLocaleString('en-US')}/s (${(r.sendRate / plainRate).toFixed(2)}x baseline)`);
  } finally {
    await rx.close();
  }
}
