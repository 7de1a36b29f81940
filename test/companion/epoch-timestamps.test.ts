/**
 * RFC 3161 timestamps of every epoch, against a real TSA on loopback (openssl ts -reply behind
 * an HTTP wrapper, test/helpers/loopback-tsa.ts): a closed epoch is "awaiting" until its
 * token arrives, the token is verified before it is stored, served with the epoch and in
 * inclusion proofs, and checks with `openssl ts -verify`; an authority that is down is retried
 * with backoff; a token from an authority outside the configured roots is never stored; a
 * companion killed with -9 while a request is pending requests it again after restart (on
 * PostgreSQL too when the vitest project api-on-postgres runs this file).
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { verifyInclusionProof } from '../../shared/anchor-verify.ts';
import { certificatesFromPem, timestampedBytes, verifyEpochTimestamps } from '../../shared/timestamp.ts';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import { main as verifyMain } from '../../companion/cli/verify.ts';
import { ConfigError, loadConfig } from '../../companion/core/config.ts';
import { DATABASE_FILE } from '../../companion/core/db.ts';
import { settingProblems } from '../../companion/core/settings-check.ts';
import { cleanupCompanions, start, tempDataDir } from '../helpers/companion-process.ts';
import { cleanupAuthorities, openssl, startTsa } from '../helpers/loopback-tsa.ts';
import { postgresAt } from '../helpers/postgres.ts';
import type { TsaAuthority } from '../helpers/loopback-tsa.ts';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { recordBody } from './pack-fixtures.ts';

let tsa: TsaAuthority;
let other: TsaAuthority;
let ctx: TestContext | undefined;
let key: string;

beforeAll(async () => {
  [tsa, other] = await Promise.all([startTsa('Test'), startTsa('Other')]);
}, 60_000);
afterAll(async () => {
  await Promise.all([tsa?.close(), other?.close()]);
  cleanupAuthorities();
});
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
  cleanupCompanions();
});

async function setup(urls: string[], roots = tsa.caFile) {
  ctx = await createTestContext({ env: { SVC_TSA_URLS: urls.join(','), SVC_TSA_ROOTS_FILE: roots, SVC_WEBHOOK_ALLOW_LOOPBACK: '1' } });
  ({ apiKey: key } = await ctx.signup());
  return ctx;
}

/** Seals a record at 10:15 and closes its hour's epoch; returns the record's action key. */
async function sealAndClose(c: TestContext, hour = 10): Promise<string> {
  c.clock.set(`2025-01-01T${String(hour).padStart(2, '0')}:15:00.000Z`);
  const res = await c.request('/v1/record', { json: recordBody(), key });
  expect(res.status).toBe(201);
  c.clock.set(`2025-01-01T${String(hour + 1).padStart(2, '0')}:00:01.000Z`);
  expect((await c.deps.workers.epochs.closeDue()).length).toBeGreaterThan(0);
  return res.body.evidence_packet.action_key as string;
}

const tick = (c: TestContext) => c.deps.workers.timestamps.worker.tick();

