// Makes the upgrade fixture of this release: `node scripts/make-release-fixture.mjs` (after
// `npm run build`). It starts the compiled service exactly as `npm start` does, on a fresh data
// directory with a two-second epoch cadence, writes a small data set through the public API
// only, has an epoch close over it, stops the service with SIGTERM (so the write-ahead log is
// checkpointed into the file) and keeps, under test/fixtures/releases/v<version>/:
//   companion.db.gz              the SQLite store, vacuumed and gzipped
//   keys/production-ed25519.pem  the production signing key (epoch headers and checkpoints)
//   expected.json                what an auditor re-checks later: action keys, verify requests,
//                                inclusion proofs, the signed checkpoint, the tenant log head
// test/companion/upgrades.test.ts starts every later build on a copy of each. A release adds its
// fixture once; an existing one is never regenerated (the script refuses to overwrite it).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { startNodeFlags } from './start-command.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const VERSION = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
// `--out DIR` writes elsewhere (a trial run); the default is the release's fixture folder.
const outArg = process.argv.indexOf('--out');
const OUT = outArg > 0 ? path.resolve(process.argv[outArg + 1]) : path.join(ROOT, 'test', 'fixtures', 'releases', `v${VERSION}`);
const ENTRY = path.join(ROOT, 'dist', 'companion', 'main.js');
const EPOCH_SECONDS = 2;
// A loopback receiver address nothing listens on: deliveries fail and stay queued, and no
// delivery ever leaves the machine, then or when a later build retries them.
const HOOK_URL = 'http://127.0.0.1:9/action-gate';

function fail(message) {
  process.stderr.write(`make-release-fixture: ${message}\n`);
  process.exit(1);
}

