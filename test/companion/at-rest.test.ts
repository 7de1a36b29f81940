/**
 * Files at rest, as `npm start` leaves them: the data directory 0700 and the database files
 * (companion.db and SQLite's -wal and -shm beside it) 0600, whoever made them first; a data
 * directory the service cannot make private (another user's) refuses the start with exit 2 and
 * one line.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startNodeFlags } from '../../scripts/start-command.mjs';
import { requireBuild } from '../artifact/compiled-service.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';
import { makeTempDir } from './helpers.ts';

beforeAll(requireBuild);

const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await exited;
  }
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** The build in dist/ as `npm start` runs it (plain node), optionally as another user. */
function run(dataDir: string, as?: { uid: number; gid: number }) {
  const child = spawn(process.execPath, [...startNodeFlags(), 'dist/companion/main.js'], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', SVC_DATA_DIR: dataDir, SVC_SIGNUP_RATE_PER_MINUTE: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(as ?? {}),
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', () => {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    void exited.then((code) => reject(new Error(`exited early (${code}): ${err}`)));
  });
  listening.catch(() => undefined);
  return { child, exited, listening, stderr: () => err };
}

const modeOf = (p: string) => fs.statSync(p).mode & 0o777;

describe('files at rest', () => {
  it('makes a pre-existing 0755 data directory 0700 and the database files 0600', async () => {
    const parent = makeTempDir('svc-at-rest-');
    dirs.push(parent);
    const dataDir = path.join(parent, 'data');
    fs.mkdirSync(dataDir, { mode: 0o755 });
    fs.chmodSync(dataDir, 0o755);
    const svc = run(dataDir);
    const url = await svc.listening;
    // A write goes through the WAL, so -wal and -shm exist while the service runs.
    expect((await fetch(`${url}/signup/checkout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email":"at-rest@example.com"}' })).status).toBe(201);
    expect(modeOf(dataDir)).toBe(0o700);
    for (const f of ['companion.db', 'companion.db-wal', 'companion.db-shm']) expect(modeOf(path.join(dataDir, f)), f).toBe(0o600);
  });

  it('makes database files a copy left world-readable 0600 again', async () => {
    const dataDir = makeTempDir('svc-at-rest-');
    dirs.push(dataDir);
    const first = run(dataDir);
    await first.listening;
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    fs.chmodSync(path.join(dataDir, 'companion.db'), 0o644);
    const second = run(dataDir);
    await second.listening;
    for (const f of ['companion.db', 'companion.db-wal', 'companion.db-shm']) expect(modeOf(path.join(dataDir, f)), f).toBe(0o600);
  });

  it('refuses to start, exit 2 and one line, when the data directory cannot be made private', async () => {
    // As root the service can chmod any directory, so it runs as another user here (nobody)
    // against a root-owned one; run unprivileged, a directory owned by root stands in.
    const parent = makeTempDir('svc-at-rest-');
    dirs.push(parent);
    const root = process.getuid?.() === 0;
    let dataDir = path.join(parent, 'data');
    if (root) {
      fs.chmodSync(parent, 0o755);
      fs.mkdirSync(dataDir, { mode: 0o755 });
      fs.chmodSync(dataDir, 0o755);
    } else {
      dataDir = '/usr/share';
    }
    const svc = run(dataDir, root ? { uid: 65534, gid: 65534 } : undefined);
    expect(await svc.exited).toBe(2);
    const lines = svc.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/the data directory .* cannot be made 0700 \(EPERM; it belongs to uid \d+, the service runs as uid \d+\)/);
    expect(modeOf(dataDir)).toBe(0o755);
  });
});
