/**
 * Webhook delivery throughput, against baselines measured in this run; every receiver is a
 * node:http server on 127.0.0.1:
 *   1. signed deliveries per second through the guarded client and the leased queue (claim,
 *      sign, POST, complete: outcomes stored a batch at a time), as a ratio to a plain node:http
 *      POST loop with the same concurrency (target ≥ 0.5x and ≥ 1,000/s). Both are warmed up
 *      once, then measured in alternating rounds, and the medians compared: on a shared
 *      machine one round of either can be twice as fast as the next;
 *   2. durable gate decisions per second with a subscribed webhook target (its record.sealed
 *      outbox rows and their delivery running alongside) against the same tenant setup with no
 *      target (target ≥ 0.9x). Here the receiver runs in a process of its own, as a tenant's
 *      endpoint would: its work is not the service's, and in one process it would be counted
 *      against the gate. In the same alternating rounds, the two parts every delivery has, each
 *      alone and then together: the seal writing its delivery row with no worker to send it
 *      (the enqueue), and one bare POST per decision (the POST). Together they are the least
 *      any delivery design does, with nothing claimed, signed or stored. Each round
 *      ends when its deliveries (or POSTs) are done, and its rate counts that time: none is
 *      left to run in the next setup's round, and the rate is one the service keeps up. Beside
 *      each rate, the CPU time a decision took in the service (every thread) and in the
 *      receiver, over all rounds: it says what a delivery costs and where. Last, that cost
 *      in the unit of its target: the CPU a delivery adds to a decision over the CPU one bare
 *      POST adds (target ≤ 2x).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createApp } from '../companion/app.ts';
import { hashApiKey } from '../companion/core/auth.ts';
import { loadConfig } from '../companion/core/config.ts';
import { createMemoryLogger } from '../companion/core/log.ts';
import { closeDeps, openSqliteDeps } from '../companion/deps.ts';
import { createOutboundHttp } from '../companion/net/outbound-http.ts';
import type { AppDeps } from '../companion/deps.ts';
import type { SqliteStore } from '../companion/store.ts';
import { seedProductionTenant } from './companion-gate.ts';
import { alternate, gateRunner } from './gate-load.ts';
import { line, median, section } from './harness.ts';

const CONCURRENCY = 64;
const DELIVERIES = 6000;
const ROUNDS = 5;
/** Gate rounds with and without a target: its ratio swings more between rounds than the delivery rate's. */
const GATE_ROUNDS = 9;

export async function receiver(): Promise<{ url: string; count: () => number; close: () => Promise<void> }> {
  let n = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      n++;
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    count: () => n,
    close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/**
 * The same receiver in a child process; it answers 204 to everything, and on a message
 * sends back its own CPU time so far (process.cpuUsage, microseconds, all its threads).
 */
async function receiverProcess(): Promise<{ url: string; cpuMicros: () => Promise<number>; close: () => Promise<void> }> {
  const source = `const s = require('node:http').createServer((q, r) => { q.resume(); q.on('end', () => r.writeHead(204).end()); });
    s.keepAliveTimeout = 10000; s.listen(0, '127.0.0.1', () => console.log(s.address().port));
    process.on('message', () => { const c = process.cpuUsage(); process.send(c.user + c.system); });`;
  const child = spawn(process.execPath, ['-e', source], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim()));
    child.once('exit', (code) => reject(new Error(`the receiver process exited (${code})`)));
  });
  return {
    url: `http://127.0.0.1:${port}/hook`,
    cpuMicros: () => new Promise((resolve) => (child.once('message', (m) => resolve(m as number)), child.send('cpu'))),
    close: () => new Promise((r) => (child.once('exit', () => r()), child.kill())),
  };
}

/** What the POST loops below send: a body about the size of a record.sealed delivery's. */
const POST_BODY = JSON.stringify({ event: 'record.sealed', tenant: 'ten_x', created_at: '2025-01-01T00:00:00.000Z', pad: 'x'.repeat(200) });

