/**
 * The secrets the service itself holds (the webhook signing keys it mints) are sealed at rest
 * (companion/core/secrets/envelope.ts, migration 0020): the database never holds a minted key
 * in clear, a sealed value opens only in its own row, a new key-encryption key takes over by
 * `svc-admin rewrap-secrets`, a store sealed under a key the service is not given refuses the
 * start, and keys stored in clear by an earlier release are sealed at the first start. Runs on
 * SQLite and, in the api-on-postgres project, on PostgreSQL; the release fixture and the
 * process start are SQLite's own.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { backupStore } from '../../companion/admin/backup.ts';
import { restoreBackup } from '../../companion/admin/restore.ts';
import { main as svcAdmin } from '../../companion/cli/svc-admin.ts';
import { StoreCipher, SealedSecretError, kekId, newKek, parseKek } from '../../companion/core/secrets/envelope.ts';
import { LOCAL_KEK_FILE } from '../../companion/core/secrets/store-kek.ts';
import { loadConfig } from '../../companion/core/config.ts';
import { settingProblems } from '../../companion/core/settings-check.ts';
import { verifyWebhook } from '../../shared/webhook-verifier.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';
import { createTestContext, makeTempDir } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { recordBody } from './pack-fixtures.ts';
import { startReceiver } from './webhook-receiver.ts';
import type { Receiver } from './webhook-receiver.ts';

const onPostgres = process.env.SVC_TEST_DATABASE === 'postgres';
const derivedKey = (secret: string) => createHash('sha256').update(`service-webhook-signing:${secret}`, 'utf8').digest('hex');

/** A fresh KEK in an environment variable of this process, named by an env:// reference. */
function envKek(): { ref: string; key: Buffer; id: string } {
  const name = `STORE_KEK_TEST_${randomBytes(6).toString('hex').toUpperCase()}`;
  const key = randomBytes(32);
  process.env[name] = key.toString('base64');
  return { ref: `env://${name}`, key, id: kekId(key) };
}

let rx: Receiver;
const contexts: TestContext[] = [];
const dirs: string[] = [];
beforeEach(async () => {
  rx = await startReceiver();
});
afterEach(async () => {
  for (const c of contexts.splice(0)) await c.close();
  await rx.close();
});
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function open(env: Record<string, string> = {}, dataDir?: string): Promise<TestContext> {
  const ctx = await createTestContext({ env: { SVC_WEBHOOK_ALLOW_LOOPBACK: '1', ...env }, ...(dataDir ? { dataDir } : {}) });
  contexts.push(ctx);
  return ctx;
}

/** A data directory kept across restarts of the companion (removed after the file). */
function keptDir(): string {
  const d = makeTempDir('svc-kek-');
  dirs.push(d);
  return d;
}

async function closeLast(ctx: TestContext): Promise<void> {
  contexts.splice(contexts.indexOf(ctx), 1);
  await ctx.close();
}

function client(ctx: TestContext, key: string) {
  return {
    put: (target: string, json: unknown) => ctx.request(`/tenant/integrations/webhook/${target}`, { method: 'PUT', json, key }),
    record: () => ctx.request('/v1/record', { json: recordBody(), key }),
    readiness: () => ctx.request('/tenant/integrations/readiness', { key }),
    deliveries: (target: string) => ctx.request(`/tenant/integrations/webhook/${target}/deliveries`, { key }),
  };
}

/** Runs delivery worker ticks until nothing more is due now. */
async function drain(ctx: TestContext): Promise<void> {
  for (let i = 0; i < 50; i++) if ((await ctx.deps.webhooks.worker.tick()).claimed === 0) return;
  throw new Error('the queue did not drain');
}

/** Whether the last delivery the receiver got verifies with `secret` (shared/webhook-verifier.ts). */
function lastVerifies(ctx: TestContext, secret: string): boolean {
  const req = rx.received.at(-1)!;
  const now = Math.floor(ctx.clock.now().getTime() / 1000);
  return verifyWebhook({ headers: req.headers as Record<string, string>, rawBody: new Uint8Array(req.raw), secrets: [secret], now }).ok;
}

