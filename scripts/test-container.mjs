#!/usr/bin/env node
// `npm run test:container`: builds the container image from the Dockerfile and smoke-tests what
// it runs, the way an admin runs it (README "Run it as a service"): the data directory on a
// volume, the image's own command, docker stop. Needs a Docker engine; the base image is made
// locally when missing (deploy/make-base-image.mjs), so no container registry is needed.
//
// The container shares the host's network and the companion listens on 127.0.0.1 only
// (HOST, PORT): every request stays on loopback, and it works on engines started without a
// bridge network. Exits 0 when every check passed, 1 otherwise; the image and the base stay
// (so a second run builds from the engine's cache), the containers and the volume are removed.
import { execFileSync, spawnSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BASE_IMAGE, NODE_VERSION, baseImageExists, makeBaseImage } from '../deploy/make-base-image.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DOCKER = process.env.DOCKER ?? 'docker';
const IMAGE = process.env.CONTAINER_IMAGE ?? 'action-gate:smoke';
const RUN_ID = `${process.pid}-${Date.now().toString(36)}`;
const VOLUME = `action-gate-smoke-${RUN_ID}`;
// `docker stop -t`: longer than the companion's drain (SVC_SHUTDOWN_GRACE_MS, 10 s by default),
// as the README tells admins; SIGKILL after it would show as exit code 137.
const STOP_TIMEOUT_S = 15;
// Caps on waiting for a condition, so a broken image fails the run instead of hanging it.
const READY_CAP_MS = 120_000;
const REQUEST_CAP_MS = 15_000;

const containers = new Set();
let passed = 0;
const failures = [];

const say = (line) => console.log(`[container] ${line}`);

function docker(args, opts = {}) {
  const r = spawnSync(DOCKER, args, { encoding: 'utf8', maxBuffer: 64 * 2 ** 20, ...opts });
  if (r.error) throw r.error;
  return r;
}

function dockerOk(args, opts = {}) {
  const r = docker(args, opts);
  if (r.status !== 0) throw new Error(`${DOCKER} ${args[0]} failed (exit ${r.status}): ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' | ')}`);
  return (r.stdout ?? '').trim();
}

function check(name, ok, detail = '') {
  if (ok) {
    passed++;
    say(`ok   ${name}${detail ? ` (${detail})` : ''}`);
  } else {
    failures.push(name);
    say(`FAIL ${name}${detail ? `: ${detail}` : ''}`);
  }
  return ok;
}

