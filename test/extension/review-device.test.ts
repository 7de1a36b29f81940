/**
 * The reviewer's side of review context in the extension (extension/utils/review-device.ts and
 * background/review-record.ts), through the real background handlers and a real companion in
 * process: the profile's device key is made non-extractable, kept in IndexedDB and registered
 * once (again after it was revoked); the context the employee's background sealed opens on it,
 * bound to the payload_hash of the verified record, and recomputes to it; an altered
 * ciphertext, another action's context, or a record whose seal does not verify is refused.
 */
import 'fake-indexeddb/auto';
import { fakeBrowser } from 'wxt/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fromBase64Url, toBase64Url } from '../../shared/encoding.ts';
import { contextAllowsApproval, deviceLabel, idbDeviceStore, loadReviewContext, reviewDevice } from '../../extension/utils/review-device.ts';
import type { DeviceStore, ReviewDevicePorts } from '../../extension/utils/review-device.ts';
import { signIn } from '../companion/account-helpers.ts';
import { COMPANION_URL, POPUP, putPolicy, startBackground } from './background-harness.ts';
import type { Background } from './background-harness.ts';
import { heldAction } from './submit-fixture.ts';

const CONTEXT = { matter_band: 'moderate', doctrine_anchor: 'competence', jurisdiction: 'US', tool_data_handling: 'vendor-trains-on-inputs' };
const CANARY = 'canary-rd-51c3';
const PROMPT = `Does Smith v. Jones still support our limitation argument? ${CANARY}`;

let bg: Background;
let store: DeviceStore;
let posted: Promise<void>;
let rita: { id: string; key: string };

/** The popup's ports, answered by the real background handlers as the popup page. */
const ports: ReviewDevicePorts = {
  keys: () => bg.send('reviews.keys', {}, POPUP),
  register: (public_key, label) => bg.send('reviews.registerKey', { public_key, label }, POPUP),
  context: (action_key, key_id) => bg.send('reviews.context', { action_key, key_id }, POPUP),
};

async function person(capabilities: string[]): Promise<{ id: string; key: string }> {
  const owner = await signIn(bg.ctx, bg.apiKey);
  const added = await owner.request('/account/people', { json: { email: `p-${crypto.randomUUID()}@example.com`, capabilities: [] } });
  const id = added.body.person.id as string;
  expect((await owner.request(`/account/people/${id}`, { method: 'PATCH', json: { capabilities } })).status).toBe(200);
  return { id, key: added.body.api_key as string };
}

const asReviewer = (key: string) => bg.configure({ apiKey: key, role: 'reviewer' });
const asEmployee = () => bg.configure({ apiKey: bg.apiKey, role: 'employee' });

/**
 * The employee's browser pauses `text`; its background seals the context to every device. Waits
 * until sharing ended: the ciphertexts posted, or (no device yet) the recipients answered.
 */
async function pause(text = PROMPT, { shared = true } = {}): Promise<string> {
  await asEmployee();
  let resolvePosted: () => void;
  posted = new Promise((resolve) => (resolvePosted = resolve));
  bg.intercept = async (request, forward) => {
    const res = await forward(request);
    const path = new URL(request.url).pathname;
    if (shared ? request.method === 'POST' && path.endsWith('/context') : path.endsWith('/context-recipients')) resolvePosted();
    return res;
  };
  const outcome = await bg.send('gate.submit', heldAction(text));
  expect(outcome).toMatchObject({ action: 'review', decision: 'needs_review' });
  await posted;
  bg.intercept = null;
  return (outcome as { action_key: string }).action_key;
}

beforeEach(async () => {
  fakeBrowser.reset();
  bg = await startBackground();
  await bg.configure({ gateProfile: { pack: 'law', actionType: 'proposed-action', context: CONTEXT } });
  store = idbDeviceStore(new IDBFactory());
  rita = await person(['gate:submit', 'records:read', 'reviews:decide']);
  await putPolicy(bg, 'law', { allow_action_types: ['proposed-action'], review_context: 'encrypted' });
});

afterEach(async () => {
  await bg.close();
});

