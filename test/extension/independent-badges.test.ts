/**
 * The extension's decision list shows a record's independent evidence: the background
 * (extension/utils/background/evidence.ts) fetches the sealed record and its inclusion proof
 * from a real companion in process, configured with a real TSA on loopback (openssl ts -reply)
 * and a C2SP witness stand-in, and checks the epoch's RFC 3161 token and cosignature with
 * shared/ code; the list (extension/components/decision-list.tsx, rendered with Preact) then
 * says "Independently timestamped by …" and "Witnessed by 1 witness: …". A record whose epoch
 * is open shows neither; a proof the companion altered is refused, never shown as evidence.
 * The companion's modules need node's environment, so the list renders into a happy-dom window
 * made here.
 */
import 'fake-indexeddb/auto';
import { Window } from 'happy-dom';
import { h, render } from 'preact';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkpointOrigin } from '../../companion/anchoring/epochs.ts';
import { companionApi } from '../../extension/utils/background/companion-api.ts';
import { independentEvidenceFor } from '../../extension/utils/background/evidence.ts';
import { JWKS_PATH, KeyPins } from '../../extension/utils/background/key-pins.ts';
import { DecisionList } from '../../extension/components/decision-list.tsx';
import { openExtensionDatabase } from '../../extension/utils/db.ts';
import type { DecisionEntry } from '../../extension/utils/db.ts';
import { logVerifierKeyText } from '../../shared/witness.ts';
import { createTestContext } from '../companion/helpers.ts';
import type { TestContext } from '../companion/helpers.ts';
import { recordBody } from '../companion/pack-fixtures.ts';
import { cleanupAuthorities, startTsa } from '../helpers/loopback-tsa.ts';
import type { TsaAuthority } from '../helpers/loopback-tsa.ts';
import { WitnessStandIn } from '../helpers/loopback-witness.ts';
import { CONTENT, POPUP, startBackground } from './background-harness.ts';

let tsa: TsaAuthority;
let witness: WitnessStandIn;
let ctx: TestContext;
let apiKey: string;
let root: HTMLElement;
const dom = new Window();
(globalThis as { document?: unknown }).document = dom.document;
/** Stands between the background and the companion, like a network (or a companion) that alters answers. */
let alter: ((path: string, body: any) => any) | null = null;

beforeAll(async () => {
  tsa = await startTsa('Extension');
  witness = new WitnessStandIn('extension.test/w1', 0x61);
  await witness.listen();
  ctx = await createTestContext({
    env: {
      SVC_TSA_URLS: tsa.url,
      SVC_TSA_ROOTS_FILE: tsa.caFile,
      SVC_WITNESSES: JSON.stringify([{ name: witness.name, url: witness.url, key: witness.vkey }]),
      SVC_WEBHOOK_ALLOW_LOOPBACK: '1',
    },
  });
  ({ apiKey } = await ctx.signup());
  const signer = ctx.deps.keyring.production;
  const origin = checkpointOrigin(signer);
  witness.trustLog(origin, logVerifierKeyText(origin, signer.publicKey));
}, 60_000);
afterAll(async () => {
  await dom.happyDOM.close();
  await ctx?.close();
  await Promise.all([tsa?.close(), witness?.close()]);
  cleanupAuthorities();
});
afterEach(() => {
  alter = null;
  if (root) {
    render(null, root);
    root.remove();
  }
});

let dbCounter = 0;
function background() {
  const fetchImpl: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const res = await ctx.app.request(request);
    const path = new URL(request.url).pathname;
    if (!alter || !res.ok) return res;
    return new Response(JSON.stringify(alter(path, await res.json())), { status: res.status, headers: res.headers });
  };
  const api = companionApi({ baseUrl: 'http://companion.test', apiKey, fetch: fetchImpl });
  const db = openExtensionDatabase(`action-gate-independent-${process.pid}-${++dbCounter}`);
  const pins = new KeyPins({ db, now: () => new Date(), fetchJwks: () => api.getPublic(JWKS_PATH) });
  return { api, pins };
}

async function seal(hour: number): Promise<string> {
  ctx.clock.set(`2025-01-01T${String(hour).padStart(2, '0')}:15:00.000Z`);
  const res = await ctx.request('/v1/record', { json: recordBody(), key: apiKey });
  expect(res.status).toBe(201);
  return res.body.evidence_packet.action_key as string;
}

