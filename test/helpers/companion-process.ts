/**
 * The companion as a real process from its sources: `node --import tsx companion/main.ts`
 * (`npm start` runs the same entry point compiled; test/companion/service.test.ts drives that)
 * on 127.0.0.1 with PORT=0 and a temporary SVC_DATA_DIR. Every process and folder made here is
 * removed by cleanupCompanions() (call it in afterEach).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { expect } from 'vitest';
import { makeTempDir } from '../companion/helpers.ts';
import { REPO_ROOT } from './vectors.ts';

export interface Companion {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  /** Resolves when the log (stdout) has a line matching `pattern`. */
  waitForLog(pattern: RegExp): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const dirs: string[] = [];
const children: ChildProcess[] = [];

export function cleanupCompanions(): void {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

export function tempDataDir(): string {
  const d = makeTempDir('svc-http-');
  dirs.push(d);
  return d;
}

export function launch(dataDir: string, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'companion/main.ts'], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', SVC_DATA_DIR: dataDir, SVC_SIGNUP_RATE_PER_MINUTE: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  const waiters: { pattern: RegExp; resolve: () => void; source: () => string }[] = [];
  const check = () => {
    for (const w of [...waiters]) if (w.pattern.test(w.source())) waiters.splice(waiters.indexOf(w), 1) && w.resolve();
  };
  child.stdout!.on('data', (d: Buffer) => ((out += d.toString()), check()));
  child.stderr!.on('data', (d: Buffer) => ((err += d.toString()), check()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const waitFor = (pattern: RegExp, source: () => string) =>
    new Promise<void>((resolve) => {
      waiters.push({ pattern, resolve, source });
      check();
    });
  return { child, exited, stdout: () => out, stderr: () => err, waitFor };
}

export async function start(dataDir: string, env: Record<string, string> = {}): Promise<Companion> {
  const p = launch(dataDir, env);
  const listening = /action-gate companion listening on (http:\/\/127\.0\.0\.1:\d+) \(data: (.+)\)\n/;
  const ready = p.waitFor(listening, p.stdout).then(() => 'ready' as const);
  const outcome = await Promise.race([ready, p.exited]);
  if (outcome !== 'ready') throw new Error(`companion exited early (${JSON.stringify(outcome)}): ${p.stderr()}`);
  const [, url, dir] = listening.exec(p.stdout())!;
  expect(dir).toBe(dataDir);
  return { child: p.child, url: url!, stdout: p.stdout, stderr: p.stderr, exited: p.exited, waitForLog: (re) => p.waitFor(re, p.stdout) };
}


/**
 * A POST /signup/checkout the server has accepted but not yet received the body of
 * (`Expect: 100-continue`): resolves once the server holds it, so a test can signal shutdown
 * while the request is in flight, then `finish()` sends the body and awaits the answer.
 */
export async function holdInFlightSignup(port: number, email: string): Promise<{ finish(): Promise<{ status: number; text: string }> }> {
  const body = JSON.stringify({ email });
  const req = http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/signup/checkout',
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' },
  });
  const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
  });
  await new Promise<void>((resolve) => req.on('continue', resolve));
  return {
    finish() {
      req.end(body);
      return response;
    },
  };
}

/**
 * Sends `n` gate decisions to the companion at `url`, `concurrency` at a time, and pushes the
 * action key of each one it acknowledged (201) onto `acknowledged` as it arrives, so a test can
 * act in the middle of the load. Any other answer fails the load, unless `killed()`: a process
 * killed mid-request answers nothing, and only what it acknowledged counts.
 */
export async function gateLoad(
  url: string,
  apiKey: string,
  body: unknown,
  options: { n: number; concurrency: number; acknowledged?: string[]; killed?: () => boolean },
): Promise<string[]> {
  const { n, concurrency, acknowledged = [], killed = () => false } = options;
  let next = 0;
  const one = async (): Promise<void> => {
    while (next < n && !killed()) {
      next++;
      try {
        const res = await fetch(`${url}/v1/gate`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-key': apiKey }, body: JSON.stringify(body) });
        const answer = (await res.json()) as { action_key?: string };
        if (res.status === 201 && answer.action_key) acknowledged.push(answer.action_key);
        else throw new Error(`gate answered ${res.status}: ${JSON.stringify(answer)}`);
      } catch (err) {
        if (killed()) return;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, one));
  return acknowledged;
}
