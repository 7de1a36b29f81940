// The files the compiled companion reads at run time that tsc does not emit. `npm run build`
// (scripts/build.mjs) copies or makes each of them in dist/; test/artifact/build-assets.test.ts
// scans the sources for every file they reach through import.meta.url and fails when one is
// neither emitted by tsc nor declared here, or is declared here and missing from dist/.
import fs from 'node:fs';
import path from 'node:path';

/** Copied from the sources to the same path under dist/, a file or a whole folder. */
export const COPIED_ASSETS = [
  {
    path: 'companion/migrations',
    readBy: 'companion/core/migrations.ts',
    what: 'the SQL migrations, and their PostgreSQL counterparts in postgres/ (companion/core/postgres/migrations.ts)',
  },
  {
    path: 'companion/exports/schemas',
    readBy: 'companion/exports/schema-profiles.ts',
    what: 'the pinned official JSON Schemas the export validation routes compile',
  },
  {
    path: 'companion/core/signers/aws-kms-worker.mjs',
    readBy: 'companion/core/signers/aws-kms.ts',
    what: "the AWS KMS client thread's entry, plain JavaScript started by URL beside its module",
  },
];

/** Made by the build itself (not copied), at this path under dist/. */
export const BUILT_ASSETS = [
  {
    path: 'console/index.html',
    readBy: 'companion/console/routes.ts',
    what: 'the tenant console, bundled by scripts/build-console.mjs into dist/console/',
  },
];

/**
 * Files the sources reach through import.meta.url only when they run from TypeScript (tsx):
 * the build takes another branch and never loads them.
 */
export const SOURCE_ONLY = [
  {
    path: 'companion/seal-thread/thread-from-source.mjs',
    readBy: 'companion/seal-thread/threaded-sealer.ts',
    why: 'loads thread.ts through tsx; built, the thread starts at the compiled thread.js',
  },
];

/**
 * Uses of import.meta.url other than `new URL('<relative path>', import.meta.url)` and
 * `createRequire(import.meta.url)`, which the scan cannot follow: each names what it reaches,
 * a path of this list's assets or none.
 */
export const OTHER_META_URL_USES = [
  { file: 'companion/core/version.ts', reaches: null, why: 'walks up to package.json, which sits above dist/ as above companion/' },
  { file: 'companion/console/routes.ts', reaches: 'console/index.html', why: 'dist/console beside dist/companion' },
  { file: 'companion/seal-thread/threaded-sealer.ts', reaches: null, why: 'tells the compiled module from its source by extension' },
  { file: 'companion/cli/verify.ts', reaches: null, why: 'is this module the process entry point' },
  { file: 'companion/cli/export.ts', reaches: null, why: 'is this module the process entry point' },
];

/** Every file of a copied asset, relative to the checkout, in a stable order. */
export function assetFiles(root, assetPath) {
  const full = path.join(root, assetPath);
  if (!fs.statSync(full).isDirectory()) return [assetPath];
  return fs
    .readdirSync(full, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
    .sort();
}

/** Copies every COPIED_ASSETS entry from the checkout at `root` into `outDir`. */
export function copyRuntimeAssets(root, outDir) {
  for (const asset of COPIED_ASSETS) {
    fs.cpSync(path.join(root, asset.path), path.join(outDir, asset.path), { recursive: true });
  }
}
