/**
 * The independent evidence of an epoch (RFC 3161 timestamps and C2SP witness cosignatures) on
 * the PostgreSQL engine: companion processes from source with SVC_DATABASE_URL on a real
 * PostgreSQL server (test/helpers/postgres.ts), a real TSA on loopback (openssl ts -reply,
 * test/helpers/loopback-tsa.ts) and the C2SP tlog-witness stand-in
 * (test/helpers/loopback-witness.ts). The same assertions as the SQLite tests
 * (epoch-timestamps.test.ts, witness.test.ts): a closed epoch is timestamped and cosigned, the
 * token verifies here and with `openssl ts -verify`, the cosigned checkpoint verifies in the
 * C2SP note format, the rows stored are the ones served, the README's auditor recipe (curl, jq,
 * sed, base64, openssl) runs as written; and a companion killed with -9 while
 * both are pending requests them again after restart, losing neither.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyInclusionProof } from '../../shared/anchor-verify.ts';
import { fromBase64Url } from '../../shared/encoding.ts';
import { parseCheckpoint } from '../../shared/epoch.ts';
import { parseVerifierKey } from '../../shared/note.ts';
import { certificatesFromPem, timestampedBytes, verifyEpochTimestamps } from '../../shared/timestamp.ts';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import { checkCosignatures, logVerifierKeyText } from '../../shared/witness.ts';
import { cleanupCompanions, start, tempDataDir } from '../helpers/companion-process.ts';
import type { Companion } from '../helpers/companion-process.ts';
import { cleanupAuthorities, openssl, startTsa } from '../helpers/loopback-tsa.ts';
import type { TsaAuthority } from '../helpers/loopback-tsa.ts';
import { WitnessStandIn } from '../helpers/loopback-witness.ts';
import { startPostgres } from '../helpers/postgres.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';
import type { TestPostgres } from '../helpers/postgres.ts';
import { recordBody } from './pack-fixtures.ts';

let pg: TestPostgres;
let tsa: TsaAuthority;
let witness: WitnessStandIn;
let databases = 0;

beforeAll(async () => {
  pg = startPostgres();
  witness = new WitnessStandIn('anchoring-pg.test/w1', 0x6b);
  [tsa] = await Promise.all([startTsa('Test'), witness.listen()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([tsa?.close(), witness?.close()]);
  cleanupAuthorities();
  pg?.stop();
});
afterEach(() => {
  cleanupCompanions();
  witness.state.clear();
  witness.logs.clear();
  witness.seen.length = 0;
});

/** A new database on the server, and the companion's settings for it, the TSA and the witness. */
function companionEnv(): { env: Record<string, string>; rows: (sql: string) => Record<string, string>[] } {
  const name = `anchoring_${process.pid}_${++databases}`;
  pg.psql(`CREATE DATABASE ${name}`);
  const env = {
    SVC_DATABASE_URL: `postgres:///${name}?host=${encodeURIComponent(pg.socketDir)}&user=postgres`,
    SVC_EPOCH_SECONDS: '1',
    SVC_TSA_URLS: tsa.url,
    SVC_TSA_ROOTS_FILE: tsa.caFile,
    SVC_WITNESSES: JSON.stringify([{ name: witness.name, url: witness.url, key: witness.vkey }]),
    SVC_WEBHOOK_ALLOW_LOOPBACK: '1',
    // The lease a killed worker leaves behind expires this soon. It is also each request's
    // deadline: long enough for openssl and the witness on a loaded two-core machine, since a
    // cut-off submission waits out its backoff while later epochs are cosigned past it.
    SVC_WEBHOOK_LEASE_SECONDS: '8',
  };
  // Rows as psql prints them (unaligned, tuples only), one JSON object a row.
  const rows = (sql: string) =>
    pg
      .psql(`\\c ${name}\nSELECT row_to_json(r)::text FROM (${sql}) r`)
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, string>);
  return { env, rows };
}

/** The witness operator configures the log's key: the production key's origin is svc/epochs/<kid>. */
async function trustTheLog(c: Companion): Promise<void> {
  const jwks = (await (await fetch(`${c.url}/.well-known/service-keys.json`)).json()) as { keys: { kid: string; x: string }[] };
  for (const { kid, x } of jwks.keys) witness.trustLog(`svc/epochs/${kid}`, logVerifierKeyText(`svc/epochs/${kid}`, fromBase64Url(x)));
}

