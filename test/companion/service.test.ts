/**
 * The companion as an admin runs it: `npm start` (plain node on the build in dist/), its
 * --help and --version, SIGTERM sent to the pid `npm start` returns, and the README's curl
 * session run word for word against it.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startNodeFlags } from '../../scripts/start-command.mjs';
import { SETTINGS } from '../../companion/core/config.ts';
import { cleanupCompanions, holdInFlightSignup, tempDataDir } from '../helpers/companion-process.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';
import { requireBuild } from '../artifact/compiled-service.ts';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const children: ChildProcess[] = [];

// The tests below exercise the build in dist/ (what `npm install` makes through prepare), not the
// sources: the main project's global setup (test/helpers/build-global-setup.ts) made it from them.
beforeAll(requireBuild);

afterEach(async () => {
  // SIGTERM, not SIGKILL: npm forwards it to the server; a killed npm would orphan the server.
  for (const c of children.splice(0)) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    const exited = new Promise((resolve) => c.once('exit', resolve));
    c.kill('SIGTERM');
    await exited;
  }
  cleanupCompanions();
});

function npmStart(dataDir: string, args: string[] = []) {
  const child = spawn(npm, ['start', '--silent', '--', ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', SVC_DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const url = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', () => {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    void exited.then((e) => reject(new Error(`npm start exited early: ${JSON.stringify(e)}`)));
  });
  return { child, url, exited, stdout: () => out };
}

/**
 * Whether the tree's .gitignore ignores `file`, as git decides it: asked in a scratch repository
 * holding only that file, so the answer is the same in a checkout and in a copy of the tree
 * without .git (an unpacked release), where `git check-ignore` in the tree fails with "not a git
 * repository". No global or system git configuration takes part.
 */
function treeIgnores(file: string): boolean {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-ignore-'));
  try {
    const env = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
    const init = spawnSync('git', ['init', '-q', dir], { env, encoding: 'utf8' });
    if (init.status !== 0) throw new Error(`git init failed: ${init.error?.message ?? init.stderr}`);
    fs.copyFileSync(path.join(REPO_ROOT, '.gitignore'), path.join(dir, '.gitignore'));
    const check = spawnSync('git', ['check-ignore', '-q', file], { cwd: dir, env, encoding: 'utf8' });
    // 0: ignored; 1: not ignored; anything else is git failing to answer.
    if (check.status !== 0 && check.status !== 1) throw new Error(`git check-ignore failed: ${check.stderr}`);
    return check.status === 0;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('npm start', () => {
  it('--help lists every setting with its variable, flag and default; --version prints the version; both exit 0', () => {
    const help = spawnSync(npm, ['start', '--silent', '--', '--help'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(help.status).toBe(0);
    for (const s of SETTINGS) {
      const line = help.stdout.split('\n').find((l) => l.trimStart().startsWith(`${s.env} `));
      expect(line, s.env).toBeDefined();
      expect(line).toContain('flag' in s ? `--${s.flag}` : '(env only)');
      expect(line).toContain(s.defaultText);
    }
    const version = spawnSync(npm, ['start', '--silent', '--', '--version'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(version.status).toBe(0);
    expect(version.stdout).toMatch(/^action-gate companion \d+\.\d+\.\d+ \(interface \d+\.\d+\.\d+\)\n$/);
  });

  it('runs plain node on the build, and SIGTERM to its pid answers the in-flight request, then stops the server', async () => {
    const svc = npmStart(tempDataDir());
    const url = await svc.url;
    const { port } = new URL(url);
    // No TypeScript loader on the start path: the process npm starts is node on dist/.
    const ps = spawnSync('ps', ['-o', 'args=', '--ppid', String(svc.child.pid)], { encoding: 'utf8' });
    expect(ps.stdout.trim()).toBe(['node', ...startNodeFlags(), 'dist/companion/main.js'].join(' '));

    // The banner names the next steps, the tenant console among them, and the console answers.
    expect(svc.stdout()).toContain(`${url}/console`);
    expect((await fetch(`${url}/console`)).status).toBe(200);

    const held = await holdInFlightSignup(Number(port), 'inflight-npm@example.com');

    svc.child.kill('SIGTERM');
    await expect.poll(() => svc.stdout()).toMatch(/"message":"shutting down","signal":"SIGTERM"/);
    const done = await held.finish();
    expect(done.status).toBe(201);

    expect(await svc.exited).toEqual({ code: 0, signal: null });
    expect(svc.stdout()).toMatch(/"message":"stopped"/);
    // Nothing is left answering on the port.
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});

describe('the svc-verify bin', () => {
  it('runs with plain node on the build', () => {
    const r = spawnSync(process.execPath, ['companion/cli/svc-verify.mjs', '--version'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^svc-verify \d+\.\d+\.\d+\n$/);
  });
});

describe('the README', () => {
  it('documents every setting in its configuration table, marking the reserved ones', () => {
    const readme = fs.readFileSync(`${REPO_ROOT}/README.md`, 'utf8');
    for (const s of SETTINGS) {
      const row = readme.split('\n').find((l) => l.startsWith(`| \`${s.env}\``));
      expect(row, s.env).toBeDefined();
      expect(row).toContain('flag' in s ? `(\`--${s.flag}\`)` : '(env only)');
      expect(row!.includes('reserved, read by nothing yet')).toBe('reserved' in s);
    }
  });

  it('reaches the companion in every example through $BASE: the only address in a code block is its default', () => {
    const readme = fs.readFileSync(`${REPO_ROOT}/README.md`, 'utf8');
    const code = [...readme.matchAll(/^```[a-z ]*\n([\s\S]*?)^```/gm)].flatMap((m) => m[1]!.split('\n'));
    // Besides `BASE=${BASE:-…}` lines: comments naming the default port, and the container's port mapping.
    const hardCoded = code.filter((l) => /:8787\b/.test(l.split(' # ')[0]!) && !l.startsWith('BASE=${BASE:-http://127.0.0.1:8787}') && !/-p 127\.0\.0\.1:8787:8787/.test(l));
    expect(hardCoded).toEqual([]);
    const session = readme.indexOf('```sh session\n');
    expect(readme.slice(session).split('\n')[1]).toMatch(/^BASE=\$\{BASE:-http:\/\/127\.0\.0\.1:8787\}/);
  });

  it("runs its curl session, as written, against a companion started with npm start", async () => {
    const readme = fs.readFileSync(`${REPO_ROOT}/README.md`, 'utf8');
    const blocks = [...readme.matchAll(/```sh session\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    const svc = npmStart(tempDataDir());
    const url = await svc.url;
    // This companion has a free port, not the default: the session reaches it through BASE
    // alone, as a reader's shell would, with not a word of the text changed.
    const script = blocks.join('\n');
    const run = spawnSync('bash', ['-euo', 'pipefail', '-c', script], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 120_000, env: { ...process.env, BASE: url } });
    expect(run.status, `${run.stdout.slice(-1500)}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toContain('"decision": "needs_review"');
    expect(run.stdout).toContain('RESULT: VERIFIED as SANDBOX evidence');
    expect(run.stdout).toContain('"review_status": "approved"');
    expect(run.stdout).toMatch(/^svc_http_requests_total\{method="POST",route="\/v1\/gate",status="201"\} 1$/m);
    // Whatever the session writes stays out of git.
    expect(treeIgnores('.session/gate.json')).toBe(true);
    svc.child.kill('SIGTERM');
    expect((await svc.exited).code).toBe(0);
  });
});