function entry(action_key: string): DecisionEntry {
  return {
    action_key,
    decision: 'allow',
    site: 'chatgpt',
    host: 'chatgpt.com',
    time: '2025-01-01T10:15:00.000Z',
    recorded_at: '2025-01-01T10:15:00.000Z',
    verified: true,
    key_status: 'active',
    dev_key: false,
    failed_checks: [],
    review_route: null,
    redactions: {},
    review_status: null,
    reviewer: null,
    review_receipt_key: null,
    review_verified: null,
    review_time: null,
    released_attempt: null,
  } as DecisionEntry;
}

const badges = (key: string) => Array.from(root.querySelectorAll(`[data-action-key="${key}"] [data-independent]`)).map((b) => [b.getAttribute('data-independent'), b.textContent]);

describe('the decision list shows independent evidence', () => {
  it('timestamped and witnessed for a record whose epoch has both; nothing for an open epoch; refused for an altered proof', async () => {
    const stamped = await seal(10);
    ctx.clock.set('2025-01-01T11:00:01.000Z');
    expect((await ctx.deps.workers.epochs.closeDue()).length).toBeGreaterThan(0);
    const bg = background();
    // Closed, token not arrived yet: awaiting, nothing claimed.
    expect(await independentEvidenceFor(bg, stamped)).toEqual({ proofFailed: [], timestamp: { state: 'awaiting' }, witnesses: null });
    expect(await ctx.deps.workers.timestamps.worker.tick()).toMatchObject({ succeeded: 1 });
    expect(await ctx.deps.workers.witnesses.worker.tick()).toMatchObject({ succeeded: 1 });
    const open = await seal(11);
    expect(await independentEvidenceFor(bg, open)).toBeNull();

    const asked: string[][] = [];
    root = dom.document.createElement('div') as unknown as HTMLElement;
    dom.document.body.append(root as never);
    render(
      h(DecisionList, {
        entries: [entry(stamped), entry(open)],
        loadIndependent: async (keys: string[]) => {
          asked.push(keys);
          return Object.fromEntries(await Promise.all(keys.map(async (k) => [k, await independentEvidenceFor(bg, k)] as const)));
        },
      }),
      root,
    );
    await expect.poll(() => badges(stamped).length, { timeout: 10_000 }).toBe(2);
    const [timestamped, witnessed] = badges(stamped);
    expect(timestamped![0]).toBe('timestamped');
    expect(timestamped![1]).toMatch(/^Independently timestamped by O=Extension Trust, CN=Extension TSA, \S/);
    expect(witnessed).toEqual(['witnessed', `Witnessed by 1 witness: ${witness.name}`]);
    expect(badges(open)).toEqual([]);
    expect(asked).toEqual([[stamped, open]]);

    // The inclusion proof of another record served for this one: refused, not shown as evidence.
    alter = (path, body) => (path.endsWith('/inclusion-proof') ? { ...body, attestation_hash: 'f'.repeat(64) } : body);
    expect(await independentEvidenceFor(bg, stamped)).toMatchObject({ proofFailed: ['tenant_inclusion'], timestamp: null, witnesses: null });
    // The companion's published roots swapped for another CA's: the token no longer checks.
    const other = await startTsa('Substitute');
    try {
      alter = (path, body) => (path === '/epochs/verifiers' ? { ...body, tsa_roots: [other.caPem] } : body);
      expect((await independentEvidenceFor(bg, stamped))?.timestamp).toMatchObject({ state: 'refused' });
    } finally {
      await other.close();
    }
  }, 60_000);
});

describe('the background message decisions.independent', () => {
  it('answers the extension pages per action key (null while the epoch is open), at most ten keys, never a content script', async () => {
    const bg = await startBackground();
    try {
      const res = await bg.ctx.request('/v1/record', { json: recordBody(), key: bg.apiKey });
      expect(res.status).toBe(201);
      const key = res.body.evidence_packet.action_key as string;
      expect(await bg.send('decisions.independent', { action_keys: [key] }, POPUP)).toEqual({ [key]: null });
      await expect(bg.send('decisions.independent', { action_keys: Array.from({ length: 11 }, () => key) }, POPUP)).rejects.toThrow(/up to 10 action keys/);
      expect(await bg.raw({ type: 'decisions.independent', payload: { action_keys: [key] } }, CONTENT)).toEqual({ ok: false, error: "decisions.independent is only for the extension's own pages" });
    } finally {
      await bg.close();
    }
  }, 60_000);
});