describe('epoch timestamps from a loopback TSA', () => {
  it('an epoch awaits its timestamp until the token arrives; the token verifies here and with openssl ts -verify', async () => {
    const c = await setup([tsa.url]);
    const actionKey = await sealAndClose(c);

    const before = await c.request('/epochs/0');
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ timestamp_status: 'awaiting', timestamps: [] });

    const receipt = await tick(c);
    expect(receipt).toMatchObject({ claimed: 1, succeeded: 1, retrying: 0 });

    const epoch = (await c.request('/epochs/0')).body;
    expect(epoch.timestamp_status).toBe('timestamped');
    expect(epoch.timestamps).toHaveLength(1);
    const [stamp] = epoch.timestamps;
    expect(stamp.tsa).toBe(tsa.url);
    expect(stamp.gen_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    // Our verifier, over the checkpoint body, trusting the test CA.
    const roots = certificatesFromPem(tsa.caPem);
    const [ours] = await verifyEpochTimestamps(epoch.timestamps, epoch.checkpoint, roots);
    expect(ours!.checks.filter((x) => !x.ok)).toEqual([]);
    expect(ours!.verified).toBe(true);

    // openssl, from the bytes alone: the body as a file, then its SHA-256 as -digest.
    const dir = fs.mkdtempSync(path.join(c.dataDir, 'ts-'));
    const body = path.join(dir, 'body.txt');
    const token = path.join(dir, 'token.der');
    fs.writeFileSync(body, timestampedBytes(epoch.checkpoint));
    fs.writeFileSync(token, Buffer.from(stamp.token_b64, 'base64'));
    expect(await openssl(['ts', '-verify', '-data', body, '-in', token, '-token_in', '-CAfile', tsa.caFile])).toContain('Verification: OK');
    const digest = (await openssl(['dgst', '-sha256', '-r', body])).slice(0, 64);
    expect(await openssl(['ts', '-verify', '-digest', digest, '-in', token, '-token_in', '-CAfile', tsa.caFile])).toContain('Verification: OK');
    // ...and openssl refuses it under the other authority's root.
    await expect(openssl(['ts', '-verify', '-data', body, '-in', token, '-token_in', '-CAfile', other.caFile])).rejects.toThrow(/Verification: FAILED|verify error/);

    // The inclusion proof carries the same tokens beside its signed header.
    const proof = await c.request(`/v1/records/${actionKey}/inclusion-proof`, { key });
    expect(proof.status).toBe(200);
    expect(proof.body.epoch_header).toMatchObject({ timestamp_status: 'timestamped', timestamps: epoch.timestamps });
    const keys = trustedKeySet((await c.request('/.well-known/service-keys.json')).body);
    expect((await verifyInclusionProof(proof.body, keys)).verified).toBe(true);

    // svc-verify's policy: enough tokens under the trusted roots, or the check epoch_timestamps fails.
    const proofFile = path.join(dir, 'proof.json');
    const keysFile = path.join(dir, 'service-keys.json');
    fs.writeFileSync(proofFile, JSON.stringify(proof.body));
    fs.writeFileSync(keysFile, JSON.stringify((await c.request('/.well-known/service-keys.json')).body));
    const cli = async (...args: string[]) => {
      const out: string[] = [];
      const code = await verifyMain([proofFile, '--keys', keysFile, ...args], (x) => out.push(x), (x) => out.push(x));
      return { code, out: out.join('\n') };
    };
    const strict = await cli('--tsa-roots', tsa.caFile, '--min-timestamps', '1');
    expect(strict.code).toBe(0);
    expect(strict.out).toMatch(/PASS\s+epoch_timestamps\s+1 of 1 RFC 3161 token verify/);
    const two = await cli('--tsa-roots', tsa.caFile, '--min-timestamps', '2');
    expect(two.code).toBe(1);
    expect(two.out).toMatch(/FAIL\s+epoch_timestamps/);
    expect(two.out).toContain('NOT VERIFIED (epoch_timestamps)');
    const untrusted = await cli('--tsa-roots', other.caFile);
    expect(untrusted.code).toBe(1);
    expect(untrusted.out).toMatch(/FAIL\s+epoch_timestamps.*tsa_chain/);
    const stripped = path.join(dir, 'stripped.json');
    fs.writeFileSync(stripped, JSON.stringify({ ...proof.body, epoch_header: { ...proof.body.epoch_header, timestamps: [] } }));
    const none: string[] = [];
    expect(await verifyMain([stripped, '--keys', keysFile, '--tsa-roots', tsa.caFile, '--json'], (x) => none.push(x), (x) => none.push(x))).toBe(1);
    expect(JSON.parse(none.join('')).checks).toContainEqual(expect.objectContaining({ name: 'epoch_timestamps', ok: false }));
    // Without a policy the proof verifies as before.
    expect((await cli()).code).toBe(0);
    expect((await cli('--min-timestamps', '1')).code).toBe(2);

    // The list answers the same.
    const list = await c.request('/epochs');
    expect(list.body.epochs[0]).toMatchObject({ timestamp_status: 'timestamped', timestamps: epoch.timestamps });

    // The stored token is the DER served.
    const [row] = await c.sql<{ token: Buffer; gen_time: string }>('SELECT token, gen_time FROM epoch_timestamps WHERE epoch_seq = ?', 0);
    expect(Buffer.from(row!.token).toString('base64')).toBe(stamp.token_b64);
    expect(row!.gen_time).toBe(stamp.gen_time);
  }, 60_000);

  it('an authority that is down leaves the epoch awaiting; the retry after backoff stores the token once it is up', async () => {
    const c = await setup([tsa.url]);
    await tsa.down();
    try {
      await sealAndClose(c);
      const failed = await tick(c);
      expect(failed).toMatchObject({ claimed: 1, succeeded: 0, retrying: 1 });
      const [req] = await c.sql<{ status: string; last_error: string; run_at: number }>('SELECT status, last_error, run_at FROM epoch_timestamp_requests');
      expect(req).toMatchObject({ status: 'failed' });
      expect(req!.last_error).toMatch(/connect_failed/);
      expect((await c.request('/epochs/0')).body).toMatchObject({ timestamp_status: 'awaiting', timestamps: [] });

      // Not due before its backoff ends.
      expect(await tick(c)).toMatchObject({ claimed: 0 });
      c.clock.set(Number(req!.run_at) + 1);
    } finally {
      await tsa.up();
    }
    expect(await tick(c)).toMatchObject({ claimed: 1, succeeded: 1 });
    const epoch = (await c.request('/epochs/0')).body;
    expect(epoch.timestamp_status).toBe('timestamped');
    const [r] = await verifyEpochTimestamps(epoch.timestamps, epoch.checkpoint, certificatesFromPem(tsa.caPem));
    expect(r!.verified).toBe(true);
  }, 60_000);

  it('a token from an authority outside the configured roots is refused and never stored', async () => {
    const c = await setup([other.url], tsa.caFile);
    await sealAndClose(c);
    expect(await tick(c)).toMatchObject({ claimed: 1, succeeded: 0, retrying: 1 });
    const [req] = await c.sql<{ last_error: string }>('SELECT last_error FROM epoch_timestamp_requests');
    expect(req!.last_error).toMatch(/token refused: tsa_chain/);
    expect(await c.sql('SELECT * FROM epoch_timestamps')).toEqual([]);
    expect((await c.request('/epochs/0')).body).toMatchObject({ timestamp_status: 'awaiting', timestamps: [] });
  }, 60_000);

  it('every configured authority is asked; an epoch closed without one says not_requested', async () => {
    const c = await setup([tsa.url, other.url], writeRoots([tsa.caPem, other.caPem]));
    await sealAndClose(c);
    expect(await tick(c)).toMatchObject({ claimed: 2, succeeded: 2 });
    const epoch = (await c.request('/epochs/0')).body;
    expect(epoch.timestamps.map((t: { tsa: string }) => t.tsa).sort()).toEqual([tsa.url, other.url].sort());
    const results = await verifyEpochTimestamps(epoch.timestamps, epoch.checkpoint, certificatesFromPem(tsa.caPem));
    // Under the first root only, the second authority's token does not chain.
    expect(results.map((r) => r.verified).sort()).toEqual([false, true]);

    await ctx!.close();
    ctx = await createTestContext();
    ({ apiKey: key } = await ctx.signup());
    await sealAndClose(ctx);
    expect((await ctx.request('/epochs/0')).body).toMatchObject({ timestamp_status: 'not_requested', timestamps: [] });
  }, 60_000);
});

