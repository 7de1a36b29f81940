/**
 * Durable sealed gate decisions per second, in-process and over HTTP on
 * loopback at 10 and 50 connections, each as a ratio to floors measured in this run:
 *   floor A: canonicalize + SHA-256 + node:crypto Ed25519 sign in a tight loop (no storage);
 *   floor B: floor A + one SQLite insert per seal, each its own durable (synchronous=FULL)
 *            transaction: the naive durable path that group commit must beat;
 *   floor C: the gate without HTTP on one thread: the decision and its durable seal, with no
 *            HTTP, routing, validation or authentication.
 * Also: the pipelined group commit against the fsync inside the commit (alternating rounds),
 * and for each HTTP load the batches, seals per batch and commit times the service reports.
 * With wrk, the ceiling HTTP itself puts on a ratio to floor A here: floor A's work alone
 * behind node:http (http-ceiling-server.ts), and the CPU a decision may take at 0.5x floor A
 * against what HTTP, the decision and the seal take.
 * Traffic goes to 127.0.0.1 only; every loop is bounded in count and time.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createApp } from '../companion/app.ts';
import { generateApiKey, hashApiKey } from '../companion/core/auth.ts';
import { loadConfig } from '../companion/core/config.ts';
import { createMemoryLogger } from '../companion/core/log.ts';
import type { WalSyncOptions } from '../companion/core/wal-sync.ts';
import { closeDeps, openDeps, openSqliteDeps } from '../companion/deps.ts';
import type { AppDeps } from '../companion/deps.ts';
import { signUpSandbox } from '../companion/account/signup.ts';
import { sealGate } from '../companion/gate/seal-gate.ts';
import type { GateBody } from '../companion/gate/seal-gate.ts';
import { getGatePack } from '../companion/packs/registry.ts';
import { currentOverlay } from '../companion/policy/overlay.ts';
import { floorAKey, floorAWork } from './floor-a.ts';
import { compare, line, measure, median, percentile, section } from './harness.ts';
import type { Rate } from './harness.ts';
import { startCompanion, startListening } from './companion-process.ts';
import type { RunningCompanion, ServerLatency } from './companion-process.ts';

/** The heaviest common gate request: a law action, classified, sealed as needs_review. */
export const GATE_BODY = {
  pack: 'law',
  proposed_action: 'Draft a reply to opposing counsel about the discovery schedule in matter 42.',
  law_context: { matter_band: 'moderate', tool_id: 'drafting-assistant', doctrine_anchor: 'competence', jurisdiction: 'US-NY' },
};

/**
 * A production tenant (no sandbox cap) and its svc_live_ key, made as a person makes one: a
 * sandbox signup, then the upgrade, through the stores only, so the same seed serves either
 * engine (`databaseUrl` set: PostgreSQL, which it migrates on first use; else the data
 * directory's SQLite file). On either engine it also leaves the production signing key in
 * `dataDir` (keys/), activated in the database.
 */
export async function seedProductionTenant(dataDir: string, databaseUrl?: string): Promise<string> {
  const env = { SVC_DATA_DIR: dataDir, ...(databaseUrl ? { SVC_DATABASE_URL: databaseUrl } : {}) };
  const deps = await openDeps(loadConfig(env, []), { log: createMemoryLogger() });
  try {
    return (await productionTenant(deps)).apiKey;
  } finally {
    await closeDeps(deps);
  }
}

