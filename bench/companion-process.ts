/**
 * The companion as benchmarks run it: a real process (`node --import tsx companion/main.ts`)
 * on 127.0.0.1 with a free port and the given data directory.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

const REPO_ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

export interface RunningCompanion {
  url: string;
  /** SIGTERM, then resolves once the process has exited (graceful shutdown). */
  stop(): Promise<void>;
}

export async function startCompanion(dataDir: string): Promise<RunningCompanion> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'companion/main.ts'], {
    cwd: REPO_ROOT,
    env: { ...process.env, SVC_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('companion did not start within 30 s')), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`companion exited with ${code}`)));
  });
  return {
    url,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}