describe('the TSA settings', () => {
  const dataDir = () => fs.mkdtempSync(path.join(tsa.dir, 'data-'));
  it('are http(s) URLs without credentials, at most 8', () => {
    expect(loadConfig({ SVC_TSA_URLS: `${tsa.url}, https://tsa.example.com/tsr` }, []).tsaUrls).toEqual([tsa.url, 'https://tsa.example.com/tsr']);
    for (const bad of ['ftp://tsa.example.com', 'https://user:pw@tsa.example.com', 'not a url', Array.from({ length: 9 }, (_, i) => `https://t${i}.example.com`).join(',')]) {
      expect(() => loadConfig({ SVC_TSA_URLS: bad }, []), bad).toThrow(ConfigError);
    }
  });

  it('need a roots file that holds certificates; the start-up check names the setting', async () => {
    const problems = (env: Record<string, string>) => settingProblems(loadConfig({ SVC_DATA_DIR: dataDir(), ...env }, []));
    expect(await problems({ SVC_TSA_URLS: tsa.url })).toEqual([expect.stringMatching(/^SVC_TSA_URLS is set but SVC_TSA_ROOTS_FILE is not/)]);
    expect(await problems({ SVC_TSA_URLS: tsa.url, SVC_TSA_ROOTS_FILE: '/nonexistent/roots.pem' })).toEqual(['SVC_TSA_ROOTS_FILE is not a readable file: /nonexistent/roots.pem']);
    const notPem = path.join(tsa.dir, 'not.pem');
    fs.writeFileSync(notPem, 'hello');
    expect(await problems({ SVC_TSA_URLS: tsa.url, SVC_TSA_ROOTS_FILE: notPem })).toEqual([expect.stringMatching(/^SVC_TSA_ROOTS_FILE holds no usable certificate/)]);
    expect(await problems({ SVC_TSA_URLS: tsa.url, SVC_TSA_ROOTS_FILE: tsa.caFile })).toEqual([]);
  });
});

