/**
 * The service's own seal-bundle packages carry, beside each bundle whose record's epoch has
 * closed, inclusion-proof.json with the epoch's RFC 3161 tokens and witness cosignatures, so the
 * built `svc-verify` (companion/cli/svc-verify.mjs on dist/) passes a strict timestamp and
 * witness policy on a package exactly as served, tar or zip, with no further fetch. Against a
 * real TSA on loopback (openssl ts -reply, test/helpers/loopback-tsa.ts) and a C2SP witness
 * stand-in (test/helpers/loopback-witness.ts). A record whose epoch is still open has no proof
 * file and strict verification fails naming the checks; roots of another CA fail
 * epoch_timestamps.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkpointOrigin } from '../../companion/anchoring/epochs.ts';
import { independentEvidence, parseVerifiers } from '../../shared/independent-evidence.ts';
import { certificatesFromPem } from '../../shared/timestamp.ts';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import { logVerifierKeyText } from '../../shared/witness.ts';
import { cleanupCompanions } from '../helpers/companion-process.ts';
import { cleanupAuthorities, startTsa } from '../helpers/loopback-tsa.ts';
import type { TsaAuthority } from '../helpers/loopback-tsa.ts';
import { WitnessStandIn } from '../helpers/loopback-witness.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';
import { createTestContext, makeTempDir } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { recordBody } from './pack-fixtures.ts';

let tsa: TsaAuthority;
let other: TsaAuthority;
let witness: WitnessStandIn;
let ctx: TestContext | undefined;
let key: string;
const dirs: string[] = [];

beforeAll(async () => {
  [tsa, other] = await Promise.all([startTsa('Bundle'), startTsa('Elsewhere')]);
  witness = new WitnessStandIn('bundle.test/w1', 0x3c);
  await witness.listen();
}, 60_000);
afterAll(async () => {
  await Promise.all([tsa?.close(), other?.close(), witness?.close()]);
  cleanupAuthorities();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
  witness.state.clear();
  witness.logs.clear();
  cleanupCompanions();
});

async function setup(): Promise<TestContext> {
  ctx = await createTestContext({
    env: {
      SVC_TSA_URLS: tsa.url,
      SVC_TSA_ROOTS_FILE: tsa.caFile,
      SVC_WITNESSES: JSON.stringify([{ name: witness.name, url: witness.url, key: witness.vkey }]),
      SVC_WEBHOOK_ALLOW_LOOPBACK: '1',
    },
  });
  ({ apiKey: key } = ctx.productionTenant());
  const signer = ctx.deps.keyring.production;
  const origin = checkpointOrigin(signer);
  witness.trustLog(origin, logVerifierKeyText(origin, signer.publicKey));
  return ctx;
}

/** Seals a record at hh:15; returns its action key and the packet as /v1/verify takes it. */
async function seal(c: TestContext, hour: number): Promise<{ action_key: string; verify_request: unknown }> {
  c.clock.set(`2025-01-01T${String(hour).padStart(2, '0')}:15:00.000Z`);
  const res = await c.request('/v1/record', { json: recordBody(), key });
  expect(res.status).toBe(201);
  return { action_key: res.body.evidence_packet.action_key, verify_request: res.body.verify_request };
}

/** Closes the hour's epoch, then lets its timestamp and its witness's cosignature arrive. */
async function closeAndWitness(c: TestContext, hour: number): Promise<void> {
  c.clock.set(`2025-01-01T${String(hour + 1).padStart(2, '0')}:00:01.000Z`);
  expect((await c.deps.workers.epochs.closeDue()).length).toBeGreaterThan(0);
  expect(await c.deps.workers.timestamps.worker.tick()).toMatchObject({ succeeded: 1 });
  expect(await c.deps.workers.witnesses.worker.tick()).toMatchObject({ succeeded: 1 });
}

