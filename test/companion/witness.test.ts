/**
 * Witnessed checkpoints against a witness stand-in on loopback that implements the C2SP
 * tlog-witness protocol as its text says (its own Ed25519 key; per log origin the last size
 * and root it cosigned; the log's signature checked against the log key it was configured with;
 * the RFC 9162 consistency proof checked; 400/403/404/409/422 as specified; answers with
 * cosignature/v1 lines): every closed epoch is cosigned from the size the witness last saw, a
 * 409 teaches that size, the cosigned checkpoint is served and verifies in the C2SP note
 * format, a forked log (two checkpoints of one size with different roots, both signed with the
 * service's key) is refused, svc-verify's witness policy fails a proof without cosignatures
 * naming the check, and a companion killed with -9 while a submission is pending sends it after
 * restart.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkpointOrigin } from '../../companion/anchoring/epochs.ts';
import { main as verifyMain } from '../../companion/cli/verify.ts';
import { DATABASE_FILE } from '../../companion/core/db.ts';
import { loadConfig } from '../../companion/core/config.ts';
import { settingProblems } from '../../companion/core/settings-check.ts';
import { getPublicKey } from '../../shared/ed25519.ts';
import { fromBase64Url, utf8 } from '../../shared/encoding.ts';
import { checkpointBody, parseCheckpoint, signedNote } from '../../shared/epoch.ts';
import { NOTE_TYPE_COSIGNATURE_V1, formatVerifierKey, parseNote, parseVerifierKey } from '../../shared/note.ts';
import { TLOG_SIZE_CONTENT_TYPE, addCheckpointBody, checkCosignatures, logVerifierKeyText } from '../../shared/witness.ts';
import { cleanupCompanions, start, tempDataDir } from '../helpers/companion-process.ts';
import { WitnessStandIn } from '../helpers/loopback-witness.ts';
import { createTestContext, makeTempDir } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { recordBody } from './pack-fixtures.ts';

// ---- the witness stand-in: test/helpers/loopback-witness.ts ----

// ---- the companion side ----

let witness: WitnessStandIn;
let ctx: TestContext | undefined;
let key: string;
const tmpDirs: string[] = [];

beforeAll(async () => {
  witness = new WitnessStandIn('witness.test/w1', 0x5a);
  await witness.listen();
});
afterAll(async () => {
  await witness.close();
  for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
});
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
  witness.state.clear();
  witness.logs.clear();
  witness.seen.length = 0;
  cleanupCompanions();
});

function witnessesEnv(w: WitnessStandIn): Record<string, string> {
  return { SVC_WITNESSES: JSON.stringify([{ name: w.name, url: w.url, key: w.vkey }]), SVC_WEBHOOK_ALLOW_LOOPBACK: '1' };
}

async function setup(): Promise<TestContext> {
  ctx = await createTestContext({ env: witnessesEnv(witness) });
  ({ apiKey: key } = await ctx.signup());
  const signer = ctx.deps.keyring.production;
  const origin = checkpointOrigin(signer);
  witness.trustLog(origin, logVerifierKeyText(origin, signer.publicKey));
  return ctx;
}

/** Seals a record in hour `hour` and closes its epoch; returns the record's action key. */
async function sealAndClose(c: TestContext, hour: number): Promise<string> {
  c.clock.set(`2025-01-01T${String(hour).padStart(2, '0')}:15:00.000Z`);
  const res = await c.request('/v1/record', { json: recordBody(), key });
  expect(res.status).toBe(201);
  c.clock.set(`2025-01-01T${String(hour + 1).padStart(2, '0')}:00:01.000Z`);
  expect((await c.deps.workers.epochs.closeDue()).length).toBe(1);
  return res.body.evidence_packet.action_key as string;
}

const tick = (c: TestContext) => c.deps.workers.witnesses.worker.tick();
const policy = () => ({ minCosignatures: 1, witnessKeys: [parseVerifierKey(witness.vkey)] });

