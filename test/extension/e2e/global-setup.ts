/**
 * Makes the extension's packages exactly as they ship, once before the end-to-end tests (`npm
 * test` stays the one command): `wxt zip` (Chrome) and `wxt zip -b firefox`, the two commands of
 * `npm run zip:extension`. Each zip is unpacked into a folder of its own, and the tests load
 * those folders, the files a user installs, not the .output/ build folders the zips are made
 * from. The folders' paths reach the tests through `inject('extensionPackages')`.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { REPO_ROOT } from '../../helpers/vectors.ts';
import type {} from './harness/packages.ts';
import { unzip } from './harness/unzip.ts';

const OUT = path.join(REPO_ROOT, '.output');

/** The zip `wxt zip` just wrote for `browser` ({name}-{version}-{browser}.zip, WXT's default). */
function newestZip(browser: string, since: number): string {
  const found = fs
    .readdirSync(OUT)
    .filter((f) => f.endsWith(`-${browser}.zip`))
    .map((f) => ({ file: path.join(OUT, f), mtime: fs.statSync(path.join(OUT, f)).mtimeMs }))
    .filter((z) => z.mtime >= since)
    .sort((a, b) => b.mtime - a.mtime);
  if (found.length === 0) throw new Error(`wxt zip wrote no *-${browser}.zip in ${OUT}`);
  return found[0]!.file;
}

export default function setup(project: TestProject): () => void {
  const wxt = path.join(REPO_ROOT, 'node_modules', '.bin', 'wxt');
  // Whole seconds: some file systems keep coarse modification times.
  const since = Math.floor(Date.now() / 1000) * 1000 - 1000;
  for (const args of [['zip'], ['zip', '-b', 'firefox']]) {
    try {
      execFileSync(wxt, args, { cwd: REPO_ROOT, stdio: 'pipe', encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    } catch (e) {
      const { stdout, stderr } = e as { stdout?: string; stderr?: string };
      throw new Error(`wxt ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`);
    }
  }
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ag-extension-packages-'));
  const unpack = (browser: 'chrome' | 'firefox') => {
    const zip = newestZip(browser, since);
    const dir = path.join(root, browser);
    return { zip, dir, files: unzip(zip, dir).sort() };
  };
  project.provide('extensionPackages', { chrome: unpack('chrome'), firefox: unpack('firefox') });
  return () => fs.rmSync(root, { recursive: true, force: true });
}
