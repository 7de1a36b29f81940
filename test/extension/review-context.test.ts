/**
 * The employee's side of review context (extension/utils/background/review-context.ts), through
 * the real background handlers and a real companion in process: after needs_review with the
 * tenant policy on, the background seals the exact gate request it sent to every reviewer device
 * and posts only ciphertexts, which open for the reviewer and recompute to the sealed
 * payload_hash; with the policy off it posts nothing.
 */
import { fakeBrowser } from 'wxt/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fromBase64Url, toBase64Url, utf8 } from '../../shared/encoding.ts';
import { sha256Hex } from '../../shared/hash.ts';
import { checkReviewContext, decodeReviewContext, openReviewContext, rawPublicKey } from '../../shared/hpke.ts';
import { shareReviewContext } from '../../extension/utils/background/review-context.ts';
import { loadSettings } from '../../extension/utils/settings.ts';
import { signIn } from '../companion/account-helpers.ts';
import { putPolicy, startBackground } from './background-harness.ts';
import type { Background } from './background-harness.ts';
import { heldAction } from './submit-fixture.ts';

const CONTEXT = { matter_band: 'moderate', doctrine_anchor: 'competence', jurisdiction: 'US', tool_data_handling: 'vendor-trains-on-inputs' };
const PROMPT = 'Summarise the Hartley merger memo for the partner meeting, canary 4b7e';

let bg: Background;
/** What the background sent to the companion's review-context endpoints: method, path, body. */
let seen: { method: string; path: string; body: string }[];
/** The bodies of every other request the background sent (the gate request among them). */
let other: string[];
let posted: Promise<void>;

interface Reviewer {
  id: string;
  key: string;
  device: CryptoKeyPair;
  keyId: string;
}

async function reviewer(): Promise<Reviewer> {
  const owner = await signIn(bg.ctx, bg.apiKey);
  const added = await owner.request('/account/people', { json: { email: `reviewer-${crypto.randomUUID()}@example.com`, capabilities: [] } });
  const id = added.body.person.id as string;
  expect((await owner.request(`/account/people/${id}`, { method: 'PATCH', json: { capabilities: ['gate:submit', 'records:read', 'reviews:decide'] } })).status).toBe(200);
  const key = added.body.api_key as string;
  const device = (await crypto.subtle.generateKey({ name: 'X25519' }, false, ['deriveBits'])) as CryptoKeyPair;
  const registered = await bg.ctx.request('/account/me/review-keys', { key, json: { public_key: toBase64Url(await rawPublicKey(device.publicKey)), label: 'reviewer laptop' } });
  expect(registered.status, registered.text).toBe(201);
  return { id, key, device, keyId: registered.body.review_key.id };
}

beforeEach(async () => {
  fakeBrowser.reset();
  bg = await startBackground();
  await bg.configure({ gateProfile: { pack: 'law', actionType: 'proposed-action', context: CONTEXT } });
  seen = [];
  other = [];
  let resolvePosted: () => void;
  posted = new Promise((resolve) => (resolvePosted = resolve));
  bg.intercept = async (request, forward) => {
    const path = new URL(request.url).pathname;
    const isContext = /\/v1\/reviews\/[^/]+\/context(-recipients)?$/.test(decodeURIComponent(path));
    const body = isContext || request.method === 'POST' ? await request.clone().text() : '';
    if (!isContext) other.push(body);
    const res = await forward(request);
    if (isContext) {
      seen.push({ method: request.method, path: decodeURIComponent(path), body });
      if (request.method === 'POST') resolvePosted();
    }
    return res;
  };
});

afterEach(async () => {
  await bg.close();
});