/** Every byte the database holds (files on SQLite, rows on PostgreSQL) contains none of `needles`. */
async function storedNowhere(ctx: TestContext, needles: string[]): Promise<void> {
  const stored = await ctx.storedBytes();
  expect(stored.length).toBeGreaterThan(0);
  for (const { name, bytes } of stored) {
    for (const n of needles) expect(bytes.includes(Buffer.from(n)), `${n.slice(0, 12)}… in ${name}`).toBe(false);
  }
}

describe('the envelope (AES-256-GCM, key id beside the value, bound to its row)', () => {
  const a = newKek(Buffer.alloc(32, 1), 'a');
  const b = newKek(Buffer.alloc(32, 2), 'b');
  const row = { table: 'webhook_signing_keys', column: 'key', tenantId: 'ten_a', rowId: 7 };

  it('opens in its own row only, under the KEK whose id it carries, and never the same bytes twice', () => {
    const cipher = new StoreCipher(a);
    const one = cipher.seal('value', row);
    const two = cipher.seal('value', row);
    expect(one.sealed).not.toBe(two.sealed); // a fresh 96-bit nonce each time
    expect(one.kekId).toBe(a.id);
    expect(cipher.open(one, row)).toBe('value');
    for (const other of [{ ...row, rowId: 8 }, { ...row, tenantId: 'ten_b' }, { ...row, column: 'other' }, { ...row, table: 'other' }]) {
      expect(() => cipher.open(one, other)).toThrow(SealedSecretError);
    }
    const flipped = one.sealed.slice(0, -2) + (one.sealed.at(-2) === 'A' ? 'B' : 'A') + one.sealed.at(-1);
    expect(() => cipher.open({ ...one, sealed: flipped }, row)).toThrow(/does not open/);
    expect(() => new StoreCipher(b).open(one, row)).toThrow(/does not hold/);
    // Rotation: the new cipher seals under b and still opens what a sealed.
    const rotated = new StoreCipher(b, [a]);
    expect(rotated.open(one, row)).toBe('value');
    expect(rotated.seal('value', row).kekId).toBe(b.id);
  });

  it('reads a 32-byte key as hex or base64, and nothing else', () => {
    const key = randomBytes(32);
    for (const text of [key.toString('hex'), key.toString('base64'), key.toString('base64url'), `${key.toString('base64')}\n`]) expect(parseKek(text)).toEqual(key);
    for (const text of ['', 'short', randomBytes(31).toString('base64'), randomBytes(33).toString('hex'), key.toString('hex').slice(1)]) expect(parseKek(text)).toBeUndefined();
  });
});

