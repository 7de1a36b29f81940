/**
 * CPU per durable gate decision, per thread of the companion process, in floor-A units (one
 * unit: the CPU of floor A's canonicalize + 3 SHA-256 + Ed25519 signature, measured in this
 * run): wrk at 50 connections against the companion as it runs by default (sealing thread on),
 * once with the same body every time and once with a fresh idempotency_key on every request;
 * then a 20 s steady window of each for the rate against floor A and p99 against p50.
 *
 * Per-thread CPU is read from /proc/<pid>/task/<tid>/stat (utime + stime, proc(5)) before and
 * after the measured run. The request thread is the process's main thread (tid = pid); every
 * other thread of the process is a worker thread or a helper of V8 or libuv, all named "node",
 * so the sealing thread is taken to be the busiest of them, and the rest (GC helpers, the
 * libuv pool running fdatasync, the checkpoint worker) are summed. wrk's own CPU is read too:
 * with the service's, it bounds the rate two cores can give at all (cores / units per decision).
 * Traffic goes to 127.0.0.1 only; the run is bounded in time.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hashApiKey } from '../companion/core/auth.ts';
import { loadConfig } from '../companion/core/config.ts';
import { createMemoryLogger } from '../companion/core/log.ts';
import { closeDeps, openSqliteDeps } from '../companion/deps.ts';
import { sealGate } from '../companion/gate/seal-gate.ts';
import type { GateBody } from '../companion/gate/seal-gate.ts';
import { getGatePack } from '../companion/packs/registry.ts';
import { currentOverlay } from '../companion/policy/overlay.ts';
import { GATE_BODY, seedProductionTenant } from './companion-gate.ts';
import { startCompanion, startListening } from './companion-process.ts';
import type { RunningCompanion } from './companion-process.ts';
import { floorAKey, floorAWork } from './floor-a.ts';
import { line, measure, section } from './harness.ts';

const CONNECTIONS = 50;
const SECONDS = 6;
/** Measured rounds per body, alternating; the median is reported. */
const ROUNDS = 3;
/** The window p50 and p99 are read over (the target: p99 ≤ 3× p50 over a 20 s steady window). */
const STEADY_SECONDS = 20;
const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU seconds of each thread of `pid` so far, by tid. */
function threadCpu(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.set(Number(tid), (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND);
  }
  return out;
}

/** Milliseconds of a wrk --latency percentile line ("99%  12.34ms"). */
function percentileMs(out: string, percent: number): number {
  const m = new RegExp(`\\s${percent}%\\s+([\\d.]+)(us|ms|s)\\b`).exec(out);
  if (!m) return NaN;
  return Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1);
}

/**
 * wrk with a fresh idempotency_key per request when `keyed`; answers per second, non-201 count,
 * and the median and 99th percentile latency (wrk --latency, over the whole run).
 */
function wrkRun(url: string, apiKey: string, keyed: boolean, seconds: number): { requests: number; errors: number; p50: number; p99: number; wrkCpu: number } {
  const script = path.join(os.tmpdir(), `svc-bench-cpu-${process.pid}.lua`);
  const body = JSON.stringify(GATE_BODY);
  const keyedRequest = keyed
    ? // The body's last "}" is replaced by the key member; each run has its own prefix.
      `local prefix = ${JSON.stringify(body.slice(0, -1) + ',"idempotency_key":"bench-' + Date.now().toString(36) + '-')}\n` +
      `local n = 0\nrequest = function() n = n + 1 return wrk.format(nil, nil, nil, prefix .. n .. '"}') end\n`
    : '';
  fs.writeFileSync(
    script,
    `wrk.method = "POST"\nwrk.body = ${JSON.stringify(body)}\nwrk.headers["Content-Type"] = "application/json"\n` +
      `wrk.headers["X-Service-Key"] = ${JSON.stringify(apiKey)}\n${keyedRequest}` +
      `done = function(summary) io.write("requests " .. summary.requests .. "\\n") end\n`,
  );
  try {
    // wrk runs under a shell that prints its own /proc stat after wrk exits: cutime and cstime
    // (fields 16 and 17, proc(5)) are then wrk's CPU, which the two cores also had to give.
    const out = execFileSync(
      'sh',
      ['-c', 'wrk "$@" && cat /proc/$$/stat', 'sh', '-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', '-s', script, `${url}/v1/gate`],
      { encoding: 'utf8' },
    );
    const requests = Number(/requests (\d+)/.exec(out)?.[1] ?? NaN);
    const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
    const stat = out.slice(out.lastIndexOf(')') + 2).trim().split(' ');
    const wrkCpu = (Number(stat[13]) + Number(stat[14])) / TICKS_PER_SECOND;
    return { requests, errors: non2xx, p50: percentileMs(out, 50), p99: percentileMs(out, 99), wrkCpu };
  } finally {
    fs.rmSync(script, { force: true });
  }
}