/** A checkpoint of the epoch log the companion never had, signed with its production key. */
function forgedCheckpoint(c: TestContext, size: number, rootByte: number): string {
  const signer = c.deps.keyring.production;
  const origin = checkpointOrigin(signer);
  const body = checkpointBody(origin, size, new Uint8Array(32).fill(rootByte));
  return signedNote(body, origin, signer.publicKey, signer.sign(utf8(body)));
}

async function svcVerify(args: string[]): Promise<{ code: number; out: string }> {
  const out: string[] = [];
  const code = await verifyMain(args, (s) => out.push(s), (s) => out.push(s));
  return { code, out: out.join('\n') };
}

function tempFile(name: string, content: string): string {
  const dir = makeTempDir('svc-witness-');
  tmpDirs.push(dir);
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}

describe('witness submissions', () => {
  it('every closed epoch is cosigned from the size the witness last cosigned; the cosigned checkpoint is served and verifies', async () => {
    const c = await setup();
    const firstKey = await sealAndClose(c, 10);
    expect((await c.request('/epochs/0')).body).toMatchObject({ cosignatures: [] });
    expect(await tick(c)).toMatchObject({ claimed: 1, succeeded: 1, retrying: 0 });
    expect(witness.seen).toEqual([{ oldSize: 0, proofLines: 0, size: 1, status: 200 }]);

    const epoch0 = (await c.request('/epochs/0')).body;
    expect(epoch0.cosignatures).toEqual([{ witness: witness.name, key_id: parseVerifierKey(witness.vkey).keyIdHex, timestamp: expect.any(Number) }]);
    // The same note text as the log signed, the log's line first, then the witness's.
    expect(parseNote(epoch0.cosigned_checkpoint).text).toBe(parseNote(epoch0.checkpoint).text);
    expect(parseNote(epoch0.cosigned_checkpoint).signatures.map((s) => s.name)).toEqual([checkpointOrigin(c.deps.keyring.production), witness.name]);
    expect((await checkCosignatures(epoch0.cosigned_checkpoint, policy())).ok).toBe(true);
    // A key the witness does not hold finds nothing, and the check says which is missing.
    const stranger = formatVerifierKey('witness.test/w2', NOTE_TYPE_COSIGNATURE_V1, getPublicKey(new Uint8Array(32).fill(1)));
    expect((await checkCosignatures(epoch0.cosigned_checkpoint, { minCosignatures: 1, witnessKeys: [parseVerifierKey(stranger)] })).detail).toMatch(/missing: witness\.test\/w2/);

    const text = await c.request('/checkpoint');
    expect(text.status).toBe(200);
    expect(text.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(text.text).toBe(epoch0.cosigned_checkpoint);

    // The next epoch goes from size 1, with the RFC 9162 proof from 1 to 2.
    await sealAndClose(c, 11);
    expect(await tick(c)).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(witness.seen[1]).toEqual({ oldSize: 1, proofLines: 1, size: 2, status: 200 });
    expect(await c.sql('SELECT witness, size FROM witness_states')).toEqual([{ witness: witness.name, size: 2 }]);
    expect(await c.sql("SELECT epoch_seq, status, outcome FROM witness_submissions ORDER BY epoch_seq")).toEqual([
      { epoch_seq: 0, status: 'done', outcome: 'cosigned' },
      { epoch_seq: 1, status: 'done', outcome: 'cosigned' },
    ]);
    expect((await c.request('/checkpoint')).text).toBe((await c.request('/epochs/1')).body.cosigned_checkpoint);

    // The inclusion proof carries the cosignatures; svc-verify's witness policy passes it.
    const proof = await c.request(`/v1/records/${firstKey}/inclusion-proof`, { key });
    expect(proof.status).toBe(200);
    expect(proof.body.epoch_header.cosigned_checkpoint).toBe(epoch0.cosigned_checkpoint);
    const jwks = tempFile('keys.json', JSON.stringify((await c.request('/.well-known/service-keys.json')).body));
    const file = tempFile('proof.json', JSON.stringify(proof.body));
    const ok = await svcVerify([file, '--keys', jwks, '--witness-key', witness.vkey, '--json']);
    expect(ok.code, ok.out).toBe(0);
    expect(JSON.parse(ok.out).checks.at(-1)).toMatchObject({ name: 'witness_cosignatures', ok: true });
  }, 60_000);

  it("learns the witness's size from a 409 and submits again from there", async () => {
    const c = await setup();
    await sealAndClose(c, 10);
    expect(await tick(c)).toMatchObject({ succeeded: 1 });
    // This companion forgets what the witness holds (a restore, another companion...).
    await c.sql('DELETE FROM witness_states');
    await sealAndClose(c, 11);
    expect(await tick(c)).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(witness.seen.slice(1)).toEqual([
      { oldSize: 0, proofLines: 0, size: 2, status: 409 },
      { oldSize: 1, proofLines: 1, size: 2, status: 200 },
    ]);
    expect((await c.request('/epochs/1')).body.cosignatures).toHaveLength(1);
  }, 60_000);

  it('an epoch the witness has already seen past is superseded, not retried forever', async () => {
    const c = await setup();
    await sealAndClose(c, 10);
    await sealAndClose(c, 11);
    // The submission of epoch 1 runs first: the witness then holds size 2.
    const [later] = await c.sql<{ run_at: number }>('SELECT run_at FROM witness_submissions WHERE epoch_seq = 1');
    await c.sql('UPDATE witness_submissions SET run_at = ? WHERE epoch_seq = 0', Number(later!.run_at) + 60_000);
    expect(await tick(c)).toMatchObject({ claimed: 1, succeeded: 1 });
    c.clock.set('2025-01-01T12:10:00.000Z');
    expect(await tick(c)).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(await c.sql('SELECT epoch_seq, outcome FROM witness_submissions ORDER BY epoch_seq')).toEqual([
      { epoch_seq: 0, outcome: 'superseded' },
      { epoch_seq: 1, outcome: 'cosigned' },
    ]);
    expect(witness.seen).toEqual([{ oldSize: 0, proofLines: 0, size: 2, status: 200 }]);
  }, 60_000);
});

describe('a forked log', () => {
  it('is refused by the witness: same size, other root (409); a proof that does not verify (422); an unknown origin (404); an untrusted key (403)', async () => {
    const c = await setup();
    await sealAndClose(c, 10);
    await sealAndClose(c, 11);
    // One at a time, oldest first.
    expect(await tick(c)).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(await tick(c)).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(witness.state.values().next().value!.size).toBe(2);
    const post = async (body: string) => {
      const res = await fetch(`${witness.url}/add-checkpoint`, { method: 'POST', body });
      return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
    };

    // Same size as the witness's, another root, signed by the service's own key.
    const fork = forgedCheckpoint(c, 2, 0xee);
    expect(await post(addCheckpointBody(2, [], fork))).toEqual({ status: 409, type: TLOG_SIZE_CONTENT_TYPE, text: '2\n' });
    // Larger, with a proof from the witness's size that cannot reach the forged root.
    const epoch1 = parseCheckpoint((await c.request('/epochs/1')).body.checkpoint);
    expect((await post(addCheckpointBody(2, [epoch1.root], forgedCheckpoint(c, 3, 0xee)))).status).toBe(422);
    expect(witness.state.values().next().value!).toMatchObject({ size: 2 });
    // Unknown origin; an origin it knows signed by another key.
    const otherSeed = new Uint8Array(32).fill(3);
    const otherBody = checkpointBody('example.test/other-log', 1, new Uint8Array(32));
    expect((await post(addCheckpointBody(0, [], signedNote(otherBody, 'example.test/other-log', getPublicKey(otherSeed), new Uint8Array(64))))).status).toBe(404);
    const origin = checkpointOrigin(c.deps.keyring.production);
    const impostor = checkpointBody(origin, 3, new Uint8Array(32));
    const { signEd25519 } = await import('../../shared/ed25519.ts');
    expect((await post(addCheckpointBody(2, [], signedNote(impostor, origin, getPublicKey(otherSeed), signEd25519(otherSeed, utf8(impostor)))))).status).toBe(403);
    // Malformed: old beyond the checkpoint, and not the format at all.
    expect((await post(addCheckpointBody(3, [], forgedCheckpoint(c, 2, 1)))).status).toBe(400);
    expect((await post('old two\n\nnothing')).status).toBe(400);
  }, 60_000);

  it('a companion whose witness cosigned another history at the same size is refused, and keeps no cosignature', async () => {
    const c = await setup();
    await sealAndClose(c, 10);
    // Someone holding the service's key showed the witness a different checkpoint of size 1 first.
    const fork = forgedCheckpoint(c, 1, 0xee);
    expect(await witness.addCheckpoint(addCheckpointBody(0, [], fork))).toMatchObject({ status: 200 });
    expect(await tick(c)).toMatchObject({ claimed: 1, succeeded: 0, retrying: 1 });
    // 0 → 409 with size 1 → 1 → 409 again at the size sent: the witness holds another root.
    expect(witness.seen.slice(1).map((s) => [s.oldSize, s.status])).toEqual([[0, 409], [1, 409]]);
    const [row] = await c.sql<{ status: string; last_error: string }>('SELECT status, last_error FROM witness_submissions');
    expect(row).toMatchObject({ status: 'failed' });
    expect(row!.last_error).toMatch(/different root at size 1 \(split view\)/);
    expect(await c.sql('SELECT * FROM epoch_cosignatures')).toEqual([]);
    expect(c.log.entries.some((l) => l.level === 'error' && /split view/.test(l.message))).toBe(true);
  }, 60_000);
});

describe('svc-verify witness policy', () => {
  it('fails an inclusion proof without cosignatures naming witness_cosignatures; passes once cosigned', async () => {
    const c = await setup();
    const actionKey = await sealAndClose(c, 10);
    const jwks = tempFile('keys.json', JSON.stringify((await c.request('/.well-known/service-keys.json')).body));
    const uncosigned = tempFile('proof.json', JSON.stringify((await c.request(`/v1/records/${actionKey}/inclusion-proof`, { key })).body));
    // Without the policy the proof verifies: the log's own signatures are all there.
    expect((await svcVerify([uncosigned, '--keys', jwks])).code).toBe(0);
    const strict = await svcVerify([uncosigned, '--keys', jwks, '--witness-key', witness.vkey, '--json']);
    expect(strict.code).toBe(1);
    const failed = JSON.parse(strict.out).checks.filter((x: { ok: boolean }) => !x.ok);
    expect(failed).toEqual([{ name: 'witness_cosignatures', ok: false, detail: expect.stringMatching(/0 of the required 1 .*missing: witness\.test\/w1/) }]);
    const text = await svcVerify([uncosigned, '--keys', jwks, '--witness-key', witness.vkey]);
    expect(text.out).toMatch(/FAIL {2}witness_cosignatures/);
    expect(text.out).toMatch(/NOT VERIFIED \(witness_cosignatures\)/);

    // A cosigned checkpoint of another epoch pasted in is not this checkpoint's.
    expect(await tick(c)).toMatchObject({ succeeded: 1 });
    const proof = (await c.request(`/v1/records/${actionKey}/inclusion-proof`, { key })).body;
    const cosigned = tempFile('cosigned.json', JSON.stringify(proof));
    expect((await svcVerify([cosigned, '--keys', jwks, '--witness-key', witness.vkey])).code).toBe(0);
    const swapped = { ...proof, epoch_header: { ...proof.epoch_header, cosigned_checkpoint: forgedCheckpoint(c, 1, 7) } };
    const bad = await svcVerify([tempFile('swapped.json', JSON.stringify(swapped)), '--keys', jwks, '--witness-key', witness.vkey, '--json']);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.out).checks.at(-1)).toMatchObject({ name: 'witness_cosignatures', ok: false, detail: 'cosigned_checkpoint is not the checkpoint the log signed' });

    // Usage: more required than trusted keys, and a key that is not a cosigner's.
    expect((await svcVerify([cosigned, '--keys', jwks, '--witness-key', witness.vkey, '--min-cosignatures', '2'])).code).toBe(2);
    const logKey = logVerifierKeyText(checkpointOrigin(c.deps.keyring.production), c.deps.keyring.production.publicKey);
    expect((await svcVerify([cosigned, '--keys', jwks, '--witness-key', logKey])).out).toMatch(/type 0x04/);
  }, 60_000);
});

