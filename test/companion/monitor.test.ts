/**
 * `svc-verify monitor` against a companion on loopback: the first run keeps the checkpoint, a
 * later one is accepted only with an RFC 9162 consistency proof from the kept one, and a
 * forked log (a checkpoint of the same size with another root, or a larger one that does not
 * extend the kept one, both signed with the service's own key) is reported as a split view,
 * with both signed checkpoints as evidence, exit status 1 and the state left as it was.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointOrigin } from '../../companion/anchoring/epochs.ts';
import { main as verifyMain } from '../../companion/cli/verify.ts';
import { startServer } from '../../companion/core/server.ts';
import type { RunningServer } from '../../companion/core/server.ts';
import { getPublicKey, signEd25519 } from '../../shared/ed25519.ts';
import { toHex, utf8 } from '../../shared/encoding.ts';
import { checkpointBody, parseCheckpoint, signedNote } from '../../shared/epoch.ts';
import { NOTE_TYPE_COSIGNATURE_V1, formatVerifierKey } from '../../shared/note.ts';
import { logVerifierKeyText } from '../../shared/witness.ts';
import { createTestContext, makeTempDir } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { recordBody } from './pack-fixtures.ts';

let ctx: TestContext;
let server: RunningServer;
let key: string;
let dir: string;
let jwks: string;

beforeAll(async () => {
  ctx = await createTestContext({ env: { HOST: '127.0.0.1' } });
  ({ apiKey: key } = await ctx.signup());
  server = await startServer(ctx.app, { host: '127.0.0.1', port: 0, graceMs: 1000, log: ctx.log });
  dir = makeTempDir('svc-monitor-');
  jwks = path.join(dir, 'keys.json');
  fs.writeFileSync(jwks, JSON.stringify((await ctx.request('/.well-known/service-keys.json')).body));
});
afterAll(async () => {
  await server?.close();
  await ctx?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

let hour = 10;
/** Seals a record and closes its hour's epoch. */
async function closeEpoch(): Promise<void> {
  ctx.clock.set(`2025-01-01T${String(hour).padStart(2, '0')}:15:00.000Z`);
  expect((await ctx.request('/v1/record', { json: recordBody(), key })).status).toBe(201);
  hour++;
  ctx.clock.set(`2025-01-01T${String(hour).padStart(2, '0')}:00:01.000Z`);
  expect((await ctx.deps.workers.epochs.closeDue()).length).toBe(1);
}

async function monitor(...args: string[]): Promise<{ code: number; report: any }> {
  const out: string[] = [];
  const code = await verifyMain(['monitor', ...args, '--json'], (s) => out.push(s), (s) => out.push(s));
  return { code, report: JSON.parse(out.join('\n')) };
}

/** A checkpoint of the epoch log signed with the service's production key, with any root. */
function forged(size: number, rootByte: number): string {
  const signer = ctx.deps.keyring.production;
  const origin = checkpointOrigin(signer);
  const body = checkpointBody(origin, size, new Uint8Array(32).fill(rootByte));
  return signedNote(body, origin, signer.publicKey, signer.sign(utf8(body)));
}

function file(name: string, content: string): string {
  const p = path.join(dir, name);
  fs.writeFileSync(p, content);
  return p;
}

