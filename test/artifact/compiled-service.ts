/**
 * The companion as users run it: `npm start` (package.json scripts.start: plain node on the build
 * in dist/, which the run's global setup made from the sources) on 127.0.0.1 with PORT=0 and a
 * fresh SVC_DATA_DIR. stop() sends SIGTERM, waits for the exit and removes the folder.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import type {} from '../helpers/build-global-setup.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';

/** Fails the calling test file when the run's build of dist/ failed (its output as the message). */
export function requireBuild(): void {
  const error = inject('distBuildError');
  if (error === undefined) throw new Error('dist/ is built by the global setup test/helpers/build-global-setup.ts, which this project does not run');
  if (error !== null) throw new Error(error);
}

export interface CompiledService {
  url: string;
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

export async function npmStart(env: Record<string, string> = {}): Promise<CompiledService> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-artifact-'));
  const child = spawn(npm, ['start', '--silent'], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', SVC_DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /action-gate companion listening on (http:\/\/127\.0\.0\.1:\d+) /.exec(out);
      if (m) resolve(m[1]!);
    });
    void exited.then((e) => reject(new Error(`npm start exited before listening (${JSON.stringify(e)}): ${err.slice(-2000)}`)));
  });
  const stop = async () => {
    // SIGTERM, not SIGKILL: npm forwards it to the server; a killed npm would orphan the server.
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const e = await exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
    return e;
  };
  try {
    return { url: await listening, child, stdout: () => out, stderr: () => err, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