describe('minted webhook signing keys at rest', () => {
  it('keeps no minted key in the database, only its sealed form, and deliveries verify with the secret the API showed', async () => {
    const ctx = await open();
    const { apiKey } = await ctx.signup();
    const api = client(ctx, apiKey);
    const put = await api.put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] } });
    expect(put.status).toBe(201);
    const secret: string = put.body.signing_secret;
    const rotated = await api.put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] }, rotate_signing_secret: true });
    const second: string = rotated.body.signing_secret;

    // Without SVC_STORE_KEK_REF the key is the service's own file in the data directory, 0600.
    const file = path.join(ctx.dataDir, LOCAL_KEK_FILE);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const local = kekId(parseKek(fs.readFileSync(file, 'utf8'))!);
    const rows = await ctx.sql<{ key: string; kek_id: string }>('SELECT key, kek_id FROM webhook_signing_keys ORDER BY id');
    expect(rows).toHaveLength(2);
    for (const r of rows) {
      expect(r.kek_id).toBe(local);
      expect(r.key).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
    }
    await storedNowhere(ctx, [derivedKey(secret), derivedKey(second), secret.slice(6), second.slice(6)]);

    expect((await api.record()).status).toBe(201);
    await drain(ctx);
    // Both signatures during the rotation overlap: each secret the API showed verifies.
    expect(lastVerifies(ctx, second)).toBe(true);
    expect(lastVerifies(ctx, secret)).toBe(true);
    expect(lastVerifies(ctx, `whsec_${randomBytes(32).toString('base64url')}`)).toBe(false);
  });

  it('a sealed key copied into another tenant\'s row does not open there: readiness and the delivery say so, nothing answers 500', async () => {
    const ctx = await open();
    const a = await ctx.signup();
    const b = await ctx.signup();
    const apiA = client(ctx, a.apiKey);
    const apiB = client(ctx, b.apiKey);
    const secretA: string = (await apiA.put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] } })).body.signing_secret;
    await apiB.put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] } });
    await ctx.sql(
      'UPDATE webhook_signing_keys SET key = (SELECT key FROM webhook_signing_keys WHERE tenant_id = ?), kek_id = (SELECT kek_id FROM webhook_signing_keys WHERE tenant_id = ?) WHERE tenant_id = ?',
      a.tenantId, a.tenantId, b.tenantId,
    );

    const readiness = await apiB.readiness();
    expect(readiness.status).toBe(200);
    const ops = readiness.body.integrations.find((i: { target: string }) => i.target === 'ops');
    expect(ops.readiness.state).toBe('incomplete');
    expect(ops.readiness.detail).toMatch(/signing key unreadable .*row \d+ does not open under kek_[0-9a-f]{16}/);
    expect(ops.readiness.detail).not.toContain(secretA);

    expect((await apiB.record()).status).toBe(201);
    await drain(ctx);
    expect(rx.received).toHaveLength(0); // nothing is sent with a key that does not open
    const [delivery] = (await apiB.deliveries('ops')).body.deliveries;
    expect(delivery.last_error).toMatch(/signing key unreadable/);
    // Saving the target again answers 200; a rotation is how the tenant recovers.
    expect((await apiB.put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] } })).status).toBe(200);
    const recovered = await apiB.put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] }, rotate_signing_secret: true });
    expect(recovered.status).toBe(200);
    expect(recovered.body.readiness.state).toBe('ready');
    // Tenant A's own row still opens.
    expect((await apiA.record()).status).toBe(201);
    await drain(ctx);
    expect(rx.received.some((r) => verifyWebhook({ headers: r.headers as Record<string, string>, rawBody: new Uint8Array(r.raw), secrets: [secretA], now: Math.floor(ctx.clock.now().getTime() / 1000) }).ok)).toBe(true);
  });

  it('rewraps under a new KEK with svc-admin rewrap-secrets; with the old KEK removed, deliveries still verify', async () => {
    const dir = keptDir();
    const oldKek = envKek();
    const newer = envKek();
    const first = await open({ SVC_STORE_KEK_REF: oldKek.ref }, dir);
    const { apiKey } = await first.signup();
    const secret: string = (await client(first, apiKey).put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] } })).body.signing_secret;
    expect(await first.sql('SELECT kek_id FROM webhook_signing_keys')).toEqual([{ kek_id: oldKek.id }]);
    const databaseUrl = first.config.databaseUrl;
    await closeLast(first);

    // The service, restarted with the new key current and the old one previous, serves while the rewrap runs.
    const during = await open({ SVC_STORE_KEK_REF: newer.ref, SVC_STORE_KEK_PREVIOUS_REFS: oldKek.ref }, dir);
    const out: string[] = [];
    const env = { SVC_DATA_DIR: dir, SVC_STORE_KEK_REF: newer.ref, SVC_STORE_KEK_PREVIOUS_REFS: oldKek.ref, ...(databaseUrl ? { SVC_DATABASE_URL: databaseUrl } : {}) };
    const code = await svcAdmin(['rewrap-secrets'], env, { out: (s) => out.push(s), err: (s) => out.push(s) });
    expect(out.join('\n')).toContain(`re-sealed 1 stored secret(s) under ${newer.id} (SVC_STORE_KEK_REF)`);
    expect(out.join('\n')).toContain('nothing is left under any other key');
    expect(code).toBe(0);
    expect(await during.sql('SELECT kek_id FROM webhook_signing_keys')).toEqual([{ kek_id: newer.id }]);
    // A second run has nothing to do.
    expect(await svcAdmin(['rewrap-secrets'], env, { out: (s) => out.push(s), err: (s) => out.push(s) })).toBe(0);
    expect(out.at(-3)).toContain('re-sealed 0 stored secret(s)');
    await closeLast(during);

    delete process.env[oldKek.ref.slice('env://'.length)];
    const after = await open({ SVC_STORE_KEK_REF: newer.ref }, dir);
    expect((await client(after, apiKey).record()).status).toBe(201);
    await drain(after);
    expect(rx.received).toHaveLength(1);
    expect(lastVerifies(after, secret)).toBe(true);
    await storedNowhere(after, [derivedKey(secret)]);
  });

  it('refuses to start on a store sealed under a KEK it is not given, naming the key ids; the settings check names a reference that does not resolve', async () => {
    const dir = keptDir();
    const kek = envKek();
    const first = await open({ SVC_STORE_KEK_REF: kek.ref }, dir);
    const { apiKey } = await first.signup();
    await client(first, apiKey).put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] } });
    await closeLast(first);

    const wrong = envKek();
    await expect(open({ SVC_STORE_KEK_REF: wrong.ref }, dir)).rejects.toThrow(
      new RegExp(`1 stored webhook signing key\\(s\\) are sealed under ${kek.id}, which this service does not hold \\(it holds ${wrong.id}\\)`),
    );
    // Back with the right key, it serves.
    await open({ SVC_STORE_KEK_REF: kek.ref }, dir);

    const problems = await settingProblems(loadConfig({ SVC_DATA_DIR: dir, SVC_STORE_KEK_REF: 'env://STORE_KEK_TEST_UNSET', SVC_STORE_KEK_PREVIOUS_REFS: kek.ref }, []));
    expect(problems).toEqual(['SVC_STORE_KEK_REF env://STORE_KEK_TEST_UNSET does not resolve (env: not_found)']);
    process.env.STORE_KEK_TEST_SHORT = randomBytes(16).toString('hex');
    expect(await settingProblems(loadConfig({ SVC_DATA_DIR: dir, SVC_STORE_KEK_REF: 'env://STORE_KEK_TEST_SHORT' }, []))).toEqual([
      'SVC_STORE_KEK_REF env://STORE_KEK_TEST_SHORT does not hold a 32-byte key (expected 64 hex digits or base64)',
    ]);
    expect(JSON.stringify(problems)).not.toContain(process.env.STORE_KEK_TEST_SHORT);
  });

  it('seals at the next start a key stored in clear before migration 0020', async () => {
    const dir = keptDir();
    const first = await open({}, dir);
    const { apiKey, tenantId } = await first.signup();
    await client(first, apiKey).put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] } });
    // As a store written before 0020 holds it: the derived key itself, no KEK id.
    const secret = `whsec_${randomBytes(32).toString('base64url')}`;
    await first.sql('UPDATE webhook_signing_keys SET key = ?, kek_id = NULL WHERE tenant_id = ?', derivedKey(secret), tenantId);
    await closeLast(first);

    const next = await open({}, dir);
    expect(next.log.entries.find((e) => e.message === 'stored secrets sealed')).toBeDefined();
    const [row] = await next.sql<{ kek_id: string | null }>('SELECT kek_id FROM webhook_signing_keys');
    expect(row!.kek_id).toMatch(/^kek_[0-9a-f]{16}$/);
    await storedNowhere(next, [derivedKey(secret)]);
    expect((await client(next, apiKey).record()).status).toBe(201);
    await drain(next);
    expect(lastVerifies(next, secret)).toBe(true);
  });
});