/** The package as served (Accept tar or zip), unpacked by stock tools into a fresh folder. */
async function unpacked(c: TestContext, kind: 'tar' | 'zip', route: string, body: unknown): Promise<string> {
  const res = await c.app.request(route, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: kind === 'tar' ? 'application/x-tar' : 'application/zip', 'x-service-key': key },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  const dir = makeTempDir(`svc-bundle-${kind}-`);
  dirs.push(dir);
  const file = path.join(dir, `package.${kind}`);
  fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  const out = path.join(dir, 'package');
  fs.mkdirSync(out);
  if (kind === 'tar') execFileSync('tar', ['-xf', file], { cwd: out });
  else execFileSync('unzip', ['-q', file], { cwd: out });
  // The package checks with no code of ours, proof files included.
  execFileSync('sha256sum', ['--quiet', '-c', 'SHA256SUMS'], { cwd: out });
  return out;
}

/** The built verifier, as users run it (`svc-verify` is companion/cli/svc-verify.mjs on dist/). */
function svcVerify(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['companion/cli/svc-verify.mjs', ...args], { cwd: REPO_ROOT });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

/** The service's published keys, saved as an auditor saves them. */
async function keysFile(c: TestContext): Promise<string> {
  const dir = makeTempDir('svc-bundle-keys-');
  dirs.push(dir);
  const file = path.join(dir, 'service-keys.json');
  fs.writeFileSync(file, JSON.stringify((await c.request('/.well-known/service-keys.json')).body));
  return file;
}

const strict = (dir: string, keys: string, roots: string) => [
  dir,
  '--keys',
  keys,
  '--tsa-roots',
  roots,
  '--min-timestamps',
  '1',
  '--witness-key',
  witness.vkey,
  '--min-cosignatures',
  '1',
  '--json',
];

type Report = { action_key: string; verified: boolean; checks: { name: string; ok: boolean; detail: string }[] };
const reportsOf = (out: string): Report[] => {
  const v = JSON.parse(out);
  return Array.isArray(v) ? v : [v];
};

