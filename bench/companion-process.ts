/**
 * The companion as benchmarks run it: a real process running what `npm start` runs (dist/)
 * on 127.0.0.1 with a free port and the given data directory, with server-latency-probe.mjs
 * loaded so the server's own view of request latency can be read; and other benchmark servers
 * started the same way (startListening).
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';

const REPO_ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

export interface ServerLatency {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

export interface RunningCompanion {
  url: string;
  /** The server's process id, for reading its threads' CPU time from /proc. */
  pid: number;
  /** Percentiles of request → response-finish times on the server since the last call. */
  serverLatency(): Promise<ServerLatency>;
  /** SIGTERM, then resolves once the process has exited (graceful shutdown). */
  stop(): Promise<void>;
}

/** A benchmark server in a child process, once it has printed `listening on <url>`. */
export interface ListeningProcess {
  url: string;
  child: ChildProcess;
  /** SIGTERM, then resolves once the process has exited (graceful shutdown). */
  stop(): Promise<void>;
}

/**
 * Runs `node <args>` from the repository's root and waits for its `listening on` line.
 *
 * The child's stdout (the service's log, a line per request) goes to a file, not a pipe. The
 * benchmarks wait for wrk synchronously and read no pipe meanwhile, and Node keeps in the
 * writer's memory whatever a full pipe does not take: the service measured would carry every
 * log line of a run on its heap (measured under wrk: 3.3 MB in 14,000 lines after 10 s, growing
 * all run), as no deployment whose log collector keeps up does. A file takes each line at once.
 */
export async function startListening(args: string[], env: Record<string, string> = {}): Promise<ListeningProcess> {
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-log-'));
  const logFile = path.join(logDir, 'stdout.log');
  const stdout = fs.openSync(logFile, 'w');
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', stdout, 'pipe'] });
  fs.closeSync(stdout);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const deadline = Date.now() + 30_000;
    const settle = (done: () => void) => {
      clearInterval(poll);
      child.off('exit', exitedFirst);
      done();
    };
    // Before it listened: its last log lines say why.
    const exitedFirst = (code: number | null) =>
      settle(() => reject(new Error(`${args.join(' ')} exited with ${code}: ${fs.readFileSync(logFile, 'utf8').slice(-2000)}`)));
    const poll = setInterval(() => {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(fs.readFileSync(logFile, 'utf8'));
      if (m) settle(() => resolve(m[1]!));
      else if (Date.now() > deadline) settle(() => reject(new Error(`${args.at(-1)} did not start within 30 s`)));
    }, 50);
    child.once('exit', exitedFirst);
  });
  return {
    url,
    child,
    stop: () => {
      child.kill('SIGTERM');
      return exited.then(() => fs.rmSync(logDir, { recursive: true, force: true }));
    },
  };
}

/** The node flags of `npm start` (package.json), so benchmarks measure the service as it runs. */
const START_FLAGS = ((JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.match(/--[\w-]+(?:=\S+)?/g) ?? []);

/**
 * The compiled service (dist/, rebuilt first if its sources changed), with `npm start`'s node
 * flags. `env` adds to or overrides the process's environment, e.g. SVC_DATABASE_URL for PostgreSQL.
 * `latencyProbe: false` leaves out the server-side latency probe (./server-latency-probe.mjs),
 * whose listeners would otherwise count in a measurement of the service's own CPU per request.
 */
export async function startCompanion(dataDir: string, env: Record<string, string> = {}, { latencyProbe = true } = {}): Promise<RunningCompanion> {
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-changed'], { cwd: REPO_ROOT, stdio: 'ignore' });
  const probe = latencyProbe ? ['--import', path.join(REPO_ROOT, 'bench', 'server-latency-probe.mjs')] : [];
  const { url, child, stop } = await startListening([...START_FLAGS, ...probe, 'dist/companion/main.js'], { SVC_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ...env });
  const latencyWaiters: ((l: ServerLatency) => void)[] = [];
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
    let m: RegExpExecArray | null;
    while ((m = /server-latency (\{.*\})\n/.exec(err))) {
      err = err.slice(m.index + m[0].length);
      latencyWaiters.shift()?.(JSON.parse(m[1]!) as ServerLatency);
    }
  });
  return {
    url,
    pid: child.pid!,
    serverLatency: () =>
      latencyProbe
        ? new Promise<ServerLatency>((resolve) => {
            latencyWaiters.push(resolve);
            child.kill('SIGUSR2');
          })
        : Promise.reject(new Error('started without the latency probe')),
    stop,
  };
}