/** Baseline: `total` POSTs of POST_BODY with CONCURRENCY in flight over keep-alive. */
export async function plainPostLoop(url: string, total: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const body = Buffer.from(POST_BODY);
  const { port, pathname } = new URL(url);
  let sent = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (sent < total) {
        sent++;
        await new Promise<void>((resolve, reject) => {
          const req = http.request({ host: '127.0.0.1', port, path: pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
            res.resume();
            res.on('end', resolve);
          });
          req.on('error', reject);
          req.end(body);
        });
      }
    }),
  );
  const rate = (total * 1000) / (performance.now() - start);
  agent.destroy();
  return rate;
}

/** A fresh data directory with one production tenant (no sandbox cap), and the app's deps on it. */
async function open(): Promise<AppDeps & { store: SqliteStore; dataDir: string; tenantId: string; apiKey: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-webhooks-'));
  const apiKey = await seedProductionTenant(dataDir);
  const deps = await openSqliteDeps(loadConfig({ SVC_DATA_DIR: dataDir, SVC_WEBHOOK_ALLOW_LOOPBACK: '1' }, []), { log: createMemoryLogger() });
  const tenantId = (await deps.store.tenants.findActiveApiKeyByHash(hashApiKey(apiKey)))!.tenantId;
  return Object.assign(deps, { dataDir, tenantId, apiKey });
}

async function dispose(deps: AppDeps & { dataDir: string }): Promise<void> {
  await closeDeps(deps);
  fs.rmSync(deps.dataDir, { recursive: true, force: true });
}

async function subscribe(deps: AppDeps, apiKey: string, url: string): Promise<void> {
  const app = createApp(deps);
  const res = await app.request('/tenant/integrations/webhook/bench', {
    method: 'PUT',
    headers: { 'content-type': 'application/json', 'x-service-key': apiKey },
    body: JSON.stringify({ enabled: true, config: { url, events: ['record.sealed'] } }),
  });
  if (res.status !== 201) throw new Error(`subscribe failed: ${res.status} ${await res.text()}`);
}

/**
 * Resolves once no delivery in `deps`' database waits to be sent (pending, or failed and due
 * again); throws after 10 s. The poll reads the due index (migration 0015), which holds only
 * those rows, so it costs the same however many were delivered before: a count over the whole
 * table, polled every 2 ms while a round's deliveries catch up, took CPU the rounds charged to
 * the deliveries. That every one ended delivered (none dead) is checked apart: undelivered().
 */