describe('svc-verify monitor', () => {
  it('keeps the first checkpoint, accepts a consistent successor, and reports a same-size fork as a split view with both checkpoints', async () => {
    const state = path.join(dir, 'state-a.json');
    await closeEpoch();
    const first = await monitor('--state', state, '--url', server.url, '--keys', jwks);
    expect(first).toMatchObject({ code: 0, report: { status: 'first_run', current: { size: 1 } } });
    expect(JSON.parse(fs.readFileSync(state, 'utf8')).checkpoint).toBe((await ctx.request('/checkpoint')).text);

    expect(await monitor('--state', state, '--url', server.url, '--keys', jwks)).toMatchObject({ code: 0, report: { status: 'unchanged' } });
    await closeEpoch();
    await closeEpoch();
    const next = await monitor('--state', state, '--url', server.url, '--keys', jwks);
    expect(next).toMatchObject({ code: 0, report: { status: 'consistent', seen: { size: 1 }, current: { size: 3 } } });
    const kept = fs.readFileSync(state, 'utf8');
    expect(JSON.parse(kept).checkpoint).toBe((await ctx.request('/checkpoint')).text);

    // Two checkpoints of size 3, both signed by the service key: no proof can reconcile them.
    const fork = forged(3, 0xee);
    const split = await monitor('--state', state, '--checkpoint', file('fork.txt', fork), '--keys', jwks);
    expect(split.code).toBe(1);
    expect(split.report).toMatchObject({ status: 'split_view', detail: 'two signed checkpoints of size 3 with different roots' });
    expect(split.report.seen.checkpoint).toBe(JSON.parse(kept).checkpoint);
    expect(split.report.current).toEqual({ size: 3, root: toHex(new Uint8Array(32).fill(0xee)), checkpoint: fork });
    // The state is not moved to either side.
    expect(fs.readFileSync(state, 'utf8')).toBe(kept);
  }, 60_000);

  it('reports a larger checkpoint that does not extend the kept one as a split view; a smaller consistent one is stale', async () => {
    const state = path.join(dir, 'state-b.json');
    expect((await monitor('--state', state, '--url', server.url, '--keys', jwks)).report.status).toBe('first_run');
    const size = parseCheckpoint((await ctx.request('/checkpoint')).text).size;
    await closeEpoch();
    // The real log now has size + 1; a forged checkpoint of that size with another root.
    const split = await monitor('--state', state, '--checkpoint', file('fork-b.txt', forged(size + 1, 0x42)), '--url', server.url, '--keys', jwks);
    expect(split.code).toBe(1);
    expect(split.report.status).toBe('split_view');
    expect(split.report.detail).toMatch(new RegExp(`size ${size + 1} is not an extension of the one of size ${size}`));
    expect(split.report.seen.size).toBe(size);
    // The real one passes, and an older real one is reported stale, not a fork.
    expect((await monitor('--state', state, '--url', server.url, '--keys', jwks)).report.status).toBe('consistent');
    const older = (await ctx.request('/epochs/0')).body.checkpoint as string;
    expect(await monitor('--state', state, '--checkpoint', file('old.txt', older), '--url', server.url, '--keys', jwks)).toMatchObject({ code: 0, report: { status: 'stale' } });
  }, 60_000);

  it('refuses a checkpoint the log key did not sign, one without the cosignatures asked for, and names what is missing on the command line', async () => {
    const state = path.join(dir, 'state-c.json');
    const signer = ctx.deps.keyring.production;
    const origin = checkpointOrigin(signer);
    const seed = new Uint8Array(32).fill(4);
    const body = checkpointBody(origin, 1, new Uint8Array(32));
    const impostor = file('impostor.txt', signedNote(body, origin, getPublicKey(seed), signEd25519(seed, utf8(body))));
    const bad = await monitor('--state', state, '--checkpoint', impostor, '--keys', jwks);
    expect(bad).toMatchObject({ code: 1, report: { status: 'bad_checkpoint' } });
    // The same with the log's verifier key instead of the key set.
    const logKey = logVerifierKeyText(origin, signer.publicKey);
    expect((await monitor('--state', state, '--checkpoint', impostor, '--log-key', logKey)).code).toBe(1);
    expect(fs.existsSync(state)).toBe(false);
    // A witness policy the checkpoint does not meet.
    const witnessKey = formatVerifierKey('witness.test/w1', NOTE_TYPE_COSIGNATURE_V1, getPublicKey(new Uint8Array(32).fill(5)));
    const unwitnessed = await monitor('--state', state, '--url', server.url, '--log-key', logKey, '--witness-key', witnessKey);
    expect(unwitnessed).toMatchObject({ code: 1, report: { status: 'bad_checkpoint', detail: expect.stringMatching(/^witness_cosignatures: .*missing: witness\.test\/w1/) } });

    expect(await monitor('--url', server.url, '--keys', jwks)).toMatchObject({ code: 2, report: { error: { kind: 'usage', message: 'missing --state <file>' } } });
    expect((await monitor('--state', state, '--url', server.url)).code).toBe(2);
    // Two different sizes and no way to get the proof.
    await monitor('--state', state, '--url', server.url, '--log-key', logKey);
    const noProof = await monitor('--state', state, '--checkpoint', file('old-c.txt', (await ctx.request('/epochs/0')).body.checkpoint), '--log-key', logKey);
    expect(noProof).toMatchObject({ code: 2, report: { error: { kind: 'usage' } } });
  }, 60_000);
});