describe('the reviewer’s device key', () => {
  it('is made non-extractable, kept, registered once, and made again after it was revoked', async () => {
    await asReviewer(rita.key);
    const first = (await reviewDevice(ports, store, deviceLabel('Mozilla/5.0 Chrome/131.0')))!;
    expect(first.pair.privateKey.extractable).toBe(false);
    await expect(crypto.subtle.exportKey('pkcs8', first.pair.privateKey)).rejects.toThrow();
    const listed = await bg.send('reviews.keys', {}, POPUP);
    expect(listed).toEqual([expect.objectContaining({ id: first.keyId, status: 'active', label: 'Browser extension · Chrome' })]);
    // Only the public key was registered: the listed key is the pair's public half.
    expect(fromBase64Url(listed![0]!.public_key)).toHaveLength(32);

    const again = (await reviewDevice(ports, store))!;
    expect(again.keyId).toBe(first.keyId);
    expect(await bg.send('reviews.keys', {}, POPUP)).toHaveLength(1);

    expect((await bg.ctx.request(`/account/me/review-keys/${first.keyId}`, { method: 'DELETE', key: rita.key })).status).toBe(200);
    const renewed = (await reviewDevice(ports, store))!;
    expect(renewed.keyId).not.toBe(first.keyId);
    expect((await store.get())!.keyId).toBe(renewed.keyId);
    expect((await bg.send('reviews.keys', {}, POPUP))!.filter((k) => k.status === 'active').map((k) => k.id)).toEqual([renewed.keyId]);
  });
});