describe('svc-verify witness policy on a seal bundle folder', () => {
  it('reads the inclusion proof beside the bundle: fails witness_cosignatures until its checkpoint is cosigned', async () => {
    const c = await setup();
    const actionKey = await sealAndClose(c, 10);
    const jwks = tempFile('keys.json', JSON.stringify((await c.request('/.well-known/service-keys.json')).body));
    const batch = await c.request('/evidence-packets/seal-bundle/batch', { method: 'POST', json: { action_keys: [actionKey] }, key });
    expect(batch.status).toBe(200);
    const dir = path.dirname(tempFile('.keep', ''));
    for (const f of batch.body.records[0].files as { name: string; content_base64: string }[]) fs.writeFileSync(path.join(dir, f.name), Buffer.from(f.content_base64, 'base64'));
    const run = async () => {
      const r = await svcVerify([dir, '--keys', jwks, '--witness-key', witness.vkey, '--json']);
      return { code: r.code, check: JSON.parse(r.out).checks.at(-1) };
    };
    expect(await run()).toMatchObject({ code: 1, check: { name: 'witness_cosignatures', ok: false, detail: expect.stringMatching(/^no inclusion-proof\.json beside the bundle/) } });
    fs.writeFileSync(path.join(dir, 'inclusion-proof.json'), JSON.stringify((await c.request(`/v1/records/${actionKey}/inclusion-proof`, { key })).body));
    expect(await run()).toMatchObject({ code: 1, check: { name: 'witness_cosignatures', ok: false, detail: expect.stringMatching(/missing: witness\.test\/w1/) } });
    expect(await tick(c)).toMatchObject({ succeeded: 1 });
    fs.writeFileSync(path.join(dir, 'inclusion-proof.json'), JSON.stringify((await c.request(`/v1/records/${actionKey}/inclusion-proof`, { key })).body));
    expect(await run()).toMatchObject({ code: 0, check: { name: 'witness_cosignatures', ok: true } });
  }, 60_000);
});