// The SQLite engine's own: a release's database file, its backup and the process start (not
// defined at all on PostgreSQL, rather than reported skipped there).
if (!onPostgres) describe('an earlier release\'s SQLite store, its backup, and the entry point', () => {
  it('seals the clear key of v0.1.0 at the first start, keeps no trace of it in the files, and its deliveries still verify', async () => {
    const fixture = path.join(REPO_ROOT, 'test', 'fixtures', 'releases', 'v0.1.0');
    const expected = JSON.parse(fs.readFileSync(path.join(fixture, 'expected.json'), 'utf8'));
    const secret: string = expected.webhook.signing_secret;
    const dir = keptDir();
    fs.mkdirSync(path.join(dir, 'keys'), { mode: 0o700 });
    fs.copyFileSync(path.join(fixture, 'keys', 'production-ed25519.pem'), path.join(dir, 'keys', 'production-ed25519.pem'));
    fs.chmodSync(path.join(dir, 'keys', 'production-ed25519.pem'), 0o600);
    const db = zlib.gunzipSync(fs.readFileSync(path.join(fixture, 'companion.db.gz')));
    // The release kept the derived key in clear: what this test shows gone.
    expect(db.includes(Buffer.from(derivedKey(secret)))).toBe(true);
    fs.writeFileSync(path.join(dir, 'companion.db'), db, { mode: 0o600 });

    const ctx = await open({}, dir);
    const rows = await ctx.sql<{ kek_id: string | null }>('SELECT kek_id FROM webhook_signing_keys');
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r.kek_id).toMatch(/^kek_[0-9a-f]{16}$/);
    await storedNowhere(ctx, [derivedKey(secret)]);

    const api = client(ctx, expected.tenant.api_key);
    const moved = await api.put(expected.webhook.target, { enabled: true, config: { url: rx.url, events: ['record.sealed'] } });
    expect(moved.status).toBe(200);
    expect(moved.body.signing_secret).toBeUndefined(); // the same secret, not a new one
    expect((await api.record()).status).toBe(201);
    await drain(ctx);
    expect(lastVerifies(ctx, secret)).toBe(true);
  });

  it('a backup with --include-keys carries the local KEK, so the restored store\'s signing keys open; without it they do not', async () => {
    const ctx = await open();
    const { apiKey } = await ctx.signup();
    const secret: string = (await client(ctx, apiKey).put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] } })).body.signing_secret;
    const withKeys = path.join(keptDir(), 'b');
    const withoutKeys = path.join(keptDir(), 'b');
    expect((await backupStore({ dataDir: ctx.dataDir, out: withKeys, includeKeys: true })).files.map((f) => f.path)).toContain(LOCAL_KEK_FILE);
    expect((await backupStore({ dataDir: ctx.dataDir, out: withoutKeys, includeKeys: false })).files.map((f) => f.path)).not.toContain(LOCAL_KEK_FILE);

    const restored = path.join(keptDir(), 'data');
    expect((await restoreBackup(withKeys, restored)).restored).toBe(true);
    expect(fs.statSync(path.join(restored, LOCAL_KEK_FILE)).mode & 0o777).toBe(0o600);
    const again = await open({}, restored);
    expect((await client(again, apiKey).record()).status).toBe(201);
    await drain(again);
    expect(lastVerifies(again, secret)).toBe(true);

    const bare = path.join(keptDir(), 'data');
    expect((await restoreBackup(withoutKeys, bare)).restored).toBe(true);
    await expect(open({}, bare)).rejects.toThrow(/sealed under kek_[0-9a-f]{16}, which this service does not hold/);
  });

  it('refuses the start of the entry point (companion/main.ts) with one line and exit 2 when the store\'s KEK is missing', async () => {
    const dir = keptDir();
    const kek = envKek();
    const first = await open({ SVC_STORE_KEK_REF: kek.ref }, dir);
    const { apiKey } = await first.signup();
    await client(first, apiKey).put('ops', { enabled: true, config: { url: rx.url, events: ['record.sealed'] } });
    await closeLast(first);
    const other = envKek();
    const child = spawn(process.execPath, ['--import', 'tsx', 'companion/main.ts'], {
      cwd: REPO_ROOT,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', SVC_DATA_DIR: dir, SVC_STORE_KEK_REF: other.ref, SVC_SIGNUP_RATE_PER_MINUTE: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code).toBe(2);
    const lines = stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^action-gate companion failed to start: 1 stored webhook signing key\\(s\\) are sealed under ${kek.id}, which this service does not hold`));
  });
});