if (fs.existsSync(OUT)) fail(`${path.relative(ROOT, OUT)} exists: a release's fixture is made once and never regenerated`);
if (!fs.existsSync(ENTRY)) fail('dist/companion/main.js is missing: run npm run build first');

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'release-fixture-'));
const child = spawn(process.execPath, [...startNodeFlags(), ENTRY], {
  cwd: ROOT,
  env: { ...process.env, PORT: '0', HOST: '127.0.0.1', SVC_DATA_DIR: dataDir, SVC_EPOCH_SECONDS: String(EPOCH_SECONDS), SVC_WEBHOOK_ALLOW_LOOPBACK: '1', SVC_LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
let out = '';
const base = await new Promise((resolve, reject) => {
  child.stdout.on('data', (d) => {
    out += d.toString();
    const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
    if (m) resolve(m[1]);
  });
  void exited.then((e) => reject(new Error(`the service exited before listening: ${JSON.stringify(e)}`)));
});

async function call(method, route, { key, json, expect = [200, 201] } = {}) {
  const headers = { ...(key ? { 'x-service-key': key } : {}), ...(json === undefined ? {} : { 'content-type': 'application/json' }) };
  const res = await fetch(`${base}${route}`, { method, headers, ...(json === undefined ? {} : { body: JSON.stringify(json) }) });
  const body = await res.json();
  if (!expect.includes(res.status)) throw new Error(`${method} ${route} answered ${res.status}: ${JSON.stringify(body)}`);
  return { status: res.status, body };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

try {
  // A sandbox tenant and its key (a throwaway key of this fixture's database only).
  const signup = (await call('POST', '/signup/checkout', { json: { email: 'release-fixture@example.com' } })).body;
  const key = signup.api_key;
  const tenantId = (await call('GET', '/tenant/usage', { key })).body.tenant_id;

  // A webhook integration subscribed to the tenant's events.
  const hook = (
    await call('PUT', '/tenant/integrations/webhook/ops-alerts', {
      key,
      json: { enabled: true, config: { url: HOOK_URL, events: ['record.sealed', 'receipt.anchored'] } },
    })
  ).body;

  // A policy change (a sealed receipt): medicine allows clinical-note-draft.
  const policy = (await call('PUT', '/tenant/policy?policy_pack=medicine', { key, json: { allow_action_types: ['clinical-note-draft'] } })).body;

  const medicine = { care_setting: 'outpatient', tool_id: 'ambient-scribe', phi_involved: false, tool_baa_status: 'baa-signed' };
  const gates = [
    ['allow', { pack: 'medicine', action_type: 'clinical-note-draft', proposed_action: 'Draft a visit note from the scribe transcript', context: medicine, idempotency_key: 'fixture-allow' }],
    [
      'needs_review',
      {
        pack: 'law',
        proposed_action: 'Draft a reply to opposing counsel about the discovery schedule',
        law_context: { matter_band: 'moderate', tool_id: 'drafting-assistant', doctrine_anchor: 'competence', jurisdiction: 'US-NY' },
        idempotency_key: 'fixture-review',
      },
    ],
    [
      'blocked',
      {
        pack: 'defense',
        action_type: 'cui-handling',
        proposed_action: 'Summarise the CUI test report for the vendor',
        context: { data_marking: 'cui', tool_id: 'onprem-llm', tool_boundary: 'external-ai-service' },
        idempotency_key: 'fixture-blocked',
      },
    ],
    ['blocked', { pack: 'medicine', action_type: 'phi-export', proposed_action: 'Export the visit notes to the summariser', context: { ...medicine, phi_involved: true, tool_baa_status: 'no-baa' } }],
  ];
  // Every seal in the order it was made: each answer carries its ready verify_request.
  const seals = [];
  const sealed = (what, answer) => {
    const { attestation, attestation_hash } = answer.verify_request.seal;
    seals.push({ what, kind: attestation.kind, action_key: answer.action_key, tenant_seq: attestation.tenant_seq, attestation_hash, verify_request: answer.verify_request });
  };
  sealed('policy receipt (medicine allows clinical-note-draft)', policy.receipt);
  for (const [expected, body] of gates) {
    const g = (await call('POST', '/v1/gate', { key, json: body })).body;
    if (g.decision !== expected) throw new Error(`expected ${expected} from ${body.pack}, got ${g.decision}`);
    sealed(`gate ${body.pack} ${g.decision}`, g);
  }

  // The needs_review action is decided, so nothing is left to expire (and seal) in a later build.
  const reviewed = seals.find((a) => a.verify_request.seal.attestation.decision === 'needs_review');
  const review = (await call('POST', '/v1/reviews', { key, json: { pack: 'law', action_key: reviewed.action_key, reviewer: 'reviewer-1', decision: 'approved' } })).body;
  sealed('review receipt (approved)', review);

  // A record of a duty event (EU AI Act output marking), of an act a minute ago.
  const record = (
    await call('POST', '/v1/record', {
      key,
      json: {
        pack: 'eu-ai-act',
        event_type: 'output_marked',
        occurred_at: new Date(Date.now() - 60_000).toISOString(),
        source_payload: { content_sha256: 'c'.repeat(64) },
        metadata: { marking_techniques: ['c2pa-manifest'], marking_payload_ids: ['urn:uuid:3f1c2a9e-8d4b-4a57-9c1e-2b7f6d0a5e11'], model: 'image-gen', model_version: '2026-11-01', detection_check_result: 'detected' },
      },
    })
  ).body;
  sealed('record eu-ai-act output_marked', record);

  // Wait for the epoch over the last seal to close: then every seal has an inclusion proof.
  const last = seals.at(-1);
  let lastProof;
  for (let i = 0; !lastProof; i++) {
    if (i > 600) throw new Error('no epoch closed over the last record within a minute');
    const res = await call('GET', `/v1/records/${encodeURIComponent(last.action_key)}/inclusion-proof`, { key, expect: [200, 409] });
    if (res.status === 200) lastProof = res.body;
    else await sleep(100);
  }
  const proofs = {};
  for (const a of seals) proofs[a.action_key] = (await call('GET', `/v1/records/${encodeURIComponent(a.action_key)}/inclusion-proof`, { key })).body;
  const checkpoint = (await call('GET', `/epochs/${lastProof.epoch.epoch_seq}`)).body;
  const tenantLog = (await call('GET', '/tenant/log', { key })).body;
  if (tenantLog.size !== seals.length) throw new Error(`the tenant log holds ${tenantLog.size} entries, expected the ${seals.length} seals made here`);
  const serviceKeys = (await call('GET', '/.well-known/service-keys.json')).body;

  const expected = {
    release: VERSION,
    made_at: new Date().toISOString(),
    made_from_commit: execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim(),
    epoch_seconds: EPOCH_SECONDS,
    schema_version: new Database(path.join(dataDir, 'companion.db'), { readonly: true }).prepare('SELECT max(version) AS v FROM schema_migrations').get().v,
    tenant: { id: tenantId, kind: 'sandbox', api_key: key },
    service_keys: serviceKeys,
    seals,
    policy: { pack: 'medicine', version: policy.version, digest: policy.digest },
    webhook: { target: 'ops-alerts', url: HOOK_URL, signing_secret: hook.signing_secret, signing_key_derivation: hook.signing_key_derivation },
    inclusion_proofs: proofs,
    checkpoint,
    tenant_log: tenantLog,
    last_seal: { tenant_seq: last.tenant_seq, attestation_hash: last.attestation_hash },
  };

  child.kill('SIGTERM');
  const stopped = await exited;
  if (stopped.code !== 0) throw new Error(`the service did not stop cleanly: ${JSON.stringify(stopped)}`);

  // VACUUM INTO writes one self-contained file of everything committed, whatever of it is
  // still in the write-ahead log, compacted.
  const dbFile = path.join(dataDir, 'companion.db');
  fs.mkdirSync(path.join(OUT, 'keys'), { recursive: true });
  const vacuumed = path.join(dataDir, 'vacuumed.db');
  const db = new Database(dbFile);
  db.exec(`VACUUM INTO ${sqlString(vacuumed)}`);
  db.close();
  // Gzipped: a fresh store is mostly empty 4 KiB pages, one or more per table and index; the
  // file itself is kept byte for byte as this release wrote it (page size, header, WAL mode).
  fs.writeFileSync(path.join(OUT, 'companion.db.gz'), gzipSync(fs.readFileSync(vacuumed), { level: 9 }));
  fs.copyFileSync(path.join(dataDir, 'keys', 'production-ed25519.pem'), path.join(OUT, 'keys', 'production-ed25519.pem'));
  fs.writeFileSync(path.join(OUT, 'expected.json'), `${JSON.stringify(expected, null, 2)}\n`);
  process.stdout.write(`wrote ${path.relative(ROOT, OUT)}/: ${seals.length} seals, inclusion proofs and checkpoint of epoch ${checkpoint.header.epoch_seq}\n`);
} catch (err) {
  if (child.exitCode === null) child.kill('SIGTERM');
  await exited;
  fs.rmSync(dataDir, { recursive: true, force: true });
  fail(err instanceof Error ? err.message : String(err));
}
fs.rmSync(dataDir, { recursive: true, force: true });

function sqlString(s) {
  return `'${s.replaceAll("'", "''")}'`;
}