describe('opening the context sealed to this device', () => {
  it('shows exactly what was gated, bound to the verified record’s payload_hash', async () => {
    await asReviewer(rita.key);
    await reviewDevice(ports, store);
    const actionKey = await pause();
    await asReviewer(rita.key);
    const record = await bg.send('reviews.record', { action_key: actionKey }, POPUP);
    expect(record.verified).toBe(true);
    expect(record.payload_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(record.reasons.length).toBeGreaterThan(0);
    expect(record.paused_by).toBe(record.reasons[0]!.rule);
    expect(record.policy_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(record.approved_by).toEqual([]);
    expect(record.claim_boundary).toEqual(expect.any(String));
    expect(record.record_url).toBe(`${COMPANION_URL}/console#/records/${encodeURIComponent(actionKey)}`);

    const state = await loadReviewContext(actionKey, record.payload_hash, ports, store);
    expect(state.kind).toBe('opened');
    if (state.kind !== 'opened') return;
    expect(state.check.match).toBe(true);
    expect(state.doc.gate_request.redacted_text).toBe(PROMPT);
    expect(contextAllowsApproval(state)).toBe(true);
  });

  it('refuses an altered ciphertext', async () => {
    await asReviewer(rita.key);
    await reviewDevice(ports, store);
    const actionKey = await pause();
    await asReviewer(rita.key);
    const record = await bg.send('reviews.record', { action_key: actionKey }, POPUP);
    // A network (or companion) that flips one bit of the ciphertext on its way to the popup.
    bg.intercept = async (request, forward) => {
      const res = await forward(request);
      if (!/\/context$/.test(new URL(request.url).pathname) || request.method !== 'GET') return res;
      const body = (await res.json()) as { ct: string };
      const ct = fromBase64Url(body.ct);
      ct[0]! ^= 1;
      return Response.json({ ...body, ct: toBase64Url(ct) });
    };
    const state = await loadReviewContext(actionKey, record.payload_hash, ports, store);
    expect(state).toMatchObject({ kind: 'refused' });
    expect(contextAllowsApproval(state)).toBe(false);
  });

  it('refuses another action’s context served in its place, and a payload_hash other than the sealed one', async () => {
    await asReviewer(rita.key);
    const device = (await reviewDevice(ports, store))!;
    const one = await pause(`${PROMPT} one`);
    const two = await pause(`${PROMPT} two`);
    await asReviewer(rita.key);
    const recordOne = await bg.send('reviews.record', { action_key: one }, POPUP);
    const recordTwo = await bg.send('reviews.record', { action_key: two }, POPUP);
    // The companion answers the context of `two` when asked for `one`: it is bound to two's key.
    bg.intercept = async (request, forward) => {
      const url = new URL(request.url);
      if (request.method === 'GET' && url.pathname.endsWith('/context')) {
        const swapped = new URL(`/v1/reviews/${encodeURIComponent(two)}/context?key_id=${device.keyId}`, url);
        return forward(new Request(swapped, request));
      }
      return forward(request);
    };
    expect(await loadReviewContext(one, recordOne.payload_hash, ports, store)).toMatchObject({ kind: 'refused' });
    bg.intercept = null;
    // Bound to two's action_key but checked against one's payload_hash: the associated data differs.
    expect(await loadReviewContext(two, recordOne.payload_hash, ports, store)).toMatchObject({ kind: 'refused' });
    expect(await loadReviewContext(two, recordTwo.payload_hash, ports, store)).toMatchObject({ kind: 'opened', check: { match: true } });
  });

  it('gives no payload_hash for a record whose seal does not verify, and then refuses the context', async () => {
    await asReviewer(rita.key);
    await reviewDevice(ports, store);
    const actionKey = await pause();
    await asReviewer(rita.key);
    bg.intercept = async (request, forward) => {
      const res = await forward(request);
      if (request.method !== 'GET' || !new URL(request.url).pathname.startsWith('/v1/records/')) return res;
      const body = (await res.json()) as { verify_request: { payload_hash: string } };
      body.verify_request.payload_hash = 'e'.repeat(64);
      return Response.json(body);
    };
    const record = await bg.send('reviews.record', { action_key: actionKey }, POPUP);
    expect(record).toMatchObject({ verified: false, payload_hash: null, reasons: [] });
    bg.intercept = null;
    const state = await loadReviewContext(actionKey, record.payload_hash, ports, store);
    expect(state).toMatchObject({ kind: 'refused' });
    expect(contextAllowsApproval(state)).toBe(false);
  });

  it('says not shared for an action paused before this device existed, and lets Approve through', async () => {
    const actionKey = await pause(PROMPT, { shared: false });
    await asReviewer(rita.key);
    const record = await bg.send('reviews.record', { action_key: actionKey }, POPUP);
    const state = await loadReviewContext(actionKey, record.payload_hash, ports, store);
    expect(state).toEqual({ kind: 'not_shared' });
    expect(contextAllowsApproval(state)).toBe(true);
  });

  it('seals nothing to a person who did not hold reviews:decide when the action paused', async () => {
    await asReviewer(rita.key);
    await reviewDevice(ports, store);
    const tom = await person(['gate:submit', 'records:read', 'reviews:decide']);
    const tomStore = idbDeviceStore(new IDBFactory());
    await asReviewer(tom.key);
    const tomDevice = (await reviewDevice(ports, tomStore))!;
    const owner = await signIn(bg.ctx, bg.apiKey);
    const setCapabilities = async (capabilities: string[]) =>
      expect((await owner.request(`/account/people/${tom.id}`, { method: 'PATCH', json: { capabilities } })).status).toBe(200);
    await setCapabilities(['gate:submit', 'records:read']);
    const actionKey = await pause();
    // Without reviews:decide, the person's credential reads neither keys nor context.
    await asReviewer(tom.key);
    await expect(loadReviewContext(actionKey, 'e'.repeat(64), ports, tomStore)).rejects.toThrow(/403/);
    // Given reviews:decide later, the device is still theirs, and nothing was sealed to it.
    await setCapabilities(['gate:submit', 'records:read', 'reviews:decide']);
    const record = await bg.send('reviews.record', { action_key: actionKey }, POPUP);
    expect(await loadReviewContext(actionKey, record.payload_hash, ports, tomStore)).toEqual({ kind: 'not_shared' });
    expect((await tomStore.get())!.keyId).toBe(tomDevice.keyId);
    const held = await bg.ctx.sql<{ review_key_id: string }>('SELECT review_key_id FROM review_contexts WHERE action_key = ?', actionKey);
    expect(held.map((r) => r.review_key_id)).not.toContain(tomDevice.keyId);
    expect(held).toHaveLength(1);
  });
});

describe('contextAllowsApproval', () => {
  it('allows only matching context or context known to be absent', () => {
    const check = (match: boolean) => ({ match, computed: 'a', expected: 'b', file_name_mismatches: [] });
    const doc = { format: 'svc.review-context/v1' as const, gate_request: {} };
    expect(contextAllowsApproval({ kind: 'opened', doc, check: check(true) })).toBe(true);
    expect(contextAllowsApproval({ kind: 'opened', doc, check: check(false) })).toBe(false);
    expect(contextAllowsApproval({ kind: 'loading' })).toBe(false);
    expect(contextAllowsApproval({ kind: 'error', message: 'x' })).toBe(false);
    expect(contextAllowsApproval({ kind: 'refused', why: 'x' })).toBe(false);
    expect(contextAllowsApproval({ kind: 'not_shared' })).toBe(true);
    expect(contextAllowsApproval({ kind: 'expired' })).toBe(true);
    expect(contextAllowsApproval({ kind: 'no_device' })).toBe(true);
  });
});