const rootFiles: string[] = [];
function writeRoots(pems: string[]): string {
  const file = path.join(tsa.dir, `roots-${rootFiles.length}.pem`);
  fs.writeFileSync(file, pems.join('\n'));
  rootFiles.push(file);
  return file;
}

describe('a companion killed while a timestamp is pending', () => {
  it('requests it again after restart: the request survives kill -9 and the token is stored', async () => {
    const dataDir = tempDataDir();
    const db = processDatabase(dataDir);
    const readRows = (sql: string) => db.rows(sql);
    const env = {
      ...db.env,
      SVC_EPOCH_SECONDS: '1',
      SVC_TSA_URLS: tsa.url,
      SVC_TSA_ROOTS_FILE: tsa.caFile,
      SVC_WEBHOOK_ALLOW_LOOPBACK: '1',
      // The lease a killed worker leaves behind expires this soon.
      SVC_WEBHOOK_LEASE_SECONDS: '2',
    };
    // The authority takes requests and answers none until released.
    tsa.hold();
    let apiKey = '';
    let actionKey = '';
    try {
      const first = await start(dataDir, env);
      const signup = await fetch(`${first.url}/signup/checkout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `ts-crash.${process.pid}@example.com` }) });
      expect(signup.ok).toBe(true);
      apiKey = ((await signup.json()) as { api_key: string }).api_key;
      const rec = await fetch(`${first.url}/v1/record`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-key': apiKey }, body: JSON.stringify(recordBody()) });
      expect(rec.status).toBe(201);
      actionKey = ((await rec.json()) as { action_key: string }).action_key;
      // The epoch closes within a second; its request reaches the authority and hangs there.
      await tsa.waitForHeld(1);
      first.child.kill('SIGKILL');
      await first.exited;
      const pending = readRows('SELECT status, lease_owner FROM epoch_timestamp_requests');
      expect(pending.length).toBeGreaterThan(0);
      expect(pending.every((r) => r.status === 'pending' && r.lease_owner !== null)).toBe(true);
      expect(readRows('SELECT * FROM epoch_timestamps')).toEqual([]);
    } finally {
      tsa.release();
    }
    const answered = tsa.requests;
    const second = await start(dataDir, env);
    await second.waitForLog(/"message":"epoch timestamped".*"epoch_seq":0/);
    expect(tsa.requests).toBeGreaterThan(answered);
    const epoch = (await (await fetch(`${second.url}/epochs/0`)).json()) as { timestamp_status: string; timestamps: unknown[]; checkpoint: string };
    expect(epoch.timestamp_status).toBe('timestamped');
    const [r] = await verifyEpochTimestamps(epoch.timestamps, epoch.checkpoint, certificatesFromPem(tsa.caPem));
    expect(r!.verified).toBe(true);

    // svc-verify bundle writes the record's inclusion proof beside its 4 files; the bundle folder
    // then meets a timestamp policy, or fails naming epoch_timestamps.
    const out = path.join(dataDir, 'bundle');
    const lines: string[] = [];
    const cli = (...args: string[]) => verifyMain(args, (x) => lines.push(x), (x) => lines.push(x));
    const saved = process.env.SVC_API_KEY;
    process.env.SVC_API_KEY = apiKey;
    try {
      expect(await cli('bundle', actionKey, '--out', out, '--url', second.url), lines.join('\n')).toBe(0);
    } finally {
      if (saved === undefined) delete process.env.SVC_API_KEY;
      else process.env.SVC_API_KEY = saved;
    }
    expect(fs.existsSync(path.join(out, 'inclusion-proof.json'))).toBe(true);
    const keys = path.join(out, 'service-keys.json');
    lines.length = 0;
    expect(await cli(out, '--keys', keys, '--tsa-roots', tsa.caFile, '--min-timestamps', '1'), lines.join('\n')).toBe(0);
    expect(lines.join('\n')).toMatch(/PASS\s+epoch_timestamps/);
    lines.length = 0;
    expect(await cli(out, '--keys', keys, '--tsa-roots', other.caFile)).toBe(1);
    expect(lines.join('\n')).toMatch(/FAIL\s+epoch_timestamps/);
    fs.rmSync(path.join(out, 'inclusion-proof.json'));
    lines.length = 0;
    expect(await cli(out, '--keys', keys, '--tsa-roots', tsa.caFile)).toBe(1);
    expect(lines.join('\n')).toMatch(/FAIL\s+epoch_timestamps\s+no inclusion-proof\.json/);
    // Without a policy the bundle verifies as before.
    expect(await cli(out, '--keys', keys)).toBe(0);
  }, 120_000);
});

let processDatabases = 0;

/**
 * The process's database on the engine this run tests: its SQLite file in the data directory,
 * or (SVC_TEST_DATABASE=postgres, the vitest project api-on-postgres) a new database on the
 * run's PostgreSQL server, given to the process as SVC_DATABASE_URL; rows read back from it.
 */
function processDatabase(dataDir: string): { env: Record<string, string>; rows: (sql: string) => Record<string, unknown>[] } {
  if (process.env.SVC_TEST_DATABASE === 'postgres') {
    const server = postgresAt(inject('postgresSocketDir')!);
    const name = `ts_crash_${process.pid}_${++processDatabases}`;
    server.psql(`CREATE DATABASE ${name}`);
    return {
      env: { SVC_DATABASE_URL: `postgres:///${name}?host=${encodeURIComponent(server.socketDir)}&user=postgres` },
      rows: (sql) =>
        server
          .psql(`\\c ${name}\nSELECT row_to_json(r)::text FROM (${sql}) r`)
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Record<string, unknown>),
    };
  }
  return {
    env: {},
    rows(sql) {
      const db = new Database(path.join(dataDir, DATABASE_FILE), { readonly: true, fileMustExist: true });
      try {
        return db.prepare(sql).all() as Record<string, unknown>[];
      } finally {
        db.close();
      }
    },
  };
}
