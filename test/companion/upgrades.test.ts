/**
 * Upgrades: this build started on a copy of the database every earlier release wrote
 * (test/fixtures/releases/v*, made by scripts/make-release-fixture.mjs). The schema migrates
 * forward on start; every old seal, receipt and inclusion proof still verifies, against the
 * checkpoint the release signed; the tenant's chain and the epoch log continue from where the
 * release left them, which an RFC 9162 consistency proof from the old checkpoint shows. A
 * database a newer release wrote is refused with one line and exit code 2, on SQLite and on
 * PostgreSQL.
 *
 * The service runs as `npm start` runs it (node on dist/) when the build in dist/ carries this
 * checkout's migrations; otherwise from the sources through tsx, as the other process tests do.
 */
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { failedAnchorChecks, verifyConsistencyProof, verifyInclusionProof } from '../../shared/anchor-verify.ts';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import { verifyWebhook } from '../../shared/webhook-verifier.ts';
import { startNodeFlags } from '../../scripts/start-command.mjs';
import { readMigrations } from '../../companion/core/migrations.ts';
import { makeTempDir } from './helpers.ts';
import { startReceiver } from './webhook-receiver.ts';
import { startPostgres } from '../helpers/postgres.ts';
import type { TestPostgres } from '../helpers/postgres.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';

const RELEASES_DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'releases');
const RELEASES = fs
  .readdirSync(RELEASES_DIR)
  .filter((d) => /^v\d+\.\d+\.\d+$/.test(d))
  .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
const CURRENT = readMigrations();
const NEWEST = CURRENT.at(-1)!.version;

interface Seal {
  what: string;
  kind: string;
  action_key: string;
  tenant_seq: number;
  attestation_hash: string;
  verify_request: { seal: { attestation: Record<string, unknown>; attestation_hash: string } } & Record<string, unknown>;
}

/** What scripts/make-release-fixture.mjs recorded beside each database. */
interface Expected {
  release: string;
  epoch_seconds: number;
  schema_version: number;
  tenant: { id: string; api_key: string };
  service_keys: unknown;
  seals: Seal[];
  policy: { pack: string; version: number; digest: string };
  webhook: { target: string; signing_secret: string };
  inclusion_proofs: Record<string, { epoch: { epoch_seq: number } } & Record<string, unknown>>;
  checkpoint: { header: { epoch_seq: number; epoch_log: { size: number; root: string } }; checkpoint: string } & Record<string, unknown>;
  tenant_log: { size: number; root: string };
  last_seal: { tenant_seq: number; attestation_hash: string };
}

// ---- Which build runs --------------------------------------------------------------------
/** The newest modification time of the files under `dir` whose names match `pattern`. */
function newest(dir: string, pattern: RegExp): number {
  let t = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && pattern.test(e.name)) t = Math.max(t, fs.statSync(path.join(e.parentPath, e.name)).mtimeMs);
  }
  return t;
}
const BUILT = path.join(REPO_ROOT, 'dist', 'companion', 'main.js');
/** The build in dist/ is of these sources: made after every source file and migration last changed. */
const ON_BUILD =
  fs.existsSync(BUILT) &&
  fs.statSync(BUILT).mtimeMs >= Math.max(newest(path.join(REPO_ROOT, 'companion'), /\.(ts|mjs|sql|json)$/), newest(path.join(REPO_ROOT, 'shared'), /\.ts$/));
const COMMAND = ON_BUILD ? [...startNodeFlags(), 'dist/companion/main.js'] : ['--import', 'tsx', 'companion/main.ts'];

// ---- Processes and folders made here -----------------------------------------------------
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

interface Running {
  url: string;
  stop(): Promise<void>;
}