describe('after needs_review with review_context on', () => {
  it('posts one ciphertext per reviewer device, holding exactly the gate request that was sent', async () => {
    const alice = await reviewer();
    await putPolicy(bg, 'law', { review_context: 'encrypted' });
    const submit = heldAction(PROMPT);
    const outcome = await bg.send('gate.submit', submit);
    expect(outcome).toMatchObject({ action: 'review', decision: 'needs_review' });
    const actionKey = (outcome as { action_key: string }).action_key;
    await posted;

    const post = seen.find((s) => s.method === 'POST')!;
    expect(post.path).toBe(`/v1/reviews/${actionKey}/context`);
    // Nothing decryptable: the prompt, its redacted form and the request are not in what was posted.
    expect(post.body).not.toContain('canary 4b7e');
    expect(post.body).not.toContain('Hartley');
    expect(JSON.parse(post.body).ciphertexts.map((c: { key_id: string }) => c.key_id)).toEqual([alice.keyId]);

    const record = await bg.ctx.request(`/v1/records/${actionKey}`, { key: bg.apiKey });
    const payloadHash = record.body.payload_hash ?? record.body.verify_request?.payload_hash;
    expect(typeof payloadHash).toBe('string');
    const got = await bg.ctx.request(`/v1/reviews/${actionKey}/context?key_id=${alice.keyId}`, { key: alice.key });
    expect(got.status, got.text).toBe(200);
    const plain = await openReviewContext(alice.device, { enc: fromBase64Url(got.body.enc), ct: fromBase64Url(got.body.ct) }, { action_key: actionKey, payload_hash: payloadHash });
    const doc = decodeReviewContext(plain);
    expect(doc.gate_request).toMatchObject({ pack: 'law', redacted_text: submit.redacted_text, client_nonce: submit.client_nonce, idempotency_key: `ag-${submit.attempt_id}` });
    expect(checkReviewContext(doc, payloadHash)).toMatchObject({ match: true });
  });

  it('is erased when the employee withdraws the paused action', async () => {
    await reviewer();
    await putPolicy(bg, 'law', { review_context: 'encrypted' });
    const outcome = await bg.send('gate.submit', heldAction(PROMPT));
    const actionKey = (outcome as { action_key: string }).action_key;
    await posted;
    const rows = async () => (await bg.ctx.sql<{ n: number }>('SELECT count(*) AS n FROM review_contexts'))[0]!.n;
    expect(await rows()).toBe(1);
    expect(await bg.send('review.withdraw', { action_key: actionKey })).toEqual({ withdrawn: true });
    expect(seen.filter((s) => s.method === 'DELETE').map((s) => s.path)).toEqual([`/v1/reviews/${actionKey}/context`]);
    expect(await rows()).toBe(0);
  });

  it('describes attached files by their commitments, and names them to the reviewers alone', async () => {
    const alice = await reviewer();
    await putPolicy(bg, 'law', { review_context: 'encrypted' });
    const name = 'Q3 forecast CANARY-NAME-2c7d.pdf';
    const files = [{ name_sha256: sha256Hex(utf8(name)), media_type: 'application/pdf', size: 2048, sha256: 'd'.repeat(64) }];
    const outcome = await bg.send('gate.submit', { ...heldAction(''), files, file_names: [name] });
    expect(outcome).toMatchObject({ action: 'review' });
    const actionKey = (outcome as { action_key: string }).action_key;
    await posted;
    const got = await bg.ctx.request(`/v1/reviews/${actionKey}/context?key_id=${alice.keyId}`, { key: alice.key });
    const payloadHash = got.body.payload_hash as string;
    const doc = decodeReviewContext(await openReviewContext(alice.device, { enc: fromBase64Url(got.body.enc), ct: fromBase64Url(got.body.ct) }, { action_key: actionKey, payload_hash: payloadHash }));
    expect(doc.files).toEqual([{ name, ...files[0] }]);
    expect(checkReviewContext(doc, payloadHash)).toMatchObject({ match: true, file_name_mismatches: [] });
    // The gate saw the name's hash only; nothing else the background sent names it.
    expect(other.some((b) => b.includes(files[0]!.name_sha256))).toBe(true);
    for (const body of [...other, ...seen.map((x) => x.body)]) expect(body).not.toContain('CANARY-NAME-2c7d');
  });

  it('refuses file names that do not line up with the files', async () => {
    const files = [{ name_sha256: 'c'.repeat(64), media_type: 'application/pdf', size: 1, sha256: 'd'.repeat(64) }];
    await expect(bg.send('gate.submit', { ...heldAction(''), files, file_names: ['a.pdf', 'b.pdf'] })).rejects.toThrow('gate.submit: malformed request');
    await expect(bg.send('gate.submit', { ...heldAction(''), file_names: ['a.pdf'] })).rejects.toThrow('gate.submit: malformed request');
  });
});

describe('with review_context off (the default)', () => {
  it('asks whom to seal to, is told off, and posts nothing', async () => {
    await reviewer();
    const outcome = await bg.send('gate.submit', heldAction(PROMPT));
    expect(outcome).toMatchObject({ action: 'review' });
    const actionKey = (outcome as { action_key: string }).action_key;
    const record = await bg.ctx.request(`/v1/records/${actionKey}`, { key: bg.apiKey });
    // The same call the background makes, awaited here so "nothing posted" is observed after it ended.
    const api = bg.svc.api(await loadSettings());
    const outcomeOff = await shareReviewContext(api, { action_key: actionKey, payload_hash: record.body.payload_hash ?? record.body.verify_request.payload_hash }, {});
    expect(outcomeOff).toEqual({ shared: 0, skipped: 'policy-off' });
    expect(seen.filter((s) => s.method === 'POST')).toEqual([]);
    expect((await bg.ctx.sql<{ n: number }>('SELECT count(*) AS n FROM review_contexts'))[0]!.n).toBe(0);
  });

  it('binds only to the payload_hash this browser verified, never one the companion names later', async () => {
    await reviewer();
    await putPolicy(bg, 'law', { review_context: 'encrypted' });
    const outcome = await bg.send('gate.submit', heldAction(PROMPT));
    const actionKey = (outcome as { action_key: string }).action_key;
    await posted;
    const api = bg.svc.api(await loadSettings());
    expect(await shareReviewContext(api, { action_key: actionKey, payload_hash: 'e'.repeat(64) }, {})).toEqual({ shared: 0, skipped: 'payload-hash-differs' });
  });
});