/**
 * Floor A's CPU per operation, measured as CPU time (process.cpuUsage) rather than wall time,
 * so that a machine busy with other work does not inflate the unit: the median of 5 rounds.
 */
function floorACpuSeconds(work: () => unknown): number {
  const rounds: number[] = [];
  for (let r = 0; r < 5; r++) {
    const before = process.cpuUsage();
    let n = 0;
    const end = performance.now() + 300;
    while (performance.now() < end) for (let k = 0; k < 20; k++, n++) work();
    const used = process.cpuUsage(before);
    rounds.push((used.user + used.system) / 1e6 / n);
  }
  return rounds.sort((a, b) => a - b)[2]!;
}

interface CpuShares {
  rate: number;
  request: number;
  sealing: number;
  others: number;
  /** The load generator's CPU per request: the cores it takes are not the service's. */
  loadGenerator: number;
  errors: number;
}

function measureCpu(companion: RunningCompanion, apiKey: string, keyed: boolean): CpuShares {
  wrkRun(companion.url, apiKey, keyed, 2); // warm-up
  const before = threadCpu(companion.pid);
  const start = performance.now();
  const { requests, errors, wrkCpu } = wrkRun(companion.url, apiKey, keyed, SECONDS);
  const elapsed = (performance.now() - start) / 1000;
  const after = threadCpu(companion.pid);
  const deltas = [...after].map(([tid, s]) => ({ tid, s: s - (before.get(tid) ?? 0) }));
  const main = deltas.find((d) => d.tid === companion.pid)?.s ?? 0;
  const rest = deltas.filter((d) => d.tid !== companion.pid).sort((a, b) => b.s - a.s);
  const sealing = rest[0]?.s ?? 0;
  const others = rest.slice(1).reduce((a, d) => a + d.s, 0);
  return { rate: requests / elapsed, request: main / requests, sealing: sealing / requests, others: others / requests, loadGenerator: wrkCpu / requests, errors };
}

/**
 * The decision and its durable seal without HTTP, on one thread (SVC_SEAL_THREAD=0), in rounds
 * of `BATCH` seals at once (one group commit each): the process's CPU per seal. Less at the
 * mercy of a busy machine than the HTTP figure, whose batches shrink when the cores are shared.
 */