/** A sandbox tenant signed up and upgraded on `deps`' store, with its production key. */
export async function productionTenant(deps: AppDeps): Promise<{ tenantId: string; keyId: string; apiKey: string }> {
  const { tenant } = await signUpSandbox({ tenants: deps.store.tenants, clock: deps.clock, ids: deps.ids }, `bench-${randomBytes(6).toString('hex')}@example.com`);
  const at = new Date().toISOString();
  const checkoutId = deps.ids.next('chk');
  const owner = (await deps.store.account.getKeyPerson((await deps.store.tenants.listApiKeys(tenant.id))[0]!.id))!;
  await deps.store.account.createCheckout({
    id: checkoutId, tenantId: tenant.id, personId: owner.id, provider: 'local', providerRef: checkoutId,
    status: 'verified', customerRef: null, createdAt: at, completedAt: null,
  });
  const key = generateApiKey('production');
  const newKey = { id: deps.ids.next('key'), tenantId: tenant.id, keyHash: key.hash, prefix: key.prefix, lastFour: key.lastFour, createdAt: at, personId: owner.id };
  const outcome = await deps.store.account.upgradeToProduction({ tenantId: tenant.id, checkoutId, customerRef: null, provider: 'local', newKey, at });
  if (outcome !== 'upgraded') throw new Error(`seeding the benchmark tenant: upgrade answered ${outcome}`);
  return { tenantId: tenant.id, keyId: newKey.id, apiKey: key.key };
}

function floors(): Pick<Floors, 'crypto' | 'cryptoInsert'> {
  const key = floorAKey();
  let i = 0;
  const sealOnce = () => floorAWork({ ...GATE_BODY, seq: i++, recorded_at: new Date().toISOString() }, key);
  const crypto = measure('floor A: canonicalize + 3 SHA-256 + sign', sealOnce);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-floor-'));
  const db = new Database(path.join(dir, 'floor.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, h TEXT NOT NULL, sig BLOB NOT NULL)');
  const insert = db.prepare('INSERT INTO t (h, sig) VALUES (?, ?)');
  const cryptoInsert = measure('floor B: floor A + 1 durable insert per seal', () => {
    const s = sealOnce();
    insert.run(s.hash, s.signature);
  }, { roundMs: 300, rounds: 3 });
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return { crypto, cryptoInsert };
}

/**
 * floor C: the gate without HTTP, in process on one thread: the law pack's decision on the
 * benchmark body and its seal, as POST /v1/gate makes them (gate/seal-gate.ts: the service's
 * participants, the review item, pipelined group commit, durable), with no HTTP, routing,
 * validation or authentication. The median of three rounds after a warm-up.
 */
async function gateWithoutHttp(): Promise<Rate> {
  const { deps, apiKey, close } = await seededDeps();
  try {
    const key = (await deps.store.tenants.findActiveApiKeyByHash(hashApiKey(apiKey)))!;
    const auth = { tenantId: key.tenantId, tenantKind: key.tenantKind, keyId: key.keyId };
    const pack = getGatePack('law')!;
    const overlay = await currentOverlay(deps.store, key.tenantId, 'law');
    const text = JSON.stringify(GATE_BODY);
    const round = async (seals: number) => {
      const start = performance.now();
      await Promise.all(Array.from({ length: seals }, () => sealGate(deps, auth, pack, JSON.parse(text) as GateBody, overlay)));
      return (seals * 1000) / (performance.now() - start);
    };
    await round(500);
    const rates = [await round(3000), await round(3000), await round(3000)];
    return { name: 'floor C: the gate without HTTP (decision and durable seal)', opsPerSec: median(rates) };
  } finally {
    await close();
  }
}

/** The baselines every gate figure is measured against, all from this run. */
interface Floors {
  crypto: Rate;
  cryptoInsert: Rate;
  noHttp: Rate;
}

export interface LoadResult {
  name: string;
  rate: number;
  p50: number;
  p99: number;
  errors: number;
}

/** Keeps `concurrency` requests in flight for `durationMs`; bounded by maxRequests. */
export async function load(name: string, concurrency: number, durationMs: number, send: () => Promise<number>): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  let sent = 0;
  const maxRequests = 200_000;
  const start = performance.now();
  const end = start + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end && sent < maxRequests) {
        sent++;
        const t0 = performance.now();
        const status = await send();
        latencies.push(performance.now() - t0);
        if (status !== 201) errors++;
      }
    }),
  );
  const elapsed = performance.now() - start;
  return { name, rate: (latencies.length * 1000) / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors };
}

