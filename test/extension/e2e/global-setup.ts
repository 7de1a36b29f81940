/**
 * Builds the extension once before the end-to-end tests (`npm test` stays the one command):
 * .output/chrome-mv3 for the Chromium tests and .output/firefox-mv3 to check the Firefox build
 * from the same code. `wxt build` takes about a second each.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../../helpers/vectors.ts';

export default function setup(): void {
  const wxt = path.join(REPO_ROOT, 'node_modules', '.bin', 'wxt');
  for (const args of [['build'], ['build', '-b', 'firefox']]) {
    try {
      execFileSync(wxt, args, { cwd: REPO_ROOT, stdio: 'pipe', encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    } catch (e) {
      const { stdout, stderr } = e as { stdout?: string; stderr?: string };
      throw new Error(`wxt ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`);
    }
  }
}