describe('seal-bundle packages carry the epoch’s timestamps and cosignatures', () => {
  it('batch tar and zip: svc-verify passes a strict timestamp and witness policy as served; another CA’s roots fail epoch_timestamps', async () => {
    const c = await setup();
    const closed = await seal(c, 10);
    await closeAndWitness(c, 10);
    const keys = await keysFile(c);
    const proofAnswer = (await c.request(`/v1/records/${closed.action_key}/inclusion-proof`, { key })).text;

    for (const kind of ['tar', 'zip'] as const) {
      const dir = await unpacked(c, kind, '/evidence-packets/seal-bundle/batch', { action_keys: [closed.action_key] });
      const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'MANIFEST.json'), 'utf8'));
      const folder = manifest.records[0].path as string;
      expect(manifest.records[0].inclusion_proof).toBe(`${folder}/inclusion-proof.json`);
      expect(manifest.files.map((f: { path: string }) => f.path)).toContain(`${folder}/inclusion-proof.json`);
      // The very bytes GET …/inclusion-proof answers: timestamps and cosignatures included.
      const proofText = fs.readFileSync(path.join(dir, folder, 'inclusion-proof.json'), 'utf8');
      expect(proofText).toBe(proofAnswer);
      const proof = JSON.parse(proofText);
      expect(proof.epoch_header.timestamps).toHaveLength(1);
      expect(proof.epoch_header.cosignatures).toEqual([expect.objectContaining({ witness: witness.name })]);

      const ok = await svcVerify(strict(dir, keys, tsa.caFile));
      expect(ok.code, ok.out + ok.err).toBe(0);
      const [report] = reportsOf(ok.out);
      expect(report!.checks.filter((x) => x.name === 'epoch_timestamps' || x.name === 'witness_cosignatures').map((x) => x.ok)).toEqual([true, true]);

      // The same package under another CA's roots: the token does not chain, the check is named.
      const refused = await svcVerify(strict(dir, keys, other.caFile));
      expect(refused.code).toBe(1);
      const failed = reportsOf(refused.out)[0]!.checks.filter((x) => !x.ok);
      expect(failed.map((x) => x.name)).toEqual(['epoch_timestamps']);
      expect(failed[0]!.detail).toMatch(/^0 of 1 RFC 3161 token verify/);
    }
  }, 120_000);

  it('a record whose epoch is open has no proof file, and strict verification fails naming both checks; the JSON form keeps 4 files per bundle', async () => {
    const c = await setup();
    const closed = await seal(c, 10);
    const sibling = await seal(c, 10);
    await closeAndWitness(c, 10);
    const open = await seal(c, 11);
    const keys = await keysFile(c);

    const json = await c.request('/evidence-packets/seal-bundle/batch', { json: { action_keys: [closed.action_key, sibling.action_key, open.action_key] }, key });
    expect(json.status).toBe(200);
    const [closedEntry, siblingEntry, openEntry] = json.body.records;
    // Two records of one epoch: each its own proof, the same epoch header with its token and cosignature.
    const proofOf = (entry: { inclusion_proof: { content_base64: string } }) => JSON.parse(Buffer.from(entry.inclusion_proof.content_base64, 'base64').toString('utf8'));
    expect(proofOf(siblingEntry).attestation_hash).not.toBe(proofOf(closedEntry).attestation_hash);
    expect(proofOf(siblingEntry).epoch_header).toEqual(proofOf(closedEntry).epoch_header);
    expect(proofOf(siblingEntry).epoch_header.timestamps).toHaveLength(1);
    expect(closedEntry.files.map((f: { name: string }) => f.name)).toEqual(['payload.json', 'attestation.json', 'attestation.sig', 'verify.json']);
    expect(closedEntry.inclusion_proof).toMatchObject({ name: 'inclusion-proof.json', path: `${closedEntry.path}/inclusion-proof.json` });
    expect(openEntry.files).toHaveLength(4);
    expect(openEntry).not.toHaveProperty('inclusion_proof');

    const dir = await unpacked(c, 'tar', '/evidence-packets/seal-bundle/batch', { action_keys: [closed.action_key, sibling.action_key, open.action_key] });
    expect(fs.existsSync(path.join(dir, openEntry.path, 'inclusion-proof.json'))).toBe(false);
    const run = await svcVerify(strict(dir, keys, tsa.caFile));
    expect(run.code).toBe(1);
    const byKey = new Map(reportsOf(run.out).map((r) => [r.action_key, r]));
    expect(byKey.get(closed.action_key)!.verified).toBe(true);
    expect(byKey.get(sibling.action_key)!.verified).toBe(true);
    const openFailed = byKey.get(open.action_key)!.checks.filter((x) => !x.ok);
    expect(openFailed.map((x) => x.name)).toEqual(['epoch_timestamps', 'witness_cosignatures']);
    for (const f of openFailed) expect(f.detail).toMatch(/^no inclusion-proof\.json beside the bundle/);
  }, 120_000);

  it('the single seal-bundle of a posted packet carries its stored record’s proof', async () => {
    const c = await setup();
    const { verify_request: packet } = await seal(c, 10);
    await closeAndWitness(c, 10);
    const keys = await keysFile(c);

    const dir = await unpacked(c, 'zip', '/evidence-packets/seal-bundle', packet);
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'MANIFEST.json'), 'utf8'));
    expect(manifest.records[0].inclusion_proof).toBe(`${manifest.records[0].path}/inclusion-proof.json`);
    const ok = await svcVerify(strict(dir, keys, tsa.caFile));
    expect(ok.code, ok.out + ok.err).toBe(0);

    const json = await c.request('/evidence-packets/seal-bundle', { json: packet, key });
    expect(json.body.records[0].files).toHaveLength(4);
    expect(json.body.records[0].inclusion_proof.name).toBe('inclusion-proof.json');
  }, 120_000);
});