function printLoad(r: LoadResult, floor: Floors): void {
  line(
    r.name,
    `${Math.round(r.rate).toLocaleString('en-US')} sealed/s (${(r.rate / floor.crypto.opsPerSec).toFixed(2)}x floor A, ${(r.rate / floor.cryptoInsert.opsPerSec).toFixed(2)}x floor B), p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms${r.errors ? `, ${r.errors} non-201 answers` : ''}`,
  );
}

/**
 * A fresh data directory with one production tenant, and the service's deps on it sealing on
 * the request thread: the in-process loads compare ways of committing there (the sealing
 * thread is measured over HTTP, sealingThreadAgainstRequestThread).
 */
async function seededDeps(walSync?: WalSyncOptions): Promise<{ deps: AppDeps; apiKey: string; close: () => Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-inproc-'));
  const apiKey = await seedProductionTenant(dataDir);
  const deps = await openSqliteDeps(loadConfig({ SVC_DATA_DIR: dataDir, SVC_SEAL_THREAD: '0' }, []), { log: createMemoryLogger(), ...(walSync ? { walSync } : {}) });
  return {
    deps,
    apiKey,
    async close() {
      await closeDeps(deps);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A production tenant's gate on an in-process app with its background work running. */
async function inProcessGate(walSync?: WalSyncOptions): Promise<{ send: () => Promise<number>; close: () => Promise<void> }> {
  const { deps, apiKey, close } = await seededDeps(walSync);
  // Background work as in the real server (the WAL checkpoint worker, the review sweep).
  await deps.lifecycle.start();
  const app = createApp(deps);
  const body = JSON.stringify(GATE_BODY);
  return {
    async send() {
      const res = await app.request('/v1/gate', { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-service-key': apiKey } });
      await res.arrayBuffer();
      return res.status;
    },
    close,
  };
}

async function inProcess(floor: Floors): Promise<void> {
  const gate = await inProcessGate();
  await load('warm-up', 10, 500, gate.send);
  for (const c of [10, 50]) printLoad(await load(`in-process, ${c} in flight`, c, 3000, gate.send), floor);
  await gate.close();
}

/**
 * The pipeline's own gain: the same service with the fsync inside the commit, on the event
 * loop (core/wal-sync.ts `pipelined: false`), in alternating 1-second rounds at 50 in flight.
 */
async function pipelinedAgainstInline(): Promise<void> {
  const inline = await inProcessGate({ pipelined: false });
  const pipelined = await inProcessGate();
  try {
    await load('warm-up', 50, 500, inline.send);
    await load('warm-up', 50, 500, pipelined.send);
    const inlineRates: number[] = [];
    const pipelinedRates: number[] = [];
    for (let round = 0; round < 5; round++) {
      inlineRates.push((await load('inline', 50, 1000, inline.send)).rate);
      pipelinedRates.push((await load('pipelined', 50, 1000, pipelined.send)).rate);
    }
    const [a, b] = [median(inlineRates), median(pipelinedRates)];
    line(
      'in-process, 50 in flight: fsync off the event loop / inside the commit',
      `${Math.round(b).toLocaleString('en-US')} / ${Math.round(a).toLocaleString('en-US')} sealed/s (${(b / a).toFixed(2)}x; medians of 5 alternating rounds)`,
    );
  } finally {
    await inline.close();
    await pipelined.close();
  }
}

async function overHttp(floor: Floors): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-http-'));
  const apiKey = await seedProductionTenant(dataDir);
  const companion = await startCompanion(dataDir);
  try {
    const body = Buffer.from(JSON.stringify(GATE_BODY));
    for (const c of [10, 50]) {
      const client = nodeClient([companion.url], c, apiKey, body);
      const { send } = client;
      await load('warm-up', c, 500, send);
      await companion.serverLatency();
      const before = await pipeline(companion.url);
      printLoad(await load(`HTTP on loopback, ${c} connections (node client)`, c, 4000, send), floor);
      printServerLatency(await companion.serverLatency());
      printPipeline(pipelineDelta(before, await pipeline(companion.url)));
      client.close();
    }
    // wrk (C, one thread) costs the server's machine far less than a Node client, so it shows
    // what the server itself sustains. Used when installed (Debian package wrk).
    if (hasWrk()) {
      let gate50 = 0;
      for (const c of [10, 50]) {
        const result = wrkLoad([companion.url], c, apiKey, body, { afterWarmUp: () => void companion.serverLatency() });
        printLoad(result, floor);
        printServerLatency(await companion.serverLatency());
        gate50 = result.rate;
      }
      await httpCeiling(body, floor, gate50);
      await sealingThreadAgainstRequestThread(companion, apiKey, body, floor);
    } else {
      line('wrk', 'not installed (apt-get install wrk): skipped the C load generator');
    }
  } finally {
    await companion.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * What HTTP leaves of floor A on this machine: floor A's work per request behind node:http,
 * with no authentication, decision or storage (http-ceiling-server.ts), under the same wrk load
 * as the gate. In one process it bounds any design that serves HTTP on one thread, as the
 * companion does; in two, any design on these cores. Then the CPU a decision may take at 0.5x
 * floor A against what the two-process ceiling and floor C beyond floor A take, all from this run.
 */
async function httpCeiling(body: Buffer, floor: Floors, gate: number): Promise<void> {
  const ceilings = new Map<number, number>();
  for (const processes of [1, 2]) {
    const server = await startListening(['--import', 'tsx', 'bench/http-ceiling-server.ts', String(processes)]);
    try {
      const r = wrkLoad([server.url], 50, 'unused', body);
      line(
        `ceiling: floor A's work behind node:http, nothing stored, ${processes} process${processes > 1 ? 'es' : ''} (wrk, 50 connections)`,
        `${Math.round(r.rate).toLocaleString('en-US')}/s (${(r.rate / floor.crypto.opsPerSec).toFixed(2)}x floor A; the gate above is ${(gate / r.rate).toFixed(2)}x it), p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms`,
      );
      ceilings.set(processes, r.rate);
    } finally {
      await server.stop();
    }
  }
  // Microseconds of CPU per decision, over all cores (wrk and the kernel included).
  const cores = os.cpus().length;
  const budget = (cores * 1e6) / (0.5 * floor.crypto.opsPerSec);
  const httpCost = (cores * 1e6) / ceilings.get(2)!;
  const rest = 1e6 / floor.noHttp.opsPerSec - 1e6 / floor.crypto.opsPerSec;
  line(
    `CPU per decision at 0.5x floor A on ${cores} cores`,
    `${budget.toFixed(0)} µs; HTTP with floor A's work (the 2-process ceiling) ${httpCost.toFixed(0)} µs + deciding and storing (floor C less floor A) ${rest.toFixed(0)} µs = ${(httpCost + rest).toFixed(0)} µs, before routing, validation and authentication`,
  );
}

/**
 * The companion as it runs by default, sealing on its sealing thread (companion/seal-thread/),
 * against one sealing on the request thread (SVC_SEAL_THREAD=0): wrk at 50 connections, in
 * alternating rounds, so the ratio is of one run on one machine.
 */
async function sealingThreadAgainstRequestThread(threaded: RunningCompanion, apiKey: string, body: Buffer, floor: Floors): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-http-'));
  const inlineKey = await seedProductionTenant(dataDir);
  const inline = await startCompanion(dataDir, { SVC_SEAL_THREAD: '0' });
  try {
    const sides = [
      { name: 'sealing thread (the default)', site: 'sealing-thread' as const, companion: threaded, key: apiKey, rates: [] as LoadResult[], commits: [] as PipelineTotals[] },
      { name: 'request thread (SVC_SEAL_THREAD=0)', site: 'request-thread' as const, companion: inline, key: inlineKey, rates: [] as LoadResult[], commits: [] as PipelineTotals[] },
    ];
    for (let round = 0; round < 3; round++) {
      for (const side of sides) {
        const before = await pipeline(side.companion.url);
        side.rates.push(wrkLoad([side.companion.url], 50, side.key, body, { warmUpSeconds: round === 0 ? 2 : 0, seconds: 5 }));
        side.commits.push(pipelineDelta(before, await pipeline(side.companion.url)));
      }
    }
    for (const side of sides) {
      const mid = [...side.rates].sort((a, b) => a.rate - b.rate)[1]!;
      printLoad({ ...mid, name: `wrk, 50 connections, ${side.name}` }, floor);
      printPipeline(side.commits.reduce((a, b) => ({ batches: a.batches + b.batches, seals: a.seals + b.seals, commitSeconds: a.commitSeconds + b.commitSeconds, durableSeconds: a.durableSeconds + b.durableSeconds })), side.site);
    }
    const [t, r] = sides.map((side) => median(side.rates.map((x) => x.rate)));
    line('sealing thread / request thread', `${(t! / r!).toFixed(2)}x (medians of 3 alternating rounds)`);
  } finally {
    await inline.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Gate requests over keep-alive connections from this process: `connections` sockets at most,
 * spread in turn over `urls` (several companions behind one client, as a balancer would). With
 * several keys, the n-th target pairs urls[n % urls] with keys[n % keys], as wrkLoad's threads do.
 */
export function nodeClient(urls: string[], connections: number, apiKeys: string | string[], body: Buffer): { send: () => Promise<number>; close: () => void } {
  const keys = typeof apiKeys === 'string' ? [apiKeys] : apiKeys;
  const n = Math.max(urls.length, keys.length);
  const targets = Array.from({ length: n }, (_, i) => ({
    port: new URL(urls[i % urls.length]!).port,
    key: keys[i % keys.length]!,
    agent: new http.Agent({ keepAlive: true, maxSockets: Math.ceil(connections / n) }),
  }));
  let next = 0;
  const send = () =>
    new Promise<number>((resolve) => {
      const { port, key, agent } = targets[next++ % targets.length]!;
      const req = http.request(
        { host: '127.0.0.1', port, path: '/v1/gate', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length, 'x-service-key': key } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', () => resolve(0));
      req.end(body);
    });
  return { send, close: () => targets.forEach((t) => t.agent.destroy()) };
}

export function hasWrk(): boolean {
  return spawnSync('wrk', ['--version']).error === undefined;
}

/** Totals of the group-commit series on the companion's /metrics (ops/metrics.ts). */
export interface PipelineTotals {
  batches: number;
  seals: number;
  commitSeconds: number;
  durableSeconds: number;
}

export async function pipeline(url: string): Promise<PipelineTotals> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return {
    batches: value('svc_seal_batch_size_count'),
    seals: value('svc_seal_batch_size_sum'),
    commitSeconds: value('svc_seal_commit_duration_seconds_sum'),
    durableSeconds: value('svc_seal_durable_duration_seconds_sum'),
  };
}

/** What happened between two readings of the totals (one load's batches, seals and times). */
export function pipelineDelta(a: PipelineTotals, b: PipelineTotals): PipelineTotals {
  return { batches: b.batches - a.batches, seals: b.seals - a.seals, commitSeconds: b.commitSeconds - a.commitSeconds, durableSeconds: b.durableSeconds - a.durableSeconds };
}

export type SealingSite = 'sealing-thread' | 'request-thread' | 'postgres';

/** The pipeline during one load: how many seals shared a commit, and how long commit and fsync took. */
export function printPipeline(c: PipelineTotals, site: SealingSite = 'sealing-thread'): void {
  if (c.batches === 0) return;
  const ms = (seconds: number) => ((seconds * 1000) / c.batches).toFixed(2);
  const each = `${c.batches.toLocaleString('en-US')} batches, ${(c.seals / c.batches).toFixed(1)} seals each`;
  const times = {
    'sealing-thread': `commit ${ms(c.commitSeconds)} ms on the sealing thread, ${ms(c.durableSeconds)} ms until on disk (means)`,
    'request-thread': `commit ${ms(c.commitSeconds)} ms on the event loop, ${ms(c.durableSeconds)} ms until on disk (means)`,
    // On PostgreSQL the transaction is network round trips the event loop does not wait in,
    // and its COMMIT returns once the WAL is flushed: committed is durable.
    postgres: `${ms(c.commitSeconds)} ms from the batch's first statement until its commit is on disk (means)`,
  };
  line('  group commit', `${each}; ${times[site]}`);
}

/** The server's own request → response-finish times: what a client sees, less its own scheduling. */
function printServerLatency(l: ServerLatency): void {
  line('  of which inside the server', `p50 ${l.p50.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms, max ${l.max.toFixed(1)} ms (${l.n} requests)`);
}

export interface WrkOptions {
  /** wrk threads; each keeps connections/threads connections. Default: one, or one per url. */
  threads?: number;
  warmUpSeconds?: number;
  seconds?: number;
  /** Called between the warm-up and the measured run (to reset the server's own counters). */
  afterWarmUp?: () => void;
  name?: string;
}

/**
 * By default 2 s of warm-up, then 6 s measured, by wrk with `connections` keep-alive
 * connections. With several urls (companions on 127.0.0.1), wrk's threads take them in turn
 * (a thread's connections all go to one), so the load splits evenly across them.
 */
export function wrkLoad(urls: string[], connections: number, apiKeys: string | string[], body: Buffer, options: WrkOptions = {}): LoadResult {
  const { warmUpSeconds = 2, seconds = 6 } = options;
  const keys = typeof apiKeys === 'string' ? [apiKeys] : apiKeys;
  const threads = options.threads ?? Math.max(urls.length, keys.length);
  const script = path.join(os.tmpdir(), `svc-bench-wrk-${process.pid}.lua`);
  const targets = urls.map((u) => `{ "127.0.0.1", "${new URL(u).port}" }`).join(', ');
  fs.writeFileSync(
    script,
    `wrk.method = "POST"\nwrk.body = ${JSON.stringify(body.toString())}\n` +
      `wrk.headers["Content-Type"] = "application/json"\n` +
      `local targets = { ${targets} }\nlocal keys = { ${keys.map((k) => JSON.stringify(k)).join(', ')} }\nlocal threads = {}\n` +
      // The n-th thread (from 0) connects to targets[n % #targets] and sends keys[n % #keys];
      // init runs in the thread before wrk formats the request it then repeats.
      `function setup(thread)\n  local t = targets[#threads % #targets + 1]\n  thread.addr = wrk.lookup(t[1], t[2])[1]\n` +
      `  thread:set("key", keys[#threads % #keys + 1])\n  table.insert(threads, thread)\nend\n` +
      `function init(args) wrk.headers["X-Service-Key"] = key end\n` +
      // Count non-201 answers so a failing run cannot pass for a fast one. Each thread runs
      // its own Lua state, so done() (in the main state) sums the threads' counters.
      `errors = 0\nresponse = function(status) if status ~= 201 then errors = errors + 1 end end\n` +
      `done = function() local n = 0 for _, t in ipairs(threads) do n = n + t:get("errors") end io.write("non201 " .. n .. "\\n") end\n`,
  );
  const run = (s: number) =>
    execFileSync('wrk', [`-t${threads}`, `-c${connections}`, `-d${s}s`, '--latency', '-s', script, `${urls[0]}/v1/gate`], { encoding: 'utf8' });
  try {
    if (warmUpSeconds > 0) run(warmUpSeconds);
    options.afterWarmUp?.();
    const out = run(seconds);
    const ms = (label: string) => {
      const m = new RegExp(`${label}\\s+([\\d.]+)(us|ms|s)`).exec(out);
      if (!m) return NaN;
      const v = Number(m[1]);
      return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
    };
    return {
      name: options.name ?? `HTTP on loopback, ${connections} connections (wrk)`,
      rate: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN),
      p50: ms('50%'),
      p99: ms('99%'),
      errors: Number(/non201 (\d+)/.exec(out)?.[1] ?? NaN),
    };
  } finally {
    fs.rmSync(script, { force: true });
  }
}

export async function benchCompanionGate(): Promise<void> {
  section('Durable sealed gate decisions (POST /v1/gate, law pack, production tenant)');
  const floor = { ...floors(), noHttp: await gateWithoutHttp() };
  compare(floor.crypto, floor.cryptoInsert, floor.noHttp);
  await inProcess(floor);
  await pipelinedAgainstInline();
  await overHttp(floor);
}
