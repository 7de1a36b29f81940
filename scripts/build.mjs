// `npm run build`: the companion and shared/ compiled to dist/ (tsconfig.build.json), plus every
// file the compiled code reads at run time beside it (scripts/runtime-assets.mjs: the SQL
// migrations, the export schemas, a worker entry, the tenant console).
//
// The build is made in a folder beside dist/ and swapped in when complete, so a process reading
// dist/ meanwhile (a running service, another test run in the same checkout) never sees it half
// written. dist/.build-inputs.sha256 records the digest of what it was built from;
// `--if-changed` rebuilds only when that digest differs from the checkout's (the test runs'
// global setup: once per run at most, and not at all when `npm ci`'s prepare already built it).
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { copyRuntimeAssets } from './runtime-assets.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
const STAMP = '.build-inputs.sha256';

/** What the build reads: a change to any of these makes a different dist/. */
const INPUTS = ['companion', 'shared', 'console', 'scripts/build.mjs', 'scripts/build-console.mjs', 'scripts/runtime-assets.mjs', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];

export function inputsDigest() {
  const hash = createHash('sha256');
  const files = [];
  for (const input of INPUTS) {
    const full = path.join(ROOT, input);
    if (!fs.existsSync(full)) continue;
    if (!fs.statSync(full).isDirectory()) files.push(input);
    else {
      for (const e of fs.readdirSync(full, { recursive: true, withFileTypes: true })) {
        if (!e.isFile()) continue;
        const rel = path.relative(ROOT, path.join(e.parentPath, e.name)).split(path.sep).join('/');
        if (!rel.split('/').includes('node_modules')) files.push(rel);
      }
    }
  }
  for (const rel of files.sort()) {
    hash.update(`${rel}\0`);
    hash.update(createHash('sha256').update(fs.readFileSync(path.join(ROOT, rel))).digest());
  }
  return hash.digest('hex');
}

function builtDigest() {
  try {
    return fs.readFileSync(path.join(DIST, STAMP), 'utf8').trim();
  } catch {
    return undefined;
  }
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** Folders left by a build that died before its swap. */
function removeAbandoned() {
  for (const name of fs.readdirSync(ROOT)) {
    const m = /^\.dist-(?:build|old)-(\d+)$/.exec(name);
    if (m && !pidAlive(Number(m[1]))) fs.rmSync(path.join(ROOT, name), { recursive: true, force: true });
  }
}

/** Puts the finished build at dist/; another build swapping at the same moment is waited out. */
function swapIn(staging) {
  const old = path.join(ROOT, `.dist-old-${process.pid}`);
  for (let attempt = 0; ; attempt++) {
    try {
      fs.renameSync(DIST, old);
    } catch (err) {
      if (err.code !== 'ENOENT') throw err;
    }
    try {
      fs.renameSync(staging, DIST);
      break;
    } catch (err) {
      if ((err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') || attempt > 50) throw err;
    }
  }
  fs.rmSync(old, { recursive: true, force: true });
}

export async function build() {
  removeAbandoned();
  const digest = inputsDigest();
  // Same depth as dist/, so the relative paths in the source maps stay true after the swap.
  const staging = path.join(ROOT, `.dist-build-${process.pid}`);
  fs.rmSync(staging, { recursive: true, force: true });
  try {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    execFileSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json'), '--outDir', staging], { cwd: ROOT, stdio: 'inherit' });
    copyRuntimeAssets(ROOT, staging);
    // The tenant console's static files (dist/console), served by the companion at /console.
    const { buildConsole } = await import('./build-console.mjs');
    await buildConsole(path.join(staging, 'console'));
    fs.writeFileSync(path.join(staging, STAMP), `${digest}\n`);
    swapIn(staging);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * One `--if-changed` build at a time in this checkout: test runs started together (several
 * people, one checkout) wait for the first one's build, then find dist/ up to date.
 */
async function withBuildLock(fn) {
  const lock = path.join(ROOT, 'node_modules', '.cache', 'action-gate-build.lock');
  const owner = path.join(lock, 'pid');
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(owner, String(process.pid));
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      let holder;
      try {
        holder = Number(fs.readFileSync(owner, 'utf8'));
      } catch {
        // Between its mkdir and its write, or left by a process that died right there.
        holder = Date.now() - fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs > 10_000 ? 0 : undefined;
      }
      if (holder !== undefined && !(holder > 0 && pidAlive(holder))) fs.rmSync(lock, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--if-changed')) {
    // Checked before the lock too: an up-to-date dist/ waits for nobody's build.
    if (builtDigest() === inputsDigest()) console.log('dist/ is up to date with the sources');
    else await withBuildLock(async () => {
      if (builtDigest() === inputsDigest()) console.log('dist/ is up to date with the sources');
      else {
        await build();
        console.log('dist/ built from the sources');
      }
    });
  } else {
    await build();
  }
}