/** Signs a tenant up and seals one record; returns its API key and the record's action key. */
async function sealOne(c: Companion, label: string): Promise<{ apiKey: string; actionKey: string }> {
  const signup = await fetch(`${c.url}/signup/checkout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `${label}.${process.pid}@example.com` }) });
  expect(signup.ok).toBe(true);
  const apiKey = ((await signup.json()) as { api_key: string }).api_key;
  const rec = await fetch(`${c.url}/v1/record`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-key': apiKey }, body: JSON.stringify(recordBody()) });
  expect(rec.status).toBe(201);
  return { apiKey, actionKey: ((await rec.json()) as { action_key: string }).action_key };
}

interface Epoch {
  checkpoint: string;
  timestamp_status: string;
  timestamps: { tsa: string; gen_time: string; token_b64: string }[];
  cosigned_checkpoint: string;
  cosignatures: unknown[];
}

/**
 * The epoch as served, once `ready` holds (polled): after a restart, which epoch's
 * cosignature covers epoch 0 is only known from the rows.
 */
async function epochWhen(c: Companion, seq: number, ready: (e: Epoch) => boolean): Promise<Epoch> {
  for (;;) {
    const res = await fetch(`${c.url}/epochs/${seq}`);
    if (res.status === 200) {
      const e = (await res.json()) as Epoch;
      if (ready(e)) return e;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Resolves once the query returns a row (polled, like epochWhen). */
async function rowsWhen(rows: (sql: string) => Record<string, string>[], sql: string): Promise<void> {
  while (rows(sql).length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
}

/** The size the witness stand-in last cosigned (one log per test). */
const witnessSize = () => Math.max(0, ...[...witness.state.values()].map((v) => v.size));

const witnessPolicy = () => ({ minCosignatures: 1, witnessKeys: [parseVerifierKey(witness.vkey)] });

/** Both kinds of evidence of an epoch, checked as an auditor would. */
async function expectIndependentEvidence(epoch: Epoch): Promise<void> {
  expect(epoch.timestamp_status).toBe('timestamped');
  expect(epoch.timestamps).toHaveLength(1);
  const [ours] = await verifyEpochTimestamps(epoch.timestamps, epoch.checkpoint, certificatesFromPem(tsa.caPem));
  expect(ours!.checks.filter((x) => !x.ok)).toEqual([]);
  expect(ours!.verified).toBe(true);
  expect(epoch.cosignatures).toHaveLength(1);
  expect((await checkCosignatures(epoch.cosigned_checkpoint, witnessPolicy())).ok).toBe(true);
}

describe('timestamps and witness cosignatures on PostgreSQL', () => {
  it('a closed epoch is timestamped and cosigned; the token verifies here and with openssl ts -verify; the rows stored are the ones served', async () => {
    const { env, rows } = companionEnv();
    const dataDir = tempDataDir();
    const c = await start(dataDir, env);
    await trustTheLog(c);
    const { apiKey, actionKey } = await sealOne(c, 'anchoring-pg');
    // The lines are written once the rows have committed (the job worker's settled hook, core/jobs/worker.ts):
    // read at once after them, the epoch shows both.
    await c.waitForLog(/"message":"epoch timestamped".*"epoch_seq":0,/);
    await c.waitForLog(/"message":"checkpoint cosigned".*"epoch_seq":0,/);
    const epoch = (await (await fetch(`${c.url}/epochs/0`)).json()) as Epoch;
    await expectIndependentEvidence(epoch);
    const [stamp] = epoch.timestamps;
    expect(stamp!.tsa).toBe(tsa.url);

    // openssl, from the bytes alone.
    const dir = fs.mkdtempSync(path.join(dataDir, 'ts-'));
    const body = path.join(dir, 'body.txt');
    const token = path.join(dir, 'token.der');
    fs.writeFileSync(body, timestampedBytes(epoch.checkpoint));
    fs.writeFileSync(token, Buffer.from(stamp!.token_b64, 'base64'));
    expect(await openssl(['ts', '-verify', '-data', body, '-in', token, '-token_in', '-CAfile', tsa.caFile])).toContain('Verification: OK');
    // The README's auditor recipe, as written there (for epoch 0, its example says 7), in a shell.
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const recipe = /An auditor needs no code of ours:\n\n\s*```sh\n([\s\S]*?)\n\s*```/.exec(readme);
    expect(recipe, 'the README keeps its auditor recipe').not.toBeNull();
    const script = recipe![1]!.replace(/^ {2}/gm, '');
    expect(script).toContain('$BASE/epochs/7');
    fs.copyFileSync(tsa.caFile, path.join(dir, 'tsa-roots.pem'));
    const auditor = execFileSync('sh', ['-e', '-c', script.replace('$BASE/epochs/7', '$BASE/epochs/0')], { cwd: dir, env: { ...process.env, BASE: c.url }, encoding: 'utf8' });
    expect(auditor).toContain('Verification: OK');
    const genTime = new Date(stamp!.gen_time);
    expect(auditor).toMatch(new RegExp(`Time stamp: ${genTime.toUTCString().slice(8, 11)} +${genTime.getUTCDate()} ${genTime.toISOString().slice(11, 19)} ${genTime.getUTCFullYear()} GMT`));

    // The inclusion proof carries the same tokens and the cosigned checkpoint beside its signed header.
    const proofRes = await fetch(`${c.url}/v1/records/${actionKey}/inclusion-proof`, { headers: { 'x-service-key': apiKey } });
    expect(proofRes.status).toBe(200);
    const proof = (await proofRes.json()) as { epoch_header: Record<string, unknown> };
    expect(proof.epoch_header).toMatchObject({ timestamp_status: 'timestamped', timestamps: epoch.timestamps, cosigned_checkpoint: epoch.cosigned_checkpoint });
    const keys = trustedKeySet(await (await fetch(`${c.url}/.well-known/service-keys.json`)).json());
    expect((await verifyInclusionProof(proof, keys)).verified).toBe(true);

    // What PostgreSQL holds: the token's DER as served, one done request, one done submission, one cosignature.
    const [row] = rows("SELECT encode(token, 'base64') AS token, gen_time FROM epoch_timestamps WHERE epoch_seq = 0");
    expect(row!.token!.replace(/\s+/g, '')).toBe(stamp!.token_b64);
    expect(row!.gen_time).toBe(stamp!.gen_time);
    expect(rows('SELECT status FROM epoch_timestamp_requests WHERE epoch_seq = 0')).toEqual([{ status: 'timestamped' }]);
    expect(rows('SELECT status FROM witness_submissions WHERE epoch_seq = 0')).toEqual([{ status: 'done' }]);
    expect(rows('SELECT epoch_seq FROM epoch_cosignatures WHERE epoch_seq = 0')).toEqual([{ epoch_seq: 0 }]);
    c.child.kill('SIGTERM');
    await c.exited;
  }, 120_000);

  it('a companion killed with -9 while both are pending requests them again after restart; neither is lost', async () => {
    const { env, rows } = companionEnv();
    const dataDir = tempDataDir();
    // The authority and the witness take requests and answer none until released.
    tsa.hold();
    witness.hold();
    try {
      const first = await start(dataDir, env);
      await trustTheLog(first);
      await sealOne(first, 'anchoring-pg-crash');
      // The epoch closes within a second; its request and its submission hang at the other end.
      await Promise.all([tsa.waitForHeld(1), witness.waitForHeld(1)]);
      first.child.kill('SIGKILL');
      await first.exited;
      const requests = rows('SELECT status, lease_owner FROM epoch_timestamp_requests');
      expect(requests.length).toBeGreaterThan(0);
      expect(requests.every((r) => r.status === 'pending' && r.lease_owner !== null)).toBe(true);
      const submissions = rows('SELECT status, lease_owner FROM witness_submissions');
      expect(submissions.length).toBeGreaterThan(0);
      expect(submissions.every((r) => r.status === 'pending' && r.lease_owner !== null)).toBe(true);
      expect(rows('SELECT epoch_seq FROM epoch_timestamps')).toEqual([]);
      expect(rows('SELECT epoch_seq FROM epoch_cosignatures')).toEqual([]);
    } finally {
      tsa.release();
      witness.release();
    }
    const answered = tsa.requests;
    const second = await start(dataDir, env);
    const epoch = await epochWhen(second, 0, (e) => e.timestamp_status === 'timestamped');
    await rowsWhen(rows, "SELECT status FROM witness_submissions WHERE epoch_seq = 0 AND status = 'done'");
    expect(tsa.requests).toBeGreaterThan(answered);
    expect(epoch.timestamp_status).toBe('timestamped');
    const [stamp] = await verifyEpochTimestamps(epoch.timestamps, epoch.checkpoint, certificatesFromPem(tsa.caPem));
    expect(stamp!.verified).toBe(true);
    expect(rows('SELECT status FROM epoch_timestamp_requests WHERE epoch_seq = 0')).toEqual([{ status: 'timestamped' }]);

    // The submission is sent again and completes. Epochs close every second meanwhile, so the
    // restarted companion may have had a later checkpoint cosigned before the killed
    // submission's lease expired: the witness is then past epoch 0, whose submission ends
    // "superseded" (tlog-witness: a witness cosigns only a checkpoint that extends its latest),
    // and the later cosigned checkpoint, consistent with it, is what covers it.
    const [submission] = rows('SELECT status, outcome FROM witness_submissions WHERE epoch_seq = 0');
    expect(submission!.status).toBe('done');
    const covering = submission!.outcome === 'cosigned' ? 0 : witnessSize() - 1;
    expect(submission!.outcome === 'cosigned' || (submission!.outcome === 'superseded' && covering > 0)).toBe(true);
    const cosigned = await epochWhen(second, covering, (e) => e.cosignatures.length > 0);
    expect(cosigned.cosignatures).toHaveLength(1);
    expect((await checkCosignatures(cosigned.cosigned_checkpoint, witnessPolicy())).ok).toBe(true);
    expect(parseCheckpoint(cosigned.checkpoint).size).toBeGreaterThan(parseCheckpoint(epoch.checkpoint).size - 1);
    second.child.kill('SIGTERM');
    await second.exited;
  }, 120_000);
});
