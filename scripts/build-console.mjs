// The tenant console (console/) bundled into static files the companion serves at /console:
// one script and one style sheet, named by a hash of their content so they can be cached for
// good, and index.html pointing at them. No source maps, no inline script or style: the
// console's Content-Security-Policy allows neither (companion/console/routes.ts).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export async function buildConsole(outDir = path.join(ROOT, 'dist', 'console')) {
  const { build } = await import('esbuild');
  fs.rmSync(outDir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { console: 'console/src/main.tsx' },
    bundle: true,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    legalComments: 'none',
    outdir: outDir,
    entryNames: '[name]-[hash]',
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((f) => path.basename(f));
  const script = outputs.find((f) => f.endsWith('.js'));
  const style = outputs.find((f) => f.endsWith('.css'));
  if (!script || !style) throw new Error(`console build produced ${outputs.join(', ')}`);
  const template = fs.readFileSync(path.join(ROOT, 'console', 'index.html'), 'utf8');
  const tags = `<link rel="stylesheet" href="/console/${style}" />\n    <script type="module" src="/console/${script}"></script>`;
  fs.writeFileSync(path.join(outDir, 'index.html'), template.replace('<!-- assets -->', tags));
  return outDir;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildConsole(process.argv[2]);