describe('independent evidence as the console and the extension check it (shared/independent-evidence.ts)', () => {
  it('claims a timestamp and a witness only for what verifies on a proof of this record', async () => {
    const c = await setup();
    const { action_key } = await seal(c, 10);
    const keys = trustedKeySet((await c.request('/.well-known/service-keys.json')).body);
    const proofAt = async () => (await c.request(`/v1/records/${action_key}/inclusion-proof`, { key })).body;
    expect((await c.request(`/v1/records/${action_key}/inclusion-proof`, { key })).status).toBe(409); // no proof before the close

    // What the service publishes: its TSA roots (PEM) and its witnesses' keys.
    const published = await c.request('/epochs/verifiers');
    expect(published.status).toBe(200);
    expect(published.body.witnesses).toEqual([{ name: witness.name, key: witness.vkey }]);
    expect(published.body.tsa_roots.flatMap((pem: string) => certificatesFromPem(pem))).toEqual(certificatesFromPem(fs.readFileSync(tsa.caFile, 'utf8')));
    const verifiers = parseVerifiers(published.body);

    c.clock.set('2025-01-01T11:00:01.000Z');
    expect((await c.deps.workers.epochs.closeDue()).length).toBeGreaterThan(0);
    const closed = await proofAt();
    const own = closed.attestation_hash as string;
    expect(await independentEvidence(closed, keys, verifiers, own)).toEqual({ proofFailed: [], timestamp: { state: 'awaiting' }, witnesses: null });

    expect(await c.deps.workers.timestamps.worker.tick()).toMatchObject({ succeeded: 1 });
    expect(await c.deps.workers.witnesses.worker.tick()).toMatchObject({ succeeded: 1 });
    const proof = await proofAt();
    const shown = await independentEvidence(proof, keys, verifiers, own);
    expect(shown).toMatchObject({ proofFailed: [], timestamp: { state: 'verified', by: 'O=Bundle Trust, CN=Bundle TSA' }, witnesses: { state: 'verified', names: [witness.name] } });
    expect((shown.timestamp as { genTime: string }).genTime).toBe(proof.epoch_header.timestamps[0].gen_time);

    // Another CA's roots: the token is refused, not claimed.
    const elsewhere = { ...verifiers, tsaRoots: certificatesFromPem(fs.readFileSync(other.caFile, 'utf8')) };
    expect((await independentEvidence(proof, keys, elsewhere, own)).timestamp).toMatchObject({ state: 'refused', detail: expect.stringContaining('tsa_chain') });
    // No roots, no keys: only what is present, labelled as unchecked.
    expect(await independentEvidence(proof, keys, { tsaRoots: [], witnessKeys: [] }, own)).toMatchObject({
      timestamp: { state: 'present', by: tsa.url },
      witnesses: { state: 'unchecked', names: [witness.name] },
    });
    // A cosignature line edited: the trusted key's line no longer verifies, so the note is refused.
    const cosigned = proof.epoch_header.cosigned_checkpoint as string;
    const line = cosigned.trimEnd().split('\n').at(-1)!;
    const flipped = line.slice(0, -4) + (line.slice(-4, -3) === 'A' ? 'B' : 'A') + line.slice(-3);
    const edited = { ...proof, epoch_header: { ...proof.epoch_header, cosigned_checkpoint: cosigned.replace(line, flipped) } };
    expect((await independentEvidence(edited, keys, verifiers, own)).witnesses).toMatchObject({ state: 'refused' });
    // Tokens and cosignatures pasted onto the proof of another record: nothing is claimed.
    expect(await independentEvidence(proof, keys, verifiers, 'f'.repeat(64))).toEqual({ proofFailed: ['tenant_inclusion'], timestamp: null, witnesses: null });
    // A token over another checkpoint (the same token beside an edited checkpoint) fails the header checks first.
    const moved = { ...proof, epoch_header: { ...proof.epoch_header, checkpoint: String(proof.epoch_header.checkpoint).replace(/\n\d+\n/, '\n999\n') } };
    expect((await independentEvidence(moved, keys, verifiers, own)).proofFailed).toContain('checkpoint');
  }, 60_000);
});