const BATCH = 25;
async function sealCpuWithoutHttp(keyed: boolean): Promise<number> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-cpu-seal-'));
  const apiKey = await seedProductionTenant(dataDir);
  const deps = await openSqliteDeps(loadConfig({ SVC_DATA_DIR: dataDir, SVC_SEAL_THREAD: '0' }, []), { log: createMemoryLogger() });
  try {
    const key = (await deps.store.tenants.findActiveApiKeyByHash(hashApiKey(apiKey)))!;
    const auth = { tenantId: key.tenantId, tenantKind: key.tenantKind, keyId: key.keyId };
    const pack = getGatePack('law')!;
    const overlay = await currentOverlay(deps.store, key.tenantId, 'law');
    let n = 0;
    const body = (): GateBody => ({ ...GATE_BODY, ...(keyed ? { idempotency_key: `bench-${n++}` } : {}) });
    const round = () => Promise.all(Array.from({ length: BATCH }, () => sealGate(deps, auth, pack, body(), overlay)));
    for (let i = 0; i < 40; i++) await round(); // warm-up
    const rounds: number[] = [];
    for (let r = 0; r < 5; r++) {
      const before = process.cpuUsage();
      for (let i = 0; i < 40; i++) await round();
      const used = process.cpuUsage(before);
      rounds.push((used.user + used.system) / 1e6 / (40 * BATCH));
    }
    return rounds.sort((a, b) => a - b)[2]!;
  } finally {
    await closeDeps(deps);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * CPU per request of a bare node:http server (bench/http-ceiling-server.ts --bare) under the
 * same wrk load: it parses the body and answers 201 with a gate answer's size in bytes.
 */
async function bareHttpCpuSeconds(): Promise<number> {
  const server = await startListening(['--max-semi-space-size=8', '--import', 'tsx', 'bench/http-ceiling-server.ts', '1', '--bare', '4300']);
  try {
    wrkRun(server.url, 'none', false, 2); // warm-up
    const cpu = () => threadCpu(server.child.pid!).get(server.child.pid!) ?? 0;
    const before = cpu();
    const { requests } = wrkRun(server.url, 'none', false, SECONDS);
    return (cpu() - before) / requests;
  } finally {
    await server.stop();
  }
}

export async function benchGateCpu(): Promise<void> {
  section('CPU per durable decision, per thread, in floor-A units (POST /v1/gate, wrk, 50 connections)');
  if (process.platform !== 'linux') return line('per-thread CPU', 'needs /proc (Linux): skipped');
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
  } catch (err) {
    // wrk --version exits 1 after printing its version; only a missing binary is a skip.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return line('wrk', 'not installed (apt-get install wrk): skipped');
  }
  const key = floorAKey();
  let i = 0;
  const work = () => floorAWork({ ...GATE_BODY, seq: i++, recorded_at: new Date().toISOString() }, key);
  const floorA = measure('floor A', work);
  const unitSeconds = floorACpuSeconds(work);
  line('floor A (one unit)', `${(unitSeconds * 1e6).toFixed(1)} µs of CPU (${Math.round(floorA.opsPerSec).toLocaleString('en-US')}/s on one thread)`);
  for (const keyed of [false, true]) {
    const seconds = await sealCpuWithoutHttp(keyed);
    line(
      `decision and durable seal without HTTP, ${BATCH} a batch, on one thread, ${keyed ? 'with' : 'without'} an idempotency_key`,
      `${(seconds / unitSeconds).toFixed(2)} units per decision (${(seconds * 1e6).toFixed(0)} µs of the process's CPU)`,
    );
  }
  line('node:http alone, the gate\'s request with a 4.3 KB answer, nothing done', `${((await bareHttpCpuSeconds()) / unitSeconds).toFixed(2)} units per request: the part of the request thread no change to the gate removes`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-cpu-'));
  const apiKey = await seedProductionTenant(dataDir);
  const companion = await startCompanion(dataDir, {}, { latencyProbe: false });
  try {
    // Rounds alternate between the two bodies, so a phase of a busy machine falls on both;
    // each figure is the round with the median total CPU.
    const runs = new Map<boolean, CpuShares[]>([[false, []], [true, []]]);
    for (let round = 0; round < ROUNDS; round++) for (const keyed of [false, true]) runs.get(keyed)!.push(measureCpu(companion, apiKey, keyed));
    for (const [keyed, rounds] of runs) {
      const total = (r: CpuShares) => r.request + r.sealing + r.others;
      const r = rounds.sort((a, b) => total(a) - total(b))[Math.floor(rounds.length / 2)]!;
      const u = (s: number) => (s / unitSeconds).toFixed(2);
      line(
        keyed ? 'with a fresh idempotency_key per request' : 'without an idempotency_key',
        `${u(total(r))} units per decision [rounds: ${rounds.map((x) => u(total(x))).join(', ')}]: request thread ${u(r.request)}, sealing thread ${u(r.sealing)}, other threads ${u(r.others)}` +
          ` (${Math.round(r.rate).toLocaleString('en-US')} decisions/s, ${(r.rate / floorA.opsPerSec).toFixed(2)}x floor A's rate${r.errors ? `, ${r.errors} non-201 answers` : ''})`,
      );
      // The most any rate can be at this CPU: every core busy with the service or the load
      // generator, none idle. Floor A's rate is one thread's, so this bound in floor-A rates
      // is cores / (service units + load generator units).
      const units = (total(r) + r.loadGenerator) / unitSeconds;
      line(
        `  the rate this CPU allows on ${os.availableParallelism()} cores`,
        `load generator ${u(r.loadGenerator)} units per request; at most ${(os.availableParallelism() / units).toFixed(2)}x floor A's rate with no core ever idle`,
      );
    }
    // issue targets: rate at 50 connections against floor A's, and p99 against p50 over a
    // steady window (after the runs above warmed the process and its caches).
    for (const keyed of [false, true]) {
      const w = wrkRun(companion.url, apiKey, keyed, STEADY_SECONDS);
      line(
        `${STEADY_SECONDS} s steady window, ${CONNECTIONS} connections, ${keyed ? 'with' : 'without'} an idempotency_key`,
        `${Math.round(w.requests / STEADY_SECONDS).toLocaleString('en-US')} decisions/s (${(w.requests / STEADY_SECONDS / floorA.opsPerSec).toFixed(2)}x floor A's rate), ` +
          `p50 ${w.p50.toFixed(1)} ms, p99 ${w.p99.toFixed(1)} ms (p99/p50 ${(w.p99 / w.p50).toFixed(2)})${w.errors ? `, ${w.errors} non-201 answers` : ''}`,
      );
    }
  } finally {
    await companion.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