/** A port free on 127.0.0.1 now; the container binds it moments later. */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function http(port, method, route, { key, body } = {}) {
  const headers = {};
  if (key) headers['x-service-key'] = key;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`http://127.0.0.1:${port}${route}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_CAP_MS),
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

function state(name) {
  return JSON.parse(dockerOk(['inspect', '--format', '{{json .State}}', name]));
}

/** Polls until `probe` answers true, the container exits, or the cap passes. */
async function waitFor(name, what, probe) {
  const deadline = Date.now() + READY_CAP_MS;
  for (;;) {
    if (await probe().catch(() => false)) return true;
    const s = state(name);
    if (!s.Running) throw new Error(`container ${name} exited (code ${s.ExitCode}) while waiting for ${what}`);
    if (Date.now() > deadline) throw new Error(`no ${what} within ${READY_CAP_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function startContainer(name, port) {
  containers.add(name);
  dockerOk([
    'run', '--detach', '--init', '--name', name,
    '--network', 'host', '--env', 'HOST=127.0.0.1', '--env', `PORT=${port}`,
    '--volume', `${VOLUME}:/data`,
    // The image's HEALTHCHECK command, polled every second here instead of every 30 s.
    '--health-interval', '1s', '--health-start-period', '0s',
    IMAGE,
  ]);
}

function removeContainer(name) {
  // Once anything failed, what the companion logged is the first thing to read.
  if (failures.length > 0) {
    const logs = docker(['logs', '--tail', '40', name]);
    say(`last log lines of ${name}:`);
    console.log(`${logs.stdout ?? ''}${logs.stderr ?? ''}`.trimEnd());
  }
  docker(['rm', '--force', '--volumes', name], { stdio: 'ignore' });
  containers.delete(name);
}

function cleanUp() {
  for (const name of [...containers]) removeContainer(name);
  docker(['volume', 'rm', '--force', VOLUME], { stdio: 'ignore' });
}

const LAW_GATE = {
  pack: 'law',
  proposed_action: 'Draft a reply to opposing counsel about the discovery schedule',
  law_context: { matter_band: 'moderate', tool_id: 'drafting-assistant', doctrine_anchor: 'competence', jurisdiction: 'US-NY' },
  idempotency_key: 'container-smoke',
};

/** Signup, gate, record, verify, the OpenAPI document and the export validation routes. */
async function firstLife(port) {
  const signup = await http(port, 'POST', '/signup/checkout', { body: { email: 'container-smoke@example.com' } });
  const key = signup.json?.api_key;
  check('POST /signup/checkout makes a tenant and its key', signup.status < 300 && typeof key === 'string', `HTTP ${signup.status}`);
  if (typeof key !== 'string') throw new Error('no API key, the remaining checks need one');

  const gate = await http(port, 'POST', '/v1/gate', { key, body: LAW_GATE });
  const action = gate.json?.action_key;
  check('POST /v1/gate seals a decision', gate.status >= 200 && gate.status < 300 && typeof action === 'string' && gate.json?.verify_request !== undefined, `HTTP ${gate.status}, ${gate.json?.decision}`);

  const record = await http(port, 'GET', `/v1/records/${encodeURIComponent(action)}`, { key });
  check('GET /v1/records/{action_key} returns the same decision', record.status === 200 && record.json?.decision === gate.json?.decision, `HTTP ${record.status}`);

  const verify = await http(port, 'POST', '/v1/verify', { body: gate.json?.verify_request });
  check('POST /v1/verify verifies the seal', verify.status === 200 && verify.json?.verified === true, `HTTP ${verify.status}, verified ${verify.json?.verified}`);

  const openapi = await http(port, 'GET', '/openapi.json');
  check('GET /openapi.json describes the API', openapi.status === 200 && /^3\.1/.test(openapi.json?.openapi ?? '') && '/v1/gate' in (openapi.json?.paths ?? {}), `HTTP ${openapi.status}`);

  // The export validation routes read schema files shipped beside the compiled code: a build
  // that leaves them out answers 5xx here.
  for (const [method, route, body] of [
    ['GET', '/tenant/exports/validation-schema-manifest'],
    ['GET', '/tenant/exports/validation-report'],
    ['POST', '/tenant/exports/validation-runs', { export_kind: 'oscal' }],
  ]) {
    const r = await http(port, method, route, { key, body });
    check(`${method} ${route} answers without a server error`, r.status < 500, `HTTP ${r.status}${r.status >= 500 ? ` ${r.json?.code ?? ''}` : ''}`);
  }
  return { key, action, gate: gate.json };
}

/** docker stop sends the image's STOPSIGNAL; exit code 0 means the companion drained and exited itself. */
function stopCleanly(name) {
  const started = Date.now();
  dockerOk(['stop', '--time', String(STOP_TIMEOUT_S), name]);
  const s = state(name);
  check(`SIGTERM stops the companion cleanly (docker stop -t ${STOP_TIMEOUT_S})`, !s.Running && s.ExitCode === 0 && !s.OOMKilled, `exit code ${s.ExitCode} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** A new container on the same volume: the tenant, its key and its record are still there. */
async function secondLife(port, first) {
  const record = await http(port, 'GET', `/v1/records/${encodeURIComponent(first.action)}`, { key: first.key });
  check('after a restart on the same volume the record is still there', record.status === 200 && record.json?.decision === first.gate.decision, `HTTP ${record.status}`);
  const again = await http(port, 'POST', '/v1/gate', { key: first.key, body: LAW_GATE });
  check('the same idempotency_key answers the stored action after the restart', again.status >= 200 && again.status < 300 && again.json?.action_key === first.action, `HTTP ${again.status}`);
  const verify = await http(port, 'POST', '/v1/verify', { body: first.gate.verify_request });
  check('the seal from before the restart still verifies', verify.status === 200 && verify.json?.verified === true, `HTTP ${verify.status}`);
}

async function ready(name, port) {
  await waitFor(name, 'answer from /readyz', async () => (await http(port, 'GET', '/readyz')).status === 200);
  check('/readyz answers 200', true);
}

async function main() {
  const info = docker(['info', '--format', '{{.ServerVersion}}']);
  if (info.status !== 0) throw new Error(`no Docker engine answers (${DOCKER} info: ${(info.stderr ?? '').trim().split('\n').at(-1)})`);
  say(`engine ${info.stdout.trim()}`);

  if (baseImageExists(BASE_IMAGE)) say(`base ${BASE_IMAGE} is there`);
  else {
    say(`base ${BASE_IMAGE} is missing: making it`);
    makeBaseImage(BASE_IMAGE);
  }

  say(`building ${IMAGE} FROM ${BASE_IMAGE}`);
  // The legacy builder: Debian's engine has no BuildKit, and the Dockerfile needs none.
  // --force-rm: a failed step leaves no stopped container behind.
  const build = docker(['build', '--force-rm', '--network', 'host', '--build-arg', `BASE_IMAGE=${BASE_IMAGE}`, '--tag', IMAGE, ROOT], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, DOCKER_BUILDKIT: '0' },
  });
  if (!check('the image builds from the local base', build.status === 0, `exit ${build.status}`)) return;

  const nodeVersion = dockerOk(['run', '--rm', '--network', 'none', '--entrypoint', 'node', IMAGE, '--version']);
  check('the image runs Node 20', nodeVersion === `v${NODE_VERSION}`, nodeVersion);

  const port = await freePort();
  const first = `action-gate-smoke-${RUN_ID}-1`;
  startContainer(first, port);
  await ready(first, port);
  const user = dockerOk(['exec', first, 'id', '-un']);
  check('the companion runs as the unprivileged node user', user === 'node', user);
  const data = await firstLife(port);
  const files = dockerOk(['exec', first, 'ls', '/data']);
  check('the data directory is on the volume', /companion\.db/.test(files), files.split('\n').join(' '));
  await waitFor(first, 'healthy HEALTHCHECK', async () => state(first).Health?.Status === 'healthy');
  check('the image HEALTHCHECK reports healthy', true);
  stopCleanly(first);
  removeContainer(first);

  const second = `action-gate-smoke-${RUN_ID}-2`;
  startContainer(second, port);
  await ready(second, port);
  await secondLife(port, data);
  stopCleanly(second);
}

let exitCode = 0;
const interrupted = () => {
  cleanUp();
  process.exit(130);
};
process.on('SIGINT', interrupted);
process.on('SIGTERM', interrupted);
try {
  await main();
} catch (err) {
  failures.push(err instanceof Error ? err.message : String(err));
  say(`FAIL ${failures.at(-1)}`);
} finally {
  cleanUp();
}
if (failures.length > 0) exitCode = 1;
say(`${passed} checks passed, ${failures.length} failed`);
process.exit(exitCode);
