/**
 * The sealing thread's entry (companion/seal-thread/thread.ts) bundled with esbuild from the
 * sources as they are now, for test runs that start many sealing threads. From source each
 * thread loads every module through tsx (thread-from-source.mjs), which took 1.6–3 s a thread
 * here; the bundle is one plain module that starts in a fraction of that. It is the same code:
 * no module is replaced, and packages (better-sqlite3, the drivers) stay the installed ones.
 *
 * A bundle puts every module in one file, so `import.meta.url` would name the bundle rather
 * than the module: each module's `import.meta.url` is replaced by its own source file's URL,
 * so the files a module reads beside itself (the SQL migrations, schemas) resolve as they do
 * from source.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import type { Plugin } from 'esbuild';
import { REPO_ROOT } from './vectors.ts';

const THREAD_SOURCE = path.join(REPO_ROOT, 'companion', 'seal-thread', 'thread.ts');

/** Each module's `import.meta.url` stays its source file's URL (see the module comment). */
const sourceLocations: Plugin = {
  name: 'source-locations',
  setup(b) {
    b.onLoad({ filter: /\.(ts|mjs|js)$/ }, async (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const text = await fs.promises.readFile(args.path, 'utf8');
      return { contents: text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)), loader: args.path.endsWith('.ts') ? 'ts' : 'js' };
    });
  },
};

/**
 * Writes the bundle into a new folder under node_modules/.cache (inside the repository, so its
 * package imports resolve to the installed packages) and returns its file URL and that folder.
 */
export async function buildSealThreadBundle(): Promise<{ entry: string; dir: string }> {
  const cache = path.join(REPO_ROOT, 'node_modules', '.cache');
  fs.mkdirSync(cache, { recursive: true });
  const dir = fs.mkdtempSync(path.join(cache, 'seal-thread-'));
  const outfile = path.join(dir, 'thread.mjs');
  try {
    await build({
      entryPoints: [THREAD_SOURCE],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      sourcemap: 'inline',
      logLevel: 'warning',
      plugins: [sourceLocations],
    });
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return { entry: pathToFileURL(outfile).href, dir };
}