describe('witness settings', () => {
  it('are checked at start: a bad SVC_WITNESSES entry, an unreadable or invalid SVC_WITNESSES_FILE, both at once', async () => {
    const entry = { name: witness.name, url: witness.url, key: witness.vkey };
    expect(loadConfig({ SVC_WITNESSES: JSON.stringify([entry]) }, []).witnesses.map((w) => w.name)).toEqual([witness.name]);
    expect(() => loadConfig({ SVC_WITNESSES: JSON.stringify([{ ...entry, name: 'someone.else' }]) }, [])).toThrow(/SVC_WITNESSES\[0\]\.name: expected the key's name/);
    const dataDir = makeTempDir('svc-witness-settings-');
    tmpDirs.push(dataDir);
    const good = tempFile('witnesses.json', JSON.stringify([entry]));
    expect(await settingProblems(loadConfig({ SVC_DATA_DIR: dataDir, SVC_WITNESSES_FILE: good }, []))).toEqual([]);
    const bad = tempFile('witnesses.json', JSON.stringify([{ ...entry, key: 'not a key' }]));
    expect(await settingProblems(loadConfig({ SVC_DATA_DIR: dataDir, SVC_WITNESSES_FILE: bad }, []))).toEqual(['SVC_WITNESSES_FILE[0].key: expected <name>+<8 hex digits>+<base64>']);
    expect(await settingProblems(loadConfig({ SVC_DATA_DIR: dataDir, SVC_WITNESSES_FILE: path.join(dataDir, 'missing.json') }, []))).toEqual([
      `SVC_WITNESSES_FILE is not a readable file: ${path.join(dataDir, 'missing.json')}`,
    ]);
    expect(await settingProblems(loadConfig({ SVC_DATA_DIR: dataDir, SVC_WITNESSES_FILE: good, SVC_WITNESSES: JSON.stringify([entry]) }, []))).toEqual([
      'SVC_WITNESSES and SVC_WITNESSES_FILE are both set: set one',
    ]);
  });
});

describe('a companion killed while a submission is pending', () => {
  it('sends it after restart: the submission survives kill -9 and the cosignature is stored', async () => {
    const dataDir = tempDataDir();
    const env = { SVC_EPOCH_SECONDS: '1', ...witnessesEnv(witness), SVC_WEBHOOK_LEASE_SECONDS: '2' };
    witness.hold();
    try {
      const first = await start(dataDir, env);
      const jwks = (await (await fetch(`${first.url}/.well-known/service-keys.json`)).json()) as { keys: { kid: string; x: string }[] };
      // The witness operator configures the log's key: the production key's origin is svc/epochs/<kid>.
      for (const { kid, x } of jwks.keys) witness.trustLog(`svc/epochs/${kid}`, logVerifierKeyText(`svc/epochs/${kid}`, fromBase64Url(x)));
      const signup = await fetch(`${first.url}/signup/checkout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `witness-crash.${process.pid}@example.com` }) });
      expect(signup.ok).toBe(true);
      const apiKey = ((await signup.json()) as { api_key: string }).api_key;
      const rec = await fetch(`${first.url}/v1/record`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-key': apiKey }, body: JSON.stringify(recordBody()) });
      expect(rec.status).toBe(201);
      // The epoch closes within a second; its submission reaches the witness and hangs there.
      await witness.waitForHeld(1);
      first.child.kill('SIGKILL');
      await first.exited;
      const pending = readRows(dataDir, 'SELECT status, lease_owner FROM witness_submissions');
      expect(pending.length).toBeGreaterThan(0);
      expect(pending.every((r) => r.status === 'pending' && r.lease_owner !== null)).toBe(true);
      expect(readRows(dataDir, 'SELECT * FROM epoch_cosignatures')).toEqual([]);
    } finally {
      witness.release();
    }
    const second = await start(dataDir, env);
    await second.waitForLog(/"message":"checkpoint cosigned".*"epoch_seq":0/);
    const epoch = (await (await fetch(`${second.url}/epochs/0`)).json()) as { cosigned_checkpoint: string; cosignatures: unknown[] };
    expect(epoch.cosignatures).toHaveLength(1);
    expect((await checkCosignatures(epoch.cosigned_checkpoint, policy())).ok).toBe(true);
    // Sent again after the restart (the held request was answered to a dead socket, if at all).
    expect(witness.seen.filter((s) => s.status === 200).length).toBeGreaterThanOrEqual(1);
    expect(readRows(dataDir, "SELECT status FROM witness_submissions WHERE epoch_seq = 0")).toEqual([{ status: 'done' }]);
  }, 90_000);
});

function readRows(dataDir: string, sql: string): Record<string, unknown>[] {
  const db = new Database(path.join(dataDir, DATABASE_FILE), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}