async function nothingDue(deps: AppDeps & { store: SqliteStore }, failure: string): Promise<void> {
  const due = deps.store.db.prepare("SELECT EXISTS (SELECT 1 FROM webhook_deliveries INDEXED BY webhook_deliveries_due WHERE status IN ('pending', 'failed')) AS n");
  const start = performance.now();
  while ((due.get() as { n: number }).n > 0) {
    if (performance.now() - start > 10_000) throw new Error(failure);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Deliveries in `deps`' database not stored as delivered. */
function undelivered(deps: AppDeps & { store: SqliteStore }): number {
  return (deps.store.db.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE status <> 'delivered'").get() as { n: number }).n;
}

async function deliveryRate(url: string, count: () => number, total = DELIVERIES): Promise<number> {
  const deps = await open();
  try {
    const { tenantId, apiKey } = deps;
    await subscribe(deps, apiKey, url);
    const outbox = deps.webhooks.outbox;
    const createdAt = new Date().toISOString();
    await deps.store.transaction(async (tx) => {
      for (let i = 0; i < total; i++) {
        await outbox.enqueue(
          {
            tenantId,
            event: 'record.sealed',
            eventKey: `bench:${i}`,
            fields: { action_key: `law:proposed-action:${i}`, decision: 'allow', attestation_root: 'a'.repeat(64), stamp_id: `${tenantId}/${i}`, href: `/law/evidence-packets/law:proposed-action:${i}` },
            createdAt,
          },
          tx,
        );
      }
    });
    const before = count();
    const start = performance.now();
    await deps.lifecycle.start();
    // Watched at the receiver, which costs nothing: polling the table would take the worker's
    // thread. The stored outcomes are checked once the last delivery has arrived.
    while (count() - before < total) await new Promise((r) => setTimeout(r, 10));
    const rate = (total * 1000) / (performance.now() - start);
    await nothingDue(deps, 'every delivery arrived, but not every outcome was stored');
    if (undelivered(deps) > 0) throw new Error('every delivery arrived, but not every one is stored as delivered');
    return rate;
  } finally {
    await dispose(deps);
  }
}

/**
 * open(), `record.sealed` subscribed to `url` if one is given, and the lifecycle started;
 * without `worker` the delivery worker is stopped again, so seals write delivery rows that
 * nothing sends.
 */
async function started(url: string | undefined, { worker }: { worker: boolean }): Promise<Awaited<ReturnType<typeof open>>> {
  const deps = await open();
  if (url) await subscribe(deps, deps.apiKey, url);
  await deps.lifecycle.start();
  if (!worker) await deps.webhooks.worker.stop();
  return deps;
}

/**
 * A set-up of the gate comparison: `run(ms)` runs the gate for `ms`, then waits for the work
 * its decisions left behind (deliveries, POSTs); `decisions()` counts answers so far.
 */
interface Setup {
  run(ms: number): Promise<void>;
  decisions(): number;
}

/**
 * A tenant with or without a subscribed target, and how many were delivered. A round ends
 * once its deliveries are all delivered: the ones still queued would otherwise be sent during
 * the next set-up's round and slow that one instead, and a rate that left them out would not
 * be one the service could keep up. How long that took after the gate stopped is kept.
 * `enqueueOnly` stops the delivery worker after the start: each seal still writes its
 * delivery row, and none is sent.
 */
async function gateLoad(url: string | undefined, { enqueueOnly = false } = {}): Promise<Setup & { delivered(): number; undelivered(): number; catchUpMs: number[]; close(): Promise<void> }> {
  const deps = await started(url, { worker: !enqueueOnly });
  const delivered = deps.store.db.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'delivered'");
  let decisions = 0;
  const gate = gateRunner(createApp(deps), deps.apiKey, () => void decisions++);
  const catchUpMs: number[] = [];
  return {
    async run(ms) {
      await gate(ms);
      if (enqueueOnly) return;
      const ended = performance.now();
      await nothingDue(deps, 'the deliveries of a gate round were not all sent within 10 s of its end');
      catchUpMs.push(performance.now() - ended);
    },
    decisions: () => decisions,
    delivered: () => (delivered.get() as { n: number }).n,
    undelivered: () => undelivered(deps),
    catchUpMs,
    close: () => dispose(deps),
  };
}

/**
 * A tenant whose every answered decision is followed by one POST of a delivery-sized body to
 * `url` through the guarded client: nothing claimed, stored or signed. No delivery design sends
 * less than that for a decision. With `enqueue`, `record.sealed` is subscribed and the delivery
 * worker stopped, so each seal also writes its delivery row: together, the least any design
 * does for a delivery (Events rules 1–5: the row in the seal's transaction, one POST per event).
 */
async function gateWithBarePosts(url: string, { enqueue = false } = {}): Promise<Setup & { posted(): number; close(): Promise<void> }> {
  const deps = await started(enqueue ? url : undefined, { worker: !enqueue });
  const client = createOutboundHttp({ allowLoopback: true });
  const inFlight = new Set<Promise<void>>();
  let decisions = 0;
  let posted = 0;
  let failed = 0;
  const post = () => {
    decisions++;
    const sent: Promise<void> = client.post({ url, headers: { 'content-type': 'application/json' }, body: POST_BODY }).then(
      (res) => void (res.status === 204 ? posted++ : failed++),
      () => void failed++,
    ).finally(() => inFlight.delete(sent));
    inFlight.add(sent);
  };
  const gate = gateRunner(createApp(deps), deps.apiKey, post);
  return {
    // As with deliveries (gateLoad), a round ends once its POSTs are answered.
    run: async (ms) => void (await gate(ms), await Promise.all(inFlight)),
    decisions: () => decisions,
    posted: () => posted,
    async close() {
      await Promise.all(inFlight);
      await client.close();
      await dispose(deps);
      if (failed > 0) throw new Error(`${failed} bare POSTs failed`);
    },
  };
}

/**
 * `setup`'s rounds as alternate() runs them: each resolves with its decisions per second over
 * the whole round, the work left behind included. The rounds also add up the CPU time they
 * took, this process's (every thread: the request thread, the sealing thread, libuv's) and the
 * receiver's apart, and their decisions; a set-up's first call (alternate's warm-up) is not
 * counted.
 */
function measured(setup: Setup, receiverCpu: () => Promise<number>): { run(ms: number): Promise<number>; cpu(): { service: number; receiver: number }; rounds: number[] } {
  const service = () => {
    const own = process.cpuUsage();
    return own.user + own.system;
  };
  let calls = 0;
  const total = { service: 0, receiver: 0, decisions: 0 };
  /** The service's CPU microseconds per decision in each counted round. */
  const rounds: number[] = [];
  return {
    rounds,
    async run(ms) {
      const receiver0 = await receiverCpu();
      const service0 = service();
      const n0 = setup.decisions();
      const start = performance.now();
      await setup.run(ms);
      const elapsed = performance.now() - start;
      const serviceCpu = service() - service0;
      const n = setup.decisions() - n0;
      if (calls++ > 0) {
        rounds.push(serviceCpu / n);
        total.service += serviceCpu;
        total.receiver += (await receiverCpu()) - receiver0;
        total.decisions += n;
      }
      return (n * 1000) / elapsed;
    },
    cpu: () => ({ service: total.service / total.decisions, receiver: total.receiver / total.decisions }),
  };
}

interface GateFigures {
  /** The service's CPU per decision in each round, in alternate()'s round order. */
  rounds: number[];
  rate: number;
  /** The median of the rounds' ratios to the gate without a target. */
  ratio: number;
  /** CPU microseconds per decision, over all rounds: the service's and the receiver's. */
  cpu: { service: number; receiver: number };
}

/**
 * Gate throughput with no target; with a subscribed target whose deliveries are written and
 * not sent (the enqueue alone); with a bare POST per decision and no target (the POST alone);
 * with both (the least a delivery design does); and with deliveries written and sent: in
 * alternating rounds (bench/gate-load.ts alternate).
 */
async function gateOnOff(remote: { url: string; cpuMicros: () => Promise<number> }): Promise<{ off: GateFigures; enqueued: GateFigures; bare: GateFigures; least: GateFigures; on: GateFigures; posted: number; delivered: number; catchUpMs: number }> {
  const off = await gateLoad(undefined);
  const enqueued = await gateLoad(remote.url, { enqueueOnly: true });
  const bare = await gateWithBarePosts(remote.url);
  const least = await gateWithBarePosts(remote.url, { enqueue: true });
  const on = await gateLoad(remote.url);
  try {
    const setups = [off, enqueued, bare, least, on].map((s) => measured(s, remote.cpuMicros));
    const { rates, ratios } = await alternate(setups.map((s) => s.run), GATE_ROUNDS);
    if (on.undelivered() > 0) throw new Error(`${on.undelivered()} deliveries of the gate rounds were not stored as delivered`);
    const [offFigures, enqueuedFigures, bareFigures, leastFigures, onFigures] = setups.map((s, i) => ({ rate: rates[i]!, ratio: ratios[i]!, cpu: s.cpu(), rounds: s.rounds }));
    return { off: offFigures!, enqueued: enqueuedFigures!, bare: bareFigures!, least: leastFigures!, on: onFigures!, posted: bare.posted(), delivered: on.delivered(), catchUpMs: median(on.catchUpMs) };
  } finally {
    // Every set-up is closed even when one fails to (a bare POST that failed); the first failure is reported.
    const closed = await Promise.allSettled([off, enqueued, bare, least, on].map((s) => s.close()));
    const failure = closed.find((c): c is PromiseRejectedResult => c.status === 'rejected');
    if (failure) throw failure.reason;
  }
}

/**
 * What a delivery adds to a decision's CPU in the service (delivered − no target: the enqueue,
 * the claim, the signature, the POST and its stored outcome), in units of what one bare POST
 * through the guarded client adds (bare − no target), over all rounds and as the median of the
 * rounds' own ratios: the three run in the same alternating rounds, so a round's ratio compares
 * set-ups that met the same machine.
 */
function deliveryCpuRatio(off: GateFigures, bare: GateFigures, on: GateFigures): { overall: number; median: number } {
  const overall = (on.cpu.service - off.cpu.service) / (bare.cpu.service - off.cpu.service);
  const rounds = off.rounds.map((o, i) => (on.rounds[i]! - o) / (bare.rounds[i]! - o));
  return { overall, median: median(rounds) };
}

export async function benchWebhooks(): Promise<void> {
  section('Signed webhook deliveries (loopback receiver, guard on)');
  const rx = await receiver();
  try {
    await plainPostLoop(rx.url, 1000); // warm-up
    await deliveryRate(rx.url, rx.count, 1000);
    const plainRates: number[] = [];
    const guardedRates: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      plainRates.push(await plainPostLoop(rx.url, DELIVERIES));
      guardedRates.push(await deliveryRate(rx.url, rx.count));
    }
    const plain = median(plainRates);
    const guarded = median(guardedRates);
    line('baseline: plain node:http POST loop', `${Math.round(plain).toLocaleString('en-US')}/s (${CONCURRENCY} in flight; median of ${ROUNDS})`);
    line('signed deliveries through the queue and the guarded client', `${Math.round(guarded).toLocaleString('en-US')}/s (${(guarded / plain).toFixed(2)}x baseline; targets 0.5x and 1,000/s)`);

    const remote = await receiverProcess();
    const gate = await gateOnOff(remote).finally(() => remote.close());
    const { off, enqueued, bare, least, on } = gate;
    const signed = (n: number) => `${n < 0 ? '−' : '+'}${Math.abs(Math.round(n))}`;
    const cpu = ({ cpu: c }: GateFigures) => `CPU a decision: ${Math.round(c.service)} µs in the service (${signed(c.service - off.cpu.service)}), ${Math.round(c.receiver)} µs in the receiver`;
    const rate = (f: GateFigures, note = '') => `${Math.round(f.rate).toLocaleString('en-US')}/s (${f.ratio.toFixed(2)}x${note})`;
    line('durable gate decisions, no webhook target', `${Math.round(off.rate).toLocaleString('en-US')}/s (baseline, 50 in flight, ${GATE_ROUNDS} rounds alternating with the rows below, each until its deliveries are in; ratios are the medians of the rounds' ratios; the receiver in its own process); CPU a decision: ${Math.round(off.cpu.service)} µs in the service`);
    line('the same with record.sealed subscribed, each seal writing its delivery row, none sent (the enqueue alone)', `${rate(enqueued)}; ${cpu(enqueued)}`);
    line('no target, and one bare POST per decision through the guarded client (the POST alone)', `${rate(bare)}, ${gate.posted.toLocaleString('en-US')} posted; ${cpu(bare)}`);
    line('the two together: each seal writing its delivery row, and one bare POST per decision (the least any delivery design does)', `${rate(least)}; ${cpu(least)}`);
    line('durable gate decisions, record.sealed subscribed and delivered', `${rate(on, '; target 0.9x')}, ${gate.delivered.toLocaleString('en-US')} delivered, the last of each round ${Math.round(gate.catchUpMs)} ms after the gate stopped (median); ${cpu(on)}`);
    const added = deliveryCpuRatio(off, bare, on);
    line(
      "a delivery's added CPU in the service, in bare POSTs through the guarded client",
      `${added.overall.toFixed(2)}x over all rounds (${Math.round(on.cpu.service - off.cpu.service)} µs a delivery, ${Math.round(bare.cpu.service - off.cpu.service)} µs a bare POST), ${added.median.toFixed(2)}x the median of the rounds' ratios; target ≤ 2x`,
    );
  } finally {
    await rx.close();
  }
}