function spawnService(env: Record<string, string>) {
  const child = spawn(process.execPath, COMMAND, {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', SVC_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

async function startService(dataDir: string, env: Record<string, string> = {}): Promise<Running> {
  const p = spawnService({ SVC_DATA_DIR: dataDir, ...env });
  const url = await new Promise<string>((resolve, reject) => {
    const look = () => {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(p.stdout());
      if (m) resolve(m[1]!);
    };
    p.child.stdout!.on('data', look);
    void p.exited.then((e) => reject(new Error(`the service exited early (${JSON.stringify(e)}): ${p.stderr()}`)));
  });
  // The banner is written just before the signal handlers are set, in the same turn of the
  // event loop; an answered request means that turn is over, so SIGTERM now stops it cleanly.
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  return {
    url,
    async stop() {
      p.child.kill('SIGTERM');
      expect(await p.exited).toEqual({ code: 0, signal: null });
    },
  };
}

/** A data directory holding a copy of the release's database and production key, as an admin would restore them. */
function copyRelease(release: string): { dataDir: string; expected: Expected } {
  const from = path.join(RELEASES_DIR, release);
  const dataDir = makeTempDir('svc-upgrade-');
  dirs.push(dataDir);
  fs.writeFileSync(path.join(dataDir, 'companion.db'), gunzipSync(fs.readFileSync(path.join(from, 'companion.db.gz'))));
  fs.mkdirSync(path.join(dataDir, 'keys'), { mode: 0o700 });
  // git keeps no file modes beyond the executable bit; the service refuses a key others can read.
  fs.copyFileSync(path.join(from, 'keys', 'production-ed25519.pem'), path.join(dataDir, 'keys', 'production-ed25519.pem'));
  fs.chmodSync(path.join(dataDir, 'keys', 'production-ed25519.pem'), 0o600);
  return { dataDir, expected: JSON.parse(fs.readFileSync(path.join(from, 'expected.json'), 'utf8')) as Expected };
}

function query<T>(dataDir: string, sql: string): T[] {
  const db = new Database(path.join(dataDir, 'companion.db'), { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

const lastEpochEnd = (dataDir: string) => Date.parse(query<{ e: string }>(dataDir, 'SELECT max(period_end) AS e FROM epochs')[0]!.e);

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, limitMs = 120_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Epochs close on every cadence boundary, empty ones too, and a restarted service catches up
 * period by period (DESIGN.md §4). The release closed two-second epochs; catching up from then to
 * now at two seconds could be millions of epochs. So, as an admin lengthening and shortening the
 * cadence would, the gap is closed in coarse epochs first (a day, an hour, a minute), each step
 * a start and a clean stop of this build, leaving at most about 200 two-second periods.
 */
async function catchUpEpochs(dataDir: string): Promise<number[]> {
  const FINAL = 2;
  const ladder = [86_400, 3_600, 60];
  const used: number[] = [];
  for (let i = 0; i < ladder.length; i++) {
    const finer = ladder[i + 1] ?? FINAL;
    const cadence = ladder[i]!;
    if ((Date.now() - lastEpochEnd(dataDir)) / 1000 <= 200 * finer) continue;
    const target = Math.floor(Date.now() / (cadence * 1000)) * cadence * 1000;
    // The worker closes at most 100 periods a round, a round at most every 30 s (workers.ts).
    const rounds = Math.ceil((target - lastEpochEnd(dataDir)) / (cadence * 1000) / 100);
    const svc = await startService(dataDir, { SVC_EPOCH_SECONDS: String(cadence) });
    await until(`epochs of ${cadence} s up to ${new Date(target).toISOString()}`, () => (lastEpochEnd(dataDir) >= target ? true : undefined), 120_000 + rounds * 30_000);
    await svc.stop();
    used.push(cadence);
  }
  return used;
}

async function call(base: string, method: string, route: string, key?: string, json?: unknown) {
  const res = await fetch(`${base}${route}`, {
    method,
    headers: { ...(key ? { 'x-service-key': key } : {}), ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe.each(RELEASES)(`a database written by release %s, opened by this build (${ON_BUILD ? 'dist/, as npm start runs it' : 'the sources: dist/ is older than them'})`, (release) => {
  let dataDir: string;
  let expected: Expected;
  let svc: Running;
  let applied: { version: number; checksum: string; applied_at: string }[];
  let before: { version: number; checksum: string; applied_at: string }[];

  beforeAll(async () => {
    ({ dataDir, expected } = copyRelease(release));
    before = query(dataDir, 'SELECT version, checksum, applied_at FROM schema_migrations ORDER BY version');
    await catchUpEpochs(dataDir);
    svc = await startService(dataDir, { SVC_EPOCH_SECONDS: '2', SVC_WEBHOOK_ALLOW_LOOPBACK: '1' });
    applied = query(dataDir, 'SELECT version, checksum, applied_at FROM schema_migrations ORDER BY version');
  }, 900_000);
  afterAll(async () => svc?.stop());

  it('is migrated forward on start: every migration of this build is applied, the release’s own untouched', async () => {
    expect(before.at(-1)!.version).toBe(expected.schema_version);
    expect(applied.map((r) => r.version)).toEqual(CURRENT.map((m) => m.version));
    expect(applied.slice(0, before.length)).toEqual(before);
    expect(query<{ user_version: number }>(dataDir, 'PRAGMA user_version')[0]!.user_version).toBe(NEWEST);
    const ready = await call(svc.url, 'GET', '/readyz');
    expect(ready.status).toBe(200);
  });

  it('verifies every seal and receipt the release made, and serves each record with its seal unchanged', async () => {
    expect(expected.seals.map((s) => s.tenant_seq)).toEqual([...expected.seals.keys()]);
    for (const s of expected.seals) {
      const verified = await call(svc.url, 'POST', '/v1/verify', undefined, s.verify_request);
      expect(verified.status, s.what).toBe(200);
      expect(verified.body.verified, s.what).toBe(true);
      const view = await call(svc.url, 'GET', `/v1/records/${encodeURIComponent(s.action_key)}`, expected.tenant.api_key);
      expect(view.status, s.what).toBe(200);
      expect(view.body.verify_request, s.what).toEqual(s.verify_request);
    }
    // A seal changed after the fact fails, so the passes above are not vacuous.
    const forged = structuredClone(expected.seals[1]!.verify_request);
    forged.seal.attestation.decision = 'blocked';
    expect((await call(svc.url, 'POST', '/v1/verify', undefined, forged)).body.verified).toBe(false);
  });

  it('still proves every old record’s inclusion against the checkpoint the release signed', async () => {
    const keys = trustedKeySet((await call(svc.url, 'GET', '/.well-known/service-keys.json')).body);
    const releaseKeys = trustedKeySet(expected.service_keys);
    for (const s of expected.seals) {
      const stored = expected.inclusion_proofs[s.action_key]!;
      expect(failedAnchorChecks(await verifyInclusionProof(stored, releaseKeys, s.attestation_hash)), s.what).toEqual([]);
      expect(failedAnchorChecks(await verifyInclusionProof(stored, keys, s.attestation_hash)), s.what).toEqual([]);
      const now = await call(svc.url, 'GET', `/v1/records/${encodeURIComponent(s.action_key)}/inclusion-proof`, expected.tenant.api_key);
      expect(now.status, s.what).toBe(200);
      // Later builds add fields beside the release's in epoch_header (RFC 3161 timestamps,
      // witness cosignatures); every field the release served is served unchanged.
      const { epoch_header: header, ...rest } = now.body;
      const { epoch_header: storedHeader, ...storedRest } = stored as Record<string, any>;
      expect(rest, s.what).toEqual(storedRest);
      expect(Object.fromEntries(Object.keys(storedHeader).map((k) => [k, header[k]])), s.what).toEqual(storedHeader);
    }
    const old = await call(svc.url, 'GET', `/epochs/${expected.checkpoint.header.epoch_seq}`);
    // Every field the release served is served unchanged; later builds add fields beside them
    // (RFC 3161 timestamps, witness cosignatures), which an old epoch has none of.
    expect(Object.fromEntries(Object.keys(expected.checkpoint).map((k) => [k, old.body[k]]))).toEqual(expected.checkpoint);
    expect(old.body).toMatchObject({ cosigned_checkpoint: expected.checkpoint.checkpoint, cosignatures: [] });
  });

  it('continues the tenant’s chain and the epoch log: the next seal links to the release’s last, and the new checkpoint is consistent with the old', async () => {
    const key = expected.tenant.api_key;
    // The release's policy still shapes decisions: medicine allows clinical-note-draft.
    const gate = await call(svc.url, 'POST', '/v1/gate', key, {
      pack: 'medicine',
      action_type: 'clinical-note-draft',
      proposed_action: 'Draft a visit note after the upgrade',
      context: { care_setting: 'outpatient', tool_id: 'ambient-scribe', phi_involved: false, tool_baa_status: 'baa-signed' },
    });
    expect(gate.status).toBe(201);
    expect(gate.body.decision).toBe('allow');
    const attestation = gate.body.verify_request.seal.attestation;
    expect(attestation.tenant_seq).toBe(expected.last_seal.tenant_seq + 1);
    expect(attestation.prev_attestation_hash).toBe(expected.last_seal.attestation_hash);
    expect(attestation.policy_digest).toBe(expected.policy.digest);
    expect((await call(svc.url, 'POST', '/v1/verify', undefined, gate.body.verify_request)).body.verified).toBe(true);

    // The tenant log extends the release's: a consistency proof from its size and root.
    const log = await call(svc.url, 'GET', '/tenant/log', key);
    expect(log.body.size).toBe(expected.tenant_log.size + 1);
    const tenantConsistency = await call(svc.url, 'GET', `/tenant/log/consistency?from_size=${expected.tenant_log.size}&to_size=${log.body.size}`, key);
    expect(tenantConsistency.status).toBe(200);
    expect(tenantConsistency.body.from).toMatchObject({ size: expected.tenant_log.size, root: expected.tenant_log.root });
    expect(failedAnchorChecks(verifyConsistencyProof(tenantConsistency.body))).toEqual([]);

    // A new epoch closes over the new seal: its proof verifies, and the epoch log it is in
    // extends the one the release's checkpoint signed.
    const proof = await until('the new seal’s epoch to close', async () => {
      const res = await call(svc.url, 'GET', `/v1/records/${encodeURIComponent(gate.body.action_key)}/inclusion-proof`, key);
      return res.status === 200 ? res.body : undefined;
    });
    const keys = trustedKeySet((await call(svc.url, 'GET', '/.well-known/service-keys.json')).body);
    expect(failedAnchorChecks(await verifyInclusionProof(proof, keys, gate.body.verify_request.seal.attestation_hash))).toEqual([]);
    const from = expected.checkpoint.header.epoch_seq;
    const to = proof.epoch.epoch_seq as number;
    expect(to).toBeGreaterThan(from);
    const consistency = await call(svc.url, 'GET', `/epochs/consistency?from=${from}&to=${to}`);
    expect(consistency.status).toBe(200);
    expect(consistency.body.from).toMatchObject(expected.checkpoint.header.epoch_log);
    expect(consistency.body.to).toMatchObject(proof.epoch_header.header.epoch_log);
    expect(failedAnchorChecks(verifyConsistencyProof(consistency.body))).toEqual([]);
    // Epochs stayed chained across the upgrade: no gap, each header naming its predecessor.
    const chain = query<{ epoch_seq: number }>(dataDir, 'SELECT epoch_seq FROM epochs ORDER BY epoch_seq');
    expect(chain.map((e) => e.epoch_seq)).toEqual([...chain.keys()]);
  });

  it('keeps the release’s webhook target: deliveries are still signed with the secret the release handed out', async () => {
    const key = expected.tenant.api_key;
    const receiver = await startReceiver();
    try {
      const moved = await call(svc.url, 'PUT', `/tenant/integrations/webhook/${expected.webhook.target}`, key, { enabled: true, config: { url: receiver.url, events: ['record.sealed'] } });
      expect(moved.status).toBe(200);
      expect(moved.body.signing_secret).toBeUndefined(); // the same secret, not a new one
      const record = await call(svc.url, 'POST', '/v1/record', key, {
        pack: 'eu-ai-act',
        event_type: 'output_marked',
        occurred_at: new Date(Date.now() - 60_000).toISOString(),
        source_payload: { content_sha256: 'd'.repeat(64) },
        metadata: { marking_techniques: ['c2pa-manifest'], marking_payload_ids: ['urn:uuid:0b6c1f4e-2a5d-4c8e-9f3a-7d1e6b2c4a90'], model: 'image-gen', model_version: '2026-11-01', detection_check_result: 'detected' },
      });
      expect(record.status).toBe(201);
      const delivery = await until('the record.sealed delivery', () => receiver.received.find((r) => r.json.action_key === record.body.action_key));
      expect(verifyWebhook({ headers: delivery.headers, rawBody: delivery.raw, secrets: [expected.webhook.signing_secret] })).toMatchObject({ ok: true, event: 'record.sealed' });
      expect(verifyWebhook({ headers: delivery.headers, rawBody: delivery.raw, secrets: [`whsec_${'A'.repeat(32)}`] }).ok).toBe(false);
    } finally {
      await receiver.close();
    }
  });
});

// ---- A database from a newer release ------------------------------------------------------
const FUTURE = NEWEST + 2;
const pad = (n: number) => String(n).padStart(4, '0');
const refusal = (where: string) =>
  `action-gate companion failed to start: ${where} was written by a newer version of the service (schema ${pad(FUTURE)}, which this build does not know; it knows up to ${pad(NEWEST)}): upgrade the service, or restore a backup made by this version\n`;

describe('a database from a newer release', () => {
  afterEach(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  it('is refused on SQLite with one line and exit code 2, and left as it was', async () => {
    const { dataDir } = copyRelease(RELEASES.at(-1)!);
    // First brought up to this build, then marked by a "newer" release's migration.
    const svc = await startService(dataDir);
    await svc.stop();
    const db = new Database(path.join(dataDir, 'companion.db'));
    db.prepare("INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, 'from_a_newer_release', ?, '2030-01-01T00:00:00.000Z')").run(FUTURE, 'f'.repeat(64));
    db.close();
    const rows = query(dataDir, 'SELECT * FROM schema_migrations ORDER BY version');

    const p = spawnService({ SVC_DATA_DIR: dataDir });
    expect(await p.exited).toEqual({ code: 2, signal: null });
    expect(p.stderr()).toBe(refusal(`the database at ${path.join(dataDir, 'companion.db')}`));
    expect(p.stdout()).not.toMatch(/listening on/);
    expect(query(dataDir, 'SELECT * FROM schema_migrations ORDER BY version')).toEqual(rows);
  }, 120_000);

  describe('on PostgreSQL', () => {
    let pg: TestPostgres;
    beforeAll(() => {
      pg = startPostgres();
    }, 120_000);
    afterAll(() => pg?.stop());

    it('is refused with one line naming the database and exit code 2, and left as it was', async () => {
      pg.psql("CREATE DATABASE gate_newer LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;");
      const dataDir = makeTempDir('svc-upgrade-pg-');
      dirs.push(dataDir);
      const url = `postgres:///gate_newer?host=${encodeURIComponent(pg.socketDir)}&user=postgres`;
      const svc = await startService(dataDir, { SVC_DATABASE_URL: url, SVC_SEAL_THREAD: '0' });
      await svc.stop();
      const psql = (sql: string) => pg.psql(`\\c gate_newer\n${sql}`);
      psql(`INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (${FUTURE}, 'from_a_newer_release', '${'f'.repeat(64)}', '2030-01-01T00:00:00.000Z');`);
      const rows = psql('SELECT version, name, checksum FROM schema_migrations ORDER BY version;');

      const p = spawnService({ SVC_DATA_DIR: dataDir, SVC_DATABASE_URL: url, SVC_SEAL_THREAD: '0' });
      expect(await p.exited).toEqual({ code: 2, signal: null });
      expect(p.stderr()).toBe(refusal('the PostgreSQL database "gate_newer"'));
      expect(psql('SELECT version, name, checksum FROM schema_migrations ORDER BY version;')).toBe(rows);
    }, 120_000);
  });
});
