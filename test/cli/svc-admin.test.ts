/**
 * `svc-admin` as an admin runs it, and the restore drill: the compiled service started the way
 * `npm start` starts it, on loopback with two-second epochs; a backup taken by the svc-admin bin
 * while gate calls keep arriving; a newer epoch closed after it; the backup restored into a new
 * directory and served again. Every record in the backup verifies on the restored service, and
 * an RFC 9162 consistency proof from the backup's checkpoint to the live service's newer one
 * shows nothing was rewritten. Tampered backups and bad usage are refused.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyConsistencyProof, verifyEpochHeader } from '../../shared/anchor-verify.ts';
import { canonicalize } from '../../shared/canonical-json.ts';
import { publicKeyToJwk } from '../../shared/keys.ts';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import type { TrustedKeySet } from '../../shared/trusted-keys.ts';
import { verifyStore } from '../../companion/admin/verify-store.ts';
import type { CheckRow } from '../../companion/admin/verify-store.ts';
import type { BackupManifest } from '../../companion/admin/backup-manifest.ts';
import { startNodeFlags } from '../../scripts/start-command.mjs';
import { gateLoad, tempDataDir, cleanupCompanions } from '../helpers/companion-process.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';
import { createTestContext, makeTempDir } from '../companion/helpers.ts';
import { gateBody } from '../companion/pack-fixtures.ts';

const work = makeTempDir('svc-admin-');
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const c of children) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    const exited = new Promise((resolve) => c.once('exit', resolve));
    c.kill('SIGKILL');
    await exited;
  }
  cleanupCompanions();
  fs.rmSync(work, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  out: string;
  err: string;
}

/** The package bin, as its own process (async: the load in this process keeps running). */
function admin(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'companion/cli/svc-admin.mjs'), ...args], { cwd: work, env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

interface Service {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** The compiled service exactly as `npm start` runs it (node with its flags on dist/). */
async function startBuilt(dataDir: string): Promise<Service> {
  const child = spawn(process.execPath, [...startNodeFlags(), 'dist/companion/main.js'], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', SVC_DATA_DIR: dataDir, SVC_EPOCH_SECONDS: '2', SVC_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    void exited.then(() => reject(new Error(`the service exited early: ${err}`)));
  });
  return {
    url,
    child,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function getJson<T = any>(url: string, key?: string): Promise<T> {
  const res = await fetch(url, { headers: key ? { 'x-service-key': key } : {} });
  expect(res.status, url).toBe(200);
  return (await res.json()) as T;
}

/** The newest closed epoch's seq, or -1 before the first. */
async function lastEpochSeq(url: string): Promise<number> {
  const res = await fetch(`${url}/epochs/consistency?from=0`);
  if (res.status === 404) return -1;
  return ((await res.json()) as { to: { epoch_seq: number } }).to.epoch_seq;
}

/** Every record of the tenant, paged from the NDJSON export (interface-spec Tenant exports). */
async function exportedRecords(url: string, key: string): Promise<{ action_key: string; verify_request: unknown }[]> {
  const records: { action_key: string; verify_request: unknown }[] = [];
  for (let cursor: string | null = ''; cursor !== null; ) {
    const res: Response = await fetch(`${url}/tenant/exports/records${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: { accept: 'application/x-ndjson', 'x-service-key': key } });
    expect(res.status).toBe(200);
    const text = await res.text();
    for (const line of text.split('\n')) if (line) records.push(JSON.parse(line));
    cursor = text === '' ? null : res.headers.get('x-next-cursor');
  }
  return records;
}

const manifestOf = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, 'MANIFEST.json'), 'utf8')) as BackupManifest;
const mode = (p: string) => (fs.statSync(p).mode & 0o777).toString(8);
const copyDir = (from: string, to: string) => fs.cpSync(from, to, { recursive: true });

function actionKeysIn(dbFile: string): Map<string, string[]> {
  const db = new Database(dbFile, { readonly: true });
  try {
    const byTenant = new Map<string, string[]>();
    for (const r of db.prepare('SELECT tenant_id, action_key FROM sealed_records ORDER BY tenant_id, tenant_seq').all() as { tenant_id: string; action_key: string }[]) {
      (byTenant.get(r.tenant_id) ?? byTenant.set(r.tenant_id, []).get(r.tenant_id)!).push(r.action_key);
    }
    return byTenant;
  } finally {
    db.close();
  }
}

/** The drill's shared state, made once in beforeAll (one service under load, one backup). */
const drill = {
  liveDir: '',
  backup: path.join(work, 'backup-with-keys'),
  backupNoKeys: path.join(work, 'backup-public-keys-only'),
  tenants: [] as { tenantId: string; apiKey: string }[],
  acknowledgedBeforeBackup: [] as string[],
  backupRun: undefined as Run | undefined,
  liveVerify: undefined as Run | undefined,
  consistency: undefined as any,
  liveHeader: undefined as any,
  liveJwks: undefined as any,
};

describe('svc-admin backup, verify-store and restore: the restore drill', { timeout: 240_000 }, () => {
  beforeAll(async () => {
    drill.liveDir = tempDataDir();
    const seed = await createTestContext({ dataDir: drill.liveDir });
    const production = seed.productionTenant();
    await seed.close();
    const live = await startBuilt(drill.liveDir);
    const signup = await fetch(`${live.url}/signup/checkout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'drill@example.com' }) });
    const sandbox = (await signup.json()) as { tenant_id: string; api_key: string };
    drill.tenants = [production, { tenantId: sandbox.tenant_id, apiKey: sandbox.api_key }];

    // Gate calls from both tenants keep arriving through the backup and the next epoch.
    let stopping = false;
    const acknowledged: string[] = [];
    // The production tenant has no allowance to run out of; the sandbox one has 100 actions.
    let loadFailed: unknown;
    const loads = Promise.all([
      gateLoad(live.url, production.apiKey, gateBody('law'), { n: 1_000_000, concurrency: 3, acknowledged, killed: () => stopping }),
      gateLoad(live.url, sandbox.api_key, gateBody('law'), { n: 90, concurrency: 1, acknowledged, killed: () => stopping }),
    ]).catch((err: unknown) => void (loadFailed = err));
    const until = async (condition: () => Promise<boolean>) => {
      while (!(await condition())) {
        if (loadFailed) throw loadFailed;
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    // A few epochs first, so the backup holds a chain of them.
    await until(async () => acknowledged.length >= 60 && (await lastEpochSeq(live.url)) >= 2);

    drill.acknowledgedBeforeBackup = [...acknowledged];
    const during = acknowledged.length;
    drill.backupRun = await admin(['backup', '--out', drill.backup, '--include-keys'], { SVC_DATA_DIR: drill.liveDir });
    const backupNoKeys = await admin(['backup', '--data-dir', drill.liveDir, '--out', drill.backupNoKeys]);
    expect(backupNoKeys.code, backupNoKeys.err).toBe(0);
    // The store checked while it serves: one read transaction, a consistent snapshot.
    drill.liveVerify = await admin(['verify-store'], { SVC_DATA_DIR: drill.liveDir });
    const backedUp = drill.backupRun.code === 0 ? manifestOf(drill.backup).last_epoch?.epoch_seq ?? -1 : -1;
    // A newer epoch closes after the backup, with records sealed after it.
    await until(async () => acknowledged.length > during + 20 && (await lastEpochSeq(live.url)) > backedUp + 1);
    stopping = true;
    await loads;
    if (loadFailed) throw loadFailed;

    const to = await lastEpochSeq(live.url);
    drill.consistency = await getJson(`${live.url}/epochs/consistency?from=${backedUp}&to=${to}`);
    drill.liveHeader = await getJson(`${live.url}/epochs/${to}`);
    drill.liveJwks = await getJson(`${live.url}/.well-known/service-keys.json`);
    await live.stop();
  }, 240_000);

  it('backs up while the service serves: every acknowledged record is in it, with a manifest of sizes, SHA-256 and the last signed checkpoint', () => {
    const run = drill.backupRun!;
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    expect(run.out).toContain(`backup written to ${drill.backup}`);
    expect(run.out).toContain('PRIVATE key');

    const manifest = manifestOf(drill.backup);
    expect(manifest.format).toBe('svc.backup/v1');
    expect(manifest.schema_version).toBeGreaterThanOrEqual(15);
    expect(manifest.private_key_included).toBe(true);
    // --include-keys also carries the service's own store key (no SVC_STORE_KEK_REF here).
    expect(manifest.files.map((f) => f.path).sort()).toEqual(['companion.db', 'keys/production-ed25519.pem', 'service-keys.json', 'store-kek.key']);
    for (const f of manifest.files) {
      const data = fs.readFileSync(path.join(drill.backup, f.path));
      expect(f.bytes).toBe(data.length);
      expect(f.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
    // A folder holding the private key is for its owner only.
    expect(mode(drill.backup)).toBe('700');
    expect(mode(path.join(drill.backup, 'keys'))).toBe('700');
    for (const f of [...manifest.files.map((f) => f.path), 'MANIFEST.json']) expect(mode(path.join(drill.backup, f)), f).toBe('600');
    // One self-contained file: rollback journal, nothing beside it.
    expect(fs.readdirSync(drill.backup).sort()).toEqual(['MANIFEST.json', 'companion.db', 'keys', 'service-keys.json', 'store-kek.key']);

    const inBackup = new Set([...actionKeysIn(path.join(drill.backup, 'companion.db')).values()].flat());
    expect(inBackup.size).toBe(manifest.counts.records);
    for (const key of drill.acknowledgedBeforeBackup) expect(inBackup.has(key), key).toBe(true);

    // The checkpoint it records is a signed epoch header that verifies under the live key set.
    const last = manifest.last_epoch!;
    expect(last.epoch_log).toEqual(last.signed_header.header.epoch_log);
    expect(last.epoch_digest).toBe(last.signed_header.header.epoch_digest);
  });

  it('leaves the private key out unless asked; the public key set is still there to verify with', async () => {
    const manifest = manifestOf(drill.backupNoKeys);
    expect(manifest.private_key_included).toBe(false);
    expect(fs.existsSync(path.join(drill.backupNoKeys, 'keys'))).toBe(false);
    const jwks = JSON.parse(fs.readFileSync(path.join(drill.backupNoKeys, 'service-keys.json'), 'utf8')) as { keys: Record<string, unknown>[] };
    expect(jwks.keys.every((k) => !('d' in k))).toBe(true);
    expect(jwks.keys.map((k) => k.kid).sort()).toEqual(drill.liveJwks.keys.map((k: { kid: string }) => k.kid).sort());
    const checked = await admin(['verify-store', '--from', drill.backupNoKeys]);
    expect(checked.code, checked.out).toBe(0);
  });

  it('verify-store walks the live store while it serves, and the backup, and reports one table', async () => {
    const live = drill.liveVerify!;
    expect(live.err).toBe('');
    expect(live.code, live.out).toBe(0);
    const header = live.out.split('\n')[0]!;
    expect(header).toMatch(/^SUBJECT\s+CHECKED\s+COUNT\s+RESULT$/);
    for (const t of drill.tenants) expect(live.out).toMatch(new RegExp(`^tenant ${t.tenantId} .* \\d+ records, \\d+ checkpoints\\s+ok$`, 'm'));
    expect(live.out).toMatch(/^epochs .* ok$/m);

    const backup = await admin(['verify-store', '--from', drill.backup]);
    expect(backup.code, backup.out).toBe(0);
    expect(backup.out).toMatch(/^manifest .* 4 files\s+ok$/m);
    const manifest = manifestOf(drill.backup);
    expect(backup.out).toContain(`verified: 2 tenants, ${manifest.counts.records} records, ${manifest.counts.epochs} epochs`);
  });

  it("a consistency proof from the backup's checkpoint to the live service's newer one proves nothing was rewritten", async () => {
    const last = manifestOf(drill.backup).last_epoch!;
    const proof = drill.consistency;
    // The proof starts at exactly the head the backup recorded, and ends at a signed newer head.
    expect(proof.from).toEqual({ epoch_seq: last.epoch_seq, size: last.epoch_log.size, root: last.epoch_log.root });
    expect(proof.to.size).toBeGreaterThan(proof.from.size);
    expect(proof.to.root).toBe(drill.liveHeader.header.epoch_log.root);
    const keys = trustedKeySet(drill.liveJwks);
    expect((await verifyEpochHeader(drill.liveHeader, keys)).verified).toBe(true);
    expect((await verifyEpochHeader(last.signed_header, keys)).verified).toBe(true);
    expect(verifyConsistencyProof(proof)).toMatchObject({ verified: true });
    // And the proof is not vacuous: a rewritten old head fails it.
    const rewritten = { ...proof, from: { ...proof.from, root: proof.from.root.replace(/^./, (c: string) => (c === '0' ? '1' : '0')) } };
    expect(verifyConsistencyProof(rewritten).verified).toBe(false);
  });

  it('restores into a new directory; the service starts on it with the same key, and every record in the backup verifies', async () => {
    const target = path.join(work, 'restored', 'data');
    const run = await admin(['restore', drill.backup], { SVC_DATA_DIR: target });
    expect(run.err).toBe('');
    expect(run.code, run.out).toBe(0);
    expect(run.out).toContain(`restored into ${target} with the production key`);
    expect(fs.readdirSync(target).sort()).toEqual(['companion.db', 'keys', 'store-kek.key']);
    expect(mode(path.join(target, 'store-kek.key'))).toBe('600');
    expect(mode(target)).toBe('700');
    expect(mode(path.join(target, 'keys', 'production-ed25519.pem'))).toBe('600');

    const restored = await startBuilt(target);
    try {
      const jwks = await getJson(`${restored.url}/.well-known/service-keys.json`);
      const active = (set: { keys: { kid: string; status: string }[] }) => set.keys.find((k) => k.status === 'active')!.kid;
      expect(active(jwks)).toBe(active(drill.liveJwks));

      const backedUp = actionKeysIn(path.join(drill.backup, 'companion.db'));
      let verified = 0;
      for (const t of drill.tenants) {
        const records = await exportedRecords(restored.url, t.apiKey);
        expect(records.map((r) => r.action_key)).toEqual(backedUp.get(t.tenantId));
        for (const r of records) {
          const res = await fetch(`${restored.url}/v1/verify`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-key': t.apiKey }, body: JSON.stringify(r.verify_request) });
          const body = (await res.json()) as { verified: boolean };
          expect(res.status).toBe(200);
          expect(body.verified, r.action_key).toBe(true);
          verified++;
        }
      }
      expect(verified).toBe(manifestOf(drill.backup).counts.records);

      // The restored service serves the backup's checkpoint as it was signed (beside what the
      // epoch gathered since: its timestamp and witness status).
      const last = manifestOf(drill.backup).last_epoch!;
      expect(await getJson(`${restored.url}/epochs/${last.epoch_seq}`)).toMatchObject(last.signed_header);
    } finally {
      await restored.stop();
    }
  });

  it('restores into an existing empty directory (a mounted volume), made private; without the key the service will make a new one', async () => {
    const target = path.join(work, 'empty-volume');
    fs.mkdirSync(target, { mode: 0o755 });
    const run = await admin(['restore', drill.backupNoKeys, '--data-dir', target]);
    expect(run.code, run.out + run.err).toBe(0);
    expect(run.out).toContain(`restored into ${target} (no private key in the backup: the service makes a new production key; the old one stays published as retired)`);
    expect(fs.readdirSync(target)).toEqual(['companion.db']);
    expect(mode(target)).toBe('700');
    const checked = await admin(['verify-store'], { SVC_DATA_DIR: target });
    expect(checked.code, checked.out).toBe(0);
  });

  it('a changed signature row is reported by verify-store and refused by restore, even with the manifest rewritten to match; nothing is written', async () => {
    const tampered = path.join(work, 'tampered-signature');
    copyDir(drill.backup, tampered);
    const db = new Database(path.join(tampered, 'companion.db'));
    const row = db.prepare('SELECT id, tenant_seq, signature FROM sealed_records ORDER BY id LIMIT 1 OFFSET 7').get() as { id: number; tenant_seq: number; signature: string };
    const flipped = row.signature.slice(0, 10) + (row.signature[10] === 'A' ? 'B' : 'A') + row.signature.slice(11);
    db.prepare('UPDATE sealed_records SET signature = ? WHERE id = ?').run(flipped, row.id);
    db.close();

    const reported = await admin(['verify-store', '--from', tampered]);
    expect(reported.code).toBe(1);
    expect(reported.out).toMatch(/^manifest .*FAIL: companion\.db has SHA-256/m);
    expect(reported.out).toMatch(new RegExp(`^tenant ten_\\w+ .*FAIL: tenant_seq ${row.tenant_seq}: the Ed25519 signature does not verify`, 'm'));
    expect(reported.out).toMatch(/^FAILED: 2 of \d+ rows/m);

    // An attacker who also rewrites the manifest still meets the signature check.
    const manifest = manifestOf(tampered);
    const data = fs.readFileSync(path.join(tampered, 'companion.db'));
    const { createHash } = await import('node:crypto');
    manifest.files = manifest.files.map((f) => (f.path === 'companion.db' ? { ...f, bytes: data.length, sha256: createHash('sha256').update(data).digest('hex') } : f));
    fs.writeFileSync(path.join(tampered, 'MANIFEST.json'), JSON.stringify(manifest));
    const target = path.join(work, 'refused-signature', 'data');
    const refused = await admin(['restore', tampered, '--data-dir', target]);
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/^manifest .* ok$/m);
    expect(refused.out).toMatch(/FAIL: tenant_seq \d+: the Ed25519 signature does not verify/);
    expect(refused.err).toBe('svc-admin: restore refused: the backup failed verification; nothing was written\n');
    // Not even the folders it would have made.
    expect(fs.existsSync(path.dirname(target))).toBe(false);
  });

  it('a byte changed in a row nothing signs is refused by the manifest check', async () => {
    const tampered = path.join(work, 'tampered-file');
    copyDir(drill.backup, tampered);
    const db = new Database(path.join(tampered, 'companion.db'));
    db.prepare("UPDATE tenants SET display_name = display_name || 'x' WHERE id = (SELECT min(id) FROM tenants)").run();
    db.close();
    const target = path.join(work, 'refused-file');
    const refused = await admin(['restore', tampered], { SVC_DATA_DIR: target });
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/^manifest .*FAIL: companion\.db has SHA-256 [0-9a-f]{64}, the manifest says [0-9a-f]{64}$/m);
    expect(fs.existsSync(target)).toBe(false);

    // A private key that is not the store's active key is refused too.
    const otherKey = path.join(work, 'other-key');
    copyDir(drill.backup, otherKey);
    const { generateKeyPairSync, createHash } = await import('node:crypto');
    const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    fs.writeFileSync(path.join(otherKey, 'keys', 'production-ed25519.pem'), pem);
    const manifest = manifestOf(otherKey);
    manifest.files = manifest.files.map((f) => (f.path.startsWith('keys/') ? { ...f, bytes: Buffer.byteLength(pem), sha256: createHash('sha256').update(pem).digest('hex') } : f));
    fs.writeFileSync(path.join(otherKey, 'MANIFEST.json'), JSON.stringify(manifest));
    const wrongKey = await admin(['verify-store', '--from', otherKey]);
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.out).toMatch(/^manifest .*FAIL: keys\/production-ed25519\.pem holds key \S+, the database's active production key is \S+$/m);
  });

  // Each check of verify-store, shown to fail on the one rewrite it exists for: a copy of the
  // backup's database changed in one place, checked in this process.
  describe('verify-store finds each kind of rewrite', () => {
    const copies: string[] = [];
    async function verifyRewritten(change: (db: Database.Database) => void, keys?: TrustedKeySet): Promise<CheckRow[]> {
      const file = path.join(work, `rewrite-${copies.length}.db`);
      copies.push(file);
      fs.copyFileSync(path.join(drill.backup, 'companion.db'), file);
      const writable = new Database(file);
      change(writable);
      writable.close();
      const db = new Database(file, { readonly: true });
      try {
        const report = await verifyStore(db, { keys });
        expect(report.ok).toBe(report.rows.every((r) => r.ok));
        return report.rows.filter((r) => !r.ok);
      } finally {
        db.close();
      }
    }
    const productionTenant = () => drill.tenants[0]!.tenantId;
    const record = (db: Database.Database, seq: number) =>
      db.prepare('SELECT id, attestation, attestation_hash FROM sealed_records WHERE tenant_id = ? AND tenant_seq = ?').get(productionTenant(), seq) as { id: number; attestation: string; attestation_hash: string };
    /** Signs as the service would: the backup holds its private key. */
    const resign = (text: string) => crypto.sign(null, Buffer.from(text), crypto.createPrivateKey(fs.readFileSync(path.join(drill.backup, 'keys', 'production-ed25519.pem')))).toString('base64url');
    const rewriteAttestation = (db: Database.Database, seq: number, edit: (att: Record<string, unknown>) => void, sign: boolean) => {
      const r = record(db, seq);
      const att = JSON.parse(r.attestation) as Record<string, unknown>;
      edit(att);
      const text = canonicalize(att);
      db.prepare('UPDATE sealed_records SET attestation = ?, attestation_hash = ?, signature = CASE WHEN ? THEN ? ELSE signature END WHERE id = ?')
        .run(text, crypto.createHash('sha256').update(text).digest('hex'), sign ? 1 : 0, sign ? resign(text) : '', r.id);
    };
    const only = (rows: CheckRow[]) => {
      expect(rows.map((r) => r.subject)).toHaveLength(1);
      return rows[0]!;
    };

    afterAll(() => copies.forEach((f) => fs.rmSync(f, { force: true })));

    it('an attestation edited without its hash', async () => {
      const row = only(await verifyRewritten((db) => db.prepare("UPDATE sealed_records SET attestation = replace(attestation, '\"law\"', '\"LAW\"') WHERE id = ?").run(record(db, 3).id)));
      expect(row.subject).toBe(`tenant ${productionTenant()}`);
      expect(row.detail).toMatch(/^tenant_seq 3: attestation hashes to [0-9a-f]{64}, the row says [0-9a-f]{64}/);
    });

    it('an attestation edited with its hash but not re-signed', async () => {
      const [row] = await verifyRewritten((db) => rewriteAttestation(db, 4, (a) => (a.decision = 'edited'), false));
      expect(row!.detail).toMatch(/^tenant_seq 4: the Ed25519 signature does not verify under key \S+/);
    });

    it('a record re-signed with the right key but linked to the wrong predecessor', async () => {
      const [row] = await verifyRewritten((db) => rewriteAttestation(db, 5, (a) => (a.prev_attestation_hash = record(db, 3).attestation_hash), true));
      expect(row!.detail).toMatch(/^tenant_seq 5: the attestation's prev_attestation_hash does not match the previous record/);
    });

    it('a row whose columns disagree with what its attestation signed', async () => {
      const row = only(await verifyRewritten((db) => db.prepare("UPDATE sealed_records SET payload_hash = ? WHERE id = ?").run('0'.repeat(64), record(db, 6).id)));
      expect(row.detail).toBe("tenant_seq 6: the attestation's payload_hash does not match the row");
    });

    it('a record removed from the middle of a chain', async () => {
      const [row] = await verifyRewritten((db) => {
        db.pragma('foreign_keys = OFF');
        db.prepare('DELETE FROM sealed_records WHERE id = ?').run(record(db, 2).id);
      });
      expect(row!.detail).toMatch(/^tenant_seq 2 is missing \(next is 3\)/);
    });

    it("an epoch leaf's tenant root that the records do not give", async () => {
      const rows = await verifyRewritten((db) => db.prepare('UPDATE epoch_leaves SET tenant_chain_root = ? WHERE tenant_id = ? AND epoch_seq = (SELECT min(epoch_seq) FROM epoch_leaves WHERE tenant_id = ?)').run('a'.repeat(64), productionTenant(), productionTenant()));
      expect(rows.find((r) => r.subject === `tenant ${productionTenant()}`)!.detail).toMatch(/^epoch \d+: tree head at size \d+ is [0-9a-f]{64}, the epoch leaf says a{64}$/);
      expect(rows.find((r) => r.subject.startsWith('epoch '))!.detail).toMatch(/^canonical_root recomputes to/);
    });

    it('stored tree levels that proofs would be served from, changed', async () => {
      // The leftmost complete subtree of the head: a node every root at that size is built from.
      const changeTopNode = (db: Database.Database, logId: string, size: number) =>
        expect(db.prepare('UPDATE merkle_nodes SET hash = ? WHERE log_id = ? AND level = ? AND idx = 0').run(Buffer.alloc(32, 7), logId, Math.floor(Math.log2(size))).changes).toBe(1);
      const row = only(await verifyRewritten((db) => changeTopNode(db, productionTenant(), (db.prepare('SELECT size FROM tenant_logs WHERE tenant_id = ?').get(productionTenant()) as { size: number }).size)));
      expect(row.detail).toMatch(/^stored tree levels give head [0-9a-f]{64} at size \d+, the records give [0-9a-f]{64}$/);
      const epochLog = await verifyRewritten((db) => changeTopNode(db, '#epochs', (db.prepare('SELECT count(*) AS n FROM epochs').get() as { n: number }).n));
      expect(epochLog.map((r) => r.subject)).toEqual(['epochs', 'epoch log']);
    });

    it("an epoch's stored canonical root, digest link, or header signature changed", async () => {
      const root = await verifyRewritten((db) => db.prepare('UPDATE epochs SET canonical_root = ? WHERE epoch_seq = 1').run('b'.repeat(64)));
      expect(root.map((r) => r.subject)).toEqual(['epochs', 'epoch 1']);
      expect(root[0]!.detail).toBe('1 failing: see the epoch rows');
      expect(root[1]!.detail).toMatch(/^canonical_root recomputes to [0-9a-f]{64}, stored b{64}$/);
      const link = await verifyRewritten((db) => db.prepare('UPDATE epochs SET prev_epoch_digest = ? WHERE epoch_seq = 2').run('c'.repeat(64)));
      expect(link.find((r) => r.subject === 'epoch 2')!.detail).toMatch(/^prev_epoch_digest c{64}, the previous epoch's digest is [0-9a-f]{64}/);
      const signature = await verifyRewritten((db) => {
        const { signature: sig } = db.prepare('SELECT signature FROM epochs WHERE epoch_seq = 0').get() as { signature: string };
        db.prepare('UPDATE epochs SET signature = ? WHERE epoch_seq = 0').run(sig.slice(0, 5) + (sig[5] === 'A' ? 'B' : 'A') + sig.slice(6));
      });
      expect(signature.map((r) => r.subject)).toEqual(['epochs', 'epoch 0']);
      expect(signature[1]!.detail).toMatch(/^header_signature: Ed25519 signature does not verify/);
    });

    it('a production key row that does not name its key, and a key set that does not hold the signing key', async () => {
      const renamed = await verifyRewritten((db) => db.prepare("UPDATE production_keys SET key_id = 'not-a-thumbprint'").run());
      expect(renamed.find((r) => r.subject === 'keys')!.detail).toBe('production key not-a-thumbprint is not the thumbprint of its public key');
      // A pinned key set (--keys) of someone else's key: nothing the production key signed passes.
      const stranger = crypto.generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }) as { x: string };
      const jwks = { keys: [publicKeyToJwk(new Uint8Array(Buffer.from(stranger.x, 'base64url')), { status: 'active', dev_key: false })] };
      const rows = await verifyRewritten(() => {}, trustedKeySet(jwks));
      expect(rows.find((r) => r.subject === `tenant ${productionTenant()}`)!.detail).toMatch(/^tenant_seq 0: key \S+ is not in the trusted key set/);
      expect(rows.find((r) => r.subject === 'epoch 0')!.detail).toMatch(/^header_signature: key \S+ is not in the trusted key set/);
    });

    it('the untouched copy passes', async () => {
      expect(await verifyRewritten(() => {})).toEqual([]);
    });
  });

  it('a backup from a newer release (a higher schema version than this one knows) is refused', async () => {
    const newer = path.join(work, 'newer-release');
    copyDir(drill.backup, newer);
    const db = new Database(path.join(newer, 'companion.db'));
    db.prepare("INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (9999, 'from_the_future', ?, '2030-01-01T00:00:00.000Z')").run('0'.repeat(64));
    db.close();
    const { createHash } = await import('node:crypto');
    const data = fs.readFileSync(path.join(newer, 'companion.db'));
    const manifest = manifestOf(newer);
    manifest.schema_version = 9999;
    manifest.files = manifest.files.map((f) => (f.path === 'companion.db' ? { ...f, bytes: data.length, sha256: createHash('sha256').update(data).digest('hex') } : f));
    fs.writeFileSync(path.join(newer, 'MANIFEST.json'), JSON.stringify(manifest));
    const target = path.join(work, 'refused-newer');
    const refused = await admin(['restore', newer], { SVC_DATA_DIR: target });
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/^manifest .*FAIL: the database's schema version 9999 is newer than this release's \d+: restore it with the release that wrote it, or a newer one$/m);
    expect(fs.existsSync(target)).toBe(false);
  });

  it('refuses a restore into a non-empty directory in one line, exit 2, and writes nothing', async () => {
    const target = path.join(work, 'occupied');
    fs.mkdirSync(target);
    fs.writeFileSync(path.join(target, 'notes.txt'), 'keep me');
    const run = await admin(['restore', drill.backup, '--data-dir', target]);
    expect(run.code).toBe(2);
    expect(run.out).toBe('');
    expect(run.err).toBe(`svc-admin: the data directory ${target} is not empty: restore only into an empty or absent directory\n`);
    expect(fs.readdirSync(target)).toEqual(['notes.txt']);
  });

  it('a backup into an existing folder with files, or of a directory without a store, is refused', async () => {
    const occupied = path.join(work, 'occupied-out');
    fs.mkdirSync(occupied);
    fs.writeFileSync(path.join(occupied, 'x'), '');
    const run = await admin(['backup', '--out', occupied], { SVC_DATA_DIR: drill.liveDir });
    expect(run.code).toBe(2);
    expect(run.err).toBe(`svc-admin: ${occupied} exists and is not an empty folder: choose a new backup folder\n`);
    const empty = await admin(['verify-store', '--data-dir', path.join(work, 'nothing-here')]);
    expect(empty.code).toBe(2);
    expect(empty.err).toMatch(/^svc-admin: no database at .*companion\.db: is SVC_DATA_DIR \(--data-dir\) the service's\?\n$/);
  });
});

describe('svc-admin usage', { timeout: 60_000 }, () => {
  it('--help names every command and the settings; bad usage is one line and exit 2', async () => {
    const help = await admin(['--help']);
    expect(help.code).toBe(0);
    for (const word of ['backup --out', 'verify-store', 'restore <folder>', 'rewrap-secrets', '--include-keys', 'SVC_DATA_DIR', 'SVC_STORE_KEK_REF', '--data-dir', 'pg_dump']) expect(help.out).toContain(word);

    for (const [args, message] of [
      [[], 'expected a command: backup, verify-store, restore, rewrap-secrets'],
      [['backups'], 'unknown command "backups": expected one of backup, verify-store, restore, rewrap-secrets'],
      [['rewrap-secrets', '--out', 'x'], 'rewrap-secrets does not take --out'],
      [['backup'], 'backup: --out <folder> is required'],
      [['restore'], 'restore: expected the backup folder, e.g. svc-admin restore /backups/gate-2026-11-28'],
      [['verify-store', '--out', 'x'], 'verify-store does not take --out'],
      [['verify-store', 'extra'], 'verify-store: unexpected argument "extra"'],
      [['verify-store', '--epoch-seconds', 'often'], 'invalid configuration: --epoch-seconds must be an integer from 1 to 86400, got "often"'],
    ] as const) {
      const run = await admin([...args]);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.err).toBe(`svc-admin: ${message} (see --help)\n`);
    }
    const unknownFlag = await admin(['verify-store', '--nope']);
    expect(unknownFlag.code).toBe(2);
    expect(unknownFlag.err.trim().split('\n')).toHaveLength(1);
  });

  it('on PostgreSQL, backup and restore print the pg_dump route and exit 2', async () => {
    for (const args of [['backup', '--out', path.join(work, 'pg')], ['restore', path.join(work, 'pg')]]) {
      // Never contacted: the route is printed before anything connects.
      const run = await admin(args, { SVC_DATABASE_URL: 'postgres://gate@127.0.0.1:1/gate' });
      expect(run.code).toBe(2);
      expect(run.err).toMatch(/^svc-admin: SVC_DATABASE_URL is set: .*pg_dump -Fc .*pg_restore .*"Backup and restore"\n$/);
    }
    expect(fs.existsSync(path.join(work, 'pg'))).toBe(false);
  });
});
