/**
 * Review context (companion/review-context/) over real HTTP on loopback, against a real SQLite
 * file: reviewers register device keys, the submitter of a paused action seals the gate request
 * to exactly the people who may decide it (shared/hpke.ts, as the extension does), the service
 * holds only the ciphertexts while the review is open and erases them, rows and file bytes,
 * when the review ends (approval, expiry, withdrawal, sweep). The test only ever hands the
 * service ciphertext, and checks that of every body it sent.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fromBase64Url, toBase64Url, utf8 } from '../../shared/encoding.ts';
import { sha256Hex } from '../../shared/hash.ts';
import {
  checkReviewContext,
  decodeReviewContext,
  encodeReviewContext,
  generateRecipientKeyPair,
  openReviewContext,
  rawPublicKey,
  REVIEW_CONTEXT_FORMAT,
  sealReviewContext,
} from '../../shared/hpke.ts';
import { openApiDocument } from '../../companion/core/openapi.ts';
import { startServer } from '../../companion/core/server.ts';
import type { RunningServer } from '../../companion/core/server.ts';
import { sweepExpiredReviews } from '../../companion/reviews/expiry.ts';
import { sweepReviewContexts } from '../../companion/review-context/sweep.ts';
import { CIPHERTEXT_MAX_BYTES } from '../../companion/review-context/schema.ts';
import { DISPATCH_EVENT } from '../../companion/routing/config.ts';
import { EVENT_KINDS } from '../../companion/webhooks/events.ts';
import { assertDescribed } from '../helpers/described-responses.ts';
import { signIn } from './account-helpers.ts';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { gateBody } from './pack-fixtures.ts';
import { startReceiver } from './webhook-receiver.ts';

let ctx: TestContext;
let server: RunningServer;
let ownerKey: string;
/** Every body this test sent to the service, to prove it never carried a plaintext canary. */
const sent: string[] = [];

interface Res {
  status: number;
  body: any;
  text: string;
}

async function http(pathAndQuery: string, options: { method?: string; key: string; json?: unknown }): Promise<Res> {
  const method = options.method ?? (options.json === undefined ? 'GET' : 'POST');
  const text = options.json === undefined ? undefined : JSON.stringify(options.json);
  if (text !== undefined) sent.push(text);
  const res = await fetch(`${server.url}${pathAndQuery}`, {
    method,
    headers: { 'x-service-key': options.key, ...(text !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(text !== undefined ? { body: text } : {}),
  });
  const body = await res.text();
  assertDescribed(openApiDocument(ctx.app), { method, path: new URL(pathAndQuery, 'http://x').pathname, status: res.status, contentType: res.headers.get('content-type'), text: body });
  return { status: res.status, body: body === '' ? undefined : JSON.parse(body), text: body };
}

interface Person {
  id: string;
  key: string;
}

let people = 0;
async function person(capabilities: string[]): Promise<Person> {
  const owner = await signIn(ctx, ownerKey);
  const added = await owner.request('/account/people', { json: { email: `p${++people}@example.com`, capabilities: [] } });
  expect(added.status, added.text).toBe(201);
  const id = added.body.person.id as string;
  if ([...added.body.person.capabilities].sort().join() !== [...capabilities].sort().join()) {
    const patched = await owner.request(`/account/people/${id}`, { method: 'PATCH', json: { capabilities } });
    expect(patched.status, patched.text).toBe(200);
  }
  return { id, key: added.body.api_key as string };
}

const DEFAULTS = ['gate:submit', 'records:write', 'records:read'];

interface Device {
  keyId: string;
  pair: CryptoKeyPair;
}

async function registerDevice(p: Person, label = 'laptop'): Promise<Device> {
  const pair = (await crypto.subtle.generateKey({ name: 'X25519' }, false, ['deriveBits'])) as CryptoKeyPair;
  const res = await http('/account/me/review-keys', { key: p.key, json: { public_key: toBase64Url(await rawPublicKey(pair.publicKey)), label } });
  expect(res.status, res.text).toBe(201);
  return { keyId: res.body.review_key.id, pair };
}

async function policy(doc: Record<string, unknown>) {
  const res = await http('/tenant/policy?policy_pack=law', { method: 'PUT', key: ownerKey, json: doc });
  expect(res.status, res.text).toBeLessThan(300);
}

/** The employee's paused action; the gate request body carries the plaintext canary. */
async function pause(employee: Person, canary: string) {
  const body = gateBody('law', { redacted_text: `Summarise the memo ${canary}` });
  const res = await http('/v1/gate', { key: employee.key, json: body });
  expect(res.status, res.text).toBe(201);
  expect(res.body.decision).toBe('needs_review');
  return { actionKey: res.body.action_key as string, payloadHash: res.body.payload_hash as string, body };
}

/** What the extension does: seal the exact gate request, and a file's name, to every recipient. */
async function share(employee: Person, paused: Awaited<ReturnType<typeof pause>>, fileCanary: string) {
  const recipients = await http(`/v1/reviews/${paused.actionKey}/context-recipients`, { key: employee.key });
  expect(recipients.status, recipients.text).toBe(200);
  const name = `${fileCanary}.pdf`;
  const plaintext = encodeReviewContext({
    format: REVIEW_CONTEXT_FORMAT,
    gate_request: paused.body,
    files: [{ name, media_type: 'application/pdf', size: 10, sha256: 'a'.repeat(64), name_sha256: sha256Hex(utf8(name)) }],
  });
  const binding = { action_key: paused.actionKey, payload_hash: recipients.body.payload_hash };
  const ciphertexts = [];
  for (const r of recipients.body.recipients) {
    const sealed = await sealReviewContext(fromBase64Url(r.public_key), plaintext, binding);
    ciphertexts.push({ key_id: r.key_id, enc: toBase64Url(sealed.enc), ct: toBase64Url(sealed.ct) });
  }
  return { recipients: recipients.body, ciphertexts };
}

async function contextRows(): Promise<number> {
  return (await ctx.sql<{ n: number }>('SELECT count(*) AS n FROM review_contexts'))[0]!.n;
}

/** Bytes of every file in the data directory (companion.db, -wal, -shm, keys, …). */
function dataFiles(): { name: string; bytes: Buffer }[] {
  return fs
    .readdirSync(ctx.dataDir, { recursive: true, encoding: 'utf8' })
    .map((f) => path.join(ctx.dataDir, f))
    .filter((f) => fs.statSync(f).isFile())
    .map((f) => ({ name: path.basename(f), bytes: fs.readFileSync(f) }));
}

function filesHolding(needle: Uint8Array | string): string[] {
  const n = typeof needle === 'string' ? Buffer.from(needle, 'utf8') : Buffer.from(needle);
  return dataFiles()
    .filter((f) => f.bytes.includes(n))
    .map((f) => f.name);
}

function logsHolding(needle: string): number {
  return ctx.log.entries.filter((e) => JSON.stringify(e).includes(needle)).length;
}

beforeEach(async () => {
  sent.length = 0;
  // Loopback webhook targets, sent to: the receiver below stands in for a tenant's endpoint.
  ctx = await createTestContext({ env: { SVC_WEBHOOK_ALLOW_LOOPBACK: '1', SVC_OUTBOX_EXTERNAL_SEND: '1' } });
  ownerKey = (await ctx.signup()).apiKey;
  server = await startServer(ctx.app, { host: '127.0.0.1', port: 0, graceMs: 1000, log: ctx.log });
});
afterEach(async () => {
  await server.close();
  await ctx.close();
});

describe('reviewer device keys', () => {
  it('are registered, listed and revoked by the person themselves, and only by a person who may decide reviews', async () => {
    const reviewer = await person([...DEFAULTS, 'reviews:decide']);
    const device = await registerDevice(reviewer, 'Work laptop');
    const listed = await http('/account/me/review-keys', { key: reviewer.key });
    expect(listed.body.review_keys).toEqual([expect.objectContaining({ id: device.keyId, person_id: reviewer.id, label: 'Work laptop', status: 'active', last_used_at: null, revoked_at: null })]);

    const again = await http('/account/me/review-keys', { key: reviewer.key, json: { public_key: listed.body.review_keys[0].public_key, label: 'same key' } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('review_key_taken');
    // RFC 7748 §6.1 / RFC 9180 §7.1.4: the all-zero point gives an all-zero shared secret.
    const lowOrder = await http('/account/me/review-keys', { key: reviewer.key, json: { public_key: toBase64Url(new Uint8Array(32)), label: 'bad' } });
    expect(lowOrder.status).toBe(422);
    expect(lowOrder.body.errors).toEqual([expect.objectContaining({ path: '/public_key', code: 'review_key_invalid' })]);

    const outsider = await person(DEFAULTS);
    const refused = await http('/account/me/review-keys', { key: outsider.key, json: { public_key: toBase64Url(await rawPublicKey((await generateRecipientKeyPair()).publicKey)), label: 'x' } });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'capability_missing', capability: 'reviews:decide' });

    const otherReviewer = await person([...DEFAULTS, 'reviews:decide']);
    expect((await http(`/account/me/review-keys/${device.keyId}`, { method: 'DELETE', key: otherReviewer.key })).status).toBe(404);
    const revoked = await http(`/account/me/review-keys/${device.keyId}`, { method: 'DELETE', key: reviewer.key });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body.review_key).toMatchObject({ id: device.keyId, status: 'revoked' });
    expect((await http(`/account/me/review-keys/${device.keyId}`, { method: 'DELETE', key: reviewer.key })).status).toBe(404);
  });
});

describe('review context with the policy on', () => {
  let employee: Person;
  let alice: Person;
  let bob: Person;
  let outsider: Person;
  let aliceDevice: Device;
  let bobDevice: Device;
  beforeEach(async () => {
    employee = await person(DEFAULTS);
    alice = await person([...DEFAULTS, 'reviews:decide']);
    bob = await person([...DEFAULTS, 'reviews:decide']);
    outsider = await person(DEFAULTS);
    aliceDevice = await registerDevice(alice);
    bobDevice = await registerDevice(bob);
    await policy({ review_context: 'encrypted' });
  });

  it('goes to exactly the people who may decide, opens only for them, and is exactly what was gated', async () => {
    // A person who lost reviews:decide keeps their key, but is no recipient and reads nothing.
    const carol = await person([...DEFAULTS, 'reviews:decide']);
    const carolDevice = await registerDevice(carol);
    const owner = await signIn(ctx, ownerKey);
    expect((await owner.request(`/account/people/${carol.id}`, { method: 'PATCH', json: { capabilities: DEFAULTS } })).status).toBe(200);

    const paused = await pause(employee, 'CANARY-PROMPT-7f3a');
    const { recipients, ciphertexts } = await share(employee, paused, 'CANARY-FILE-91c2');
    expect(recipients).toMatchObject({ action_key: paused.actionKey, payload_hash: paused.payloadHash, review_context: 'encrypted', status: 'not_shared' });
    expect(recipients.recipients.map((r: any) => r.key_id).sort()).toEqual([aliceDevice.keyId, bobDevice.keyId].sort());
    expect(recipients.recipients.map((r: any) => r.person_id).sort()).toEqual([alice.id, bob.id].sort());

    // Only the submitter learns the recipients or posts.
    const notSubmitter = await http(`/v1/reviews/${paused.actionKey}/context-recipients`, { key: alice.key });
    expect(notSubmitter.status).toBe(403);
    expect(notSubmitter.body.code).toBe('review_context_not_submitter');
    expect((await http(`/v1/reviews/${paused.actionKey}/context`, { key: alice.key, json: { ciphertexts } })).body.code).toBe('review_context_not_submitter');

    const stored = await http(`/v1/reviews/${paused.actionKey}/context`, { key: employee.key, json: { ciphertexts } });
    expect(stored.status, stored.text).toBe(201);
    expect(stored.body).toEqual({ action_key: paused.actionKey, status: 'available', stored: 2 });
    expect(await contextRows()).toBe(2);

    // Alice opens hers and recomputes payload_hash: exactly what was gated.
    const got = await http(`/v1/reviews/${paused.actionKey}/context?key_id=${aliceDevice.keyId}`, { key: alice.key });
    expect(got.status, got.text).toBe(200);
    expect(got.body).toMatchObject({ action_key: paused.actionKey, payload_hash: paused.payloadHash, key_id: aliceDevice.keyId, suite: { kem_id: 32, kdf_id: 1, aead_id: 3, mode: 0 } });
    const plain = await openReviewContext(aliceDevice.pair, { enc: fromBase64Url(got.body.enc), ct: fromBase64Url(got.body.ct) }, { action_key: paused.actionKey, payload_hash: paused.payloadHash });
    const doc = decodeReviewContext(plain);
    expect(doc.gate_request.redacted_text).toBe('Summarise the memo CANARY-PROMPT-7f3a');
    expect(checkReviewContext(doc, paused.payloadHash)).toMatchObject({ match: true });
    const listed = await http('/account/me/review-keys', { key: alice.key });
    expect(listed.body.review_keys[0].last_used_at).not.toBeNull();

    // Nobody else gets Alice's ciphertext, or any.
    expect((await http(`/v1/reviews/${paused.actionKey}/context?key_id=${aliceDevice.keyId}`, { key: bob.key })).status).toBe(404);
    const outsiderGet = await http(`/v1/reviews/${paused.actionKey}/context?key_id=${aliceDevice.keyId}`, { key: outsider.key });
    expect(outsiderGet.status).toBe(403);
    expect(outsiderGet.body).toMatchObject({ code: 'capability_missing', capability: 'reviews:decide' });
    const carolGet = await http(`/v1/reviews/${paused.actionKey}/context?key_id=${carolDevice.keyId}`, { key: carol.key });
    expect(carolGet.status).toBe(403);
    // Bob's ciphertext does not open with Alice's key.
    const bobs = await http(`/v1/reviews/${paused.actionKey}/context?key_id=${bobDevice.keyId}`, { key: bob.key });
    await expect(openReviewContext(aliceDevice.pair, { enc: fromBase64Url(bobs.body.enc), ct: fromBase64Url(bobs.body.ct) }, { action_key: paused.actionKey, payload_hash: paused.payloadHash })).rejects.toThrow();

    // Nothing the service received was plaintext.
    for (const body of sent) {
      if (body.includes('"ciphertexts"')) {
        expect(body).not.toContain('CANARY-PROMPT-7f3a');
        expect(body).not.toContain('CANARY-FILE-91c2');
      }
    }
    expect(sent.some((b) => b.includes('CANARY-FILE-91c2'))).toBe(false);
  });

  it('refuses unknown recipients, and ciphertexts past the limits with a clear code, storing nothing', async () => {
    const paused = await pause(employee, 'CANARY-LIMITS');
    const { ciphertexts } = await share(employee, paused, 'CANARY-FILE-LIMITS');
    const stranger = await http(`/v1/reviews/${paused.actionKey}/context`, { key: employee.key, json: { ciphertexts: [...ciphertexts, { ...ciphertexts[0], key_id: 'rvk_01JD3Q8Z5V7N4M2K6H8G0F1E2D' }] } });
    expect(stranger.status).toBe(422);
    expect(stranger.body.errors).toEqual([expect.objectContaining({ path: '/ciphertexts/2/key_id', code: 'unknown_recipient' })]);

    const big = toBase64Url(new Uint8Array(CIPHERTEXT_MAX_BYTES + 1).fill(7));
    const oversized = await http(`/v1/reviews/${paused.actionKey}/context`, { key: employee.key, json: { ciphertexts: [{ ...ciphertexts[0], ct: big }] } });
    expect(oversized.status).toBe(413);
    expect(oversized.body).toMatchObject({ code: 'review_context_too_large', limits: { ciphertext_max_bytes: CIPHERTEXT_MAX_BYTES } });

    // Past the total: ten recipient keys of 60 KiB each.
    for (let i = 0; i < 8; i++) await registerDevice(bob, `device ${i}`);
    const recipients = (await http(`/v1/reviews/${paused.actionKey}/context-recipients`, { key: employee.key })).body.recipients;
    expect(recipients).toHaveLength(10);
    const chunk = toBase64Url(new Uint8Array(60 * 1024).fill(9));
    const total = await http(`/v1/reviews/${paused.actionKey}/context`, {
      key: employee.key,
      json: { ciphertexts: recipients.map((r: any) => ({ key_id: r.key_id, enc: ciphertexts[0]!.enc, ct: chunk })) },
    });
    expect(total.status).toBe(413);
    expect(total.body.code).toBe('review_context_too_large');
    expect(await contextRows()).toBe(0);
  });

  it('is erased with the approval that ends the review: rows, database and WAL bytes (after the sweep truncates it), and logs', async () => {
    const paused = await pause(employee, 'CANARY-APPROVE-5d1e');
    const { ciphertexts } = await share(employee, paused, 'CANARY-FILE-APPROVE');
    expect((await http(`/v1/reviews/${paused.actionKey}/context`, { key: employee.key, json: { ciphertexts } })).status).toBe(201);
    expect((await http(`/v1/records/${paused.actionKey}`, { key: employee.key })).body.review_context).toEqual({ status: 'available', policy: 'encrypted', ciphertexts: 2 });
    const onBoard = async () => (await http('/active-manifest', { key: alice.key })).body.items.find((i: { action_key: string }) => i.action_key === paused.actionKey)?.review_context;
    expect(await onBoard()).toBe('available');
    const ctCanary = fromBase64Url(ciphertexts[0]!.ct).slice(0, 48);
    expect(filesHolding(ctCanary).length).toBeGreaterThan(0);

    const approved = await http('/v1/reviews', { key: alice.key, json: { pack: 'law', action_key: paused.actionKey, reviewer: alice.id, decision: 'approved' } });
    expect(approved.status, approved.text).toBe(201);
    expect(approved.body.review_status).toBe('approved');
    expect(await contextRows()).toBe(0);
    const after = await http(`/v1/reviews/${paused.actionKey}/context?key_id=${aliceDevice.keyId}`, { key: alice.key });
    expect(after.status).toBe(410);
    expect(after.body.code).toBe('review_context_expired');
    expect((await http(`/v1/records/${paused.actionKey}`, { key: employee.key })).body.review_context).toEqual({ status: 'expired', policy: 'encrypted', ciphertexts: 0 });

    const swept = await sweepReviewContexts(ctx.deps);
    expect(swept.walTruncated).toBe(true);
    expect(filesHolding(ctCanary)).toEqual([]);
    expect(filesHolding('CANARY-APPROVE-5d1e')).toEqual([]);
    expect(filesHolding('CANARY-FILE-APPROVE')).toEqual([]);
    expect(logsHolding(ciphertexts[0]!.ct.slice(0, 40))).toBe(0);
    expect(logsHolding('CANARY-APPROVE-5d1e')).toBe(0);
  });

  it('is erased with the expiry receipt, and by the sweep once the window ended before any receipt', async () => {
    const a = await pause(employee, 'CANARY-EXPIRE-A');
    const b = await pause(employee, 'CANARY-EXPIRE-B');
    for (const p of [a, b]) {
      const { ciphertexts } = await share(employee, p, 'CANARY-FILE-EXPIRE');
      expect((await http(`/v1/reviews/${p.actionKey}/context`, { key: employee.key, json: { ciphertexts } })).status).toBe(201);
    }
    expect(await contextRows()).toBe(4);
    ctx.clock.advance(ctx.config.reviewTimeoutSeconds * 1000 + 1000);
    // Window ended, no receipt yet: the sweep erases both.
    expect((await sweepReviewContexts(ctx.deps)).erased).toBe(4);
    expect(await contextRows()).toBe(0);

    // A fresh pause, shared, then expired by the expiry receipt's own seal.
    const c = await pause(employee, 'CANARY-EXPIRE-C');
    const { ciphertexts } = await share(employee, c, 'CANARY-FILE-EXPIRE-C');
    expect((await http(`/v1/reviews/${c.actionKey}/context`, { key: employee.key, json: { ciphertexts } })).status).toBe(201);
    ctx.clock.advance(ctx.config.reviewTimeoutSeconds * 1000 + 1000);
    expect(await sweepExpiredReviews(ctx.deps)).toBeGreaterThanOrEqual(1);
    expect(await contextRows()).toBe(0);
  });

  it('is erased when the employee withdraws it, and stays while an escalation keeps the review open', async () => {
    const paused = await pause(employee, 'CANARY-WITHDRAW');
    const { ciphertexts } = await share(employee, paused, 'CANARY-FILE-WITHDRAW');
    expect((await http(`/v1/reviews/${paused.actionKey}/context`, { key: employee.key, json: { ciphertexts } })).status).toBe(201);
    const escalated = await http('/v1/reviews', { key: alice.key, json: { pack: 'law', action_key: paused.actionKey, reviewer: alice.id, decision: 'escalated' } });
    expect(escalated.status, escalated.text).toBe(201);
    expect(await contextRows()).toBe(2);
    expect((await http(`/v1/reviews/${paused.actionKey}/context`, { method: 'DELETE', key: alice.key })).status).toBe(403);
    const withdrawn = await http(`/v1/reviews/${paused.actionKey}/context`, { method: 'DELETE', key: employee.key });
    expect(withdrawn.status, withdrawn.text).toBe(200);
    expect(withdrawn.body).toMatchObject({ erased: 2, status: 'not_shared' });
    expect(await contextRows()).toBe(0);
  });

  it('never leaves the service: no webhook, route dispatch, export or evidence package carries the ciphertext or the canary', async () => {
    const rx = await startReceiver();
    try {
      const target = await http('/tenant/integrations/webhook/desk', { method: 'PUT', key: ownerKey, json: { enabled: true, config: { url: rx.url, events: [...EVENT_KINDS] } } });
      expect(target.status, target.text).toBe(201);
      await policy({ review_context: 'encrypted', review_action_types: ['proposed-action'], review_routes: { 'proposed-action': 'webhook:desk' } });
      const paused = await pause(employee, 'CANARY-LEAVE-4b8e');
      const { ciphertexts } = await share(employee, paused, 'CANARY-FILE-LEAVE');
      expect((await http(`/v1/reviews/${paused.actionKey}/context`, { key: employee.key, json: { ciphertexts } })).status).toBe(201);
      const needles = ['CANARY-LEAVE-4b8e', 'CANARY-FILE-LEAVE', ...ciphertexts.flatMap((c) => [c.ct.slice(0, 40), c.enc.slice(0, 40)])];

      // While the context is stored: the dispatch and the events go out, exports and packages are read.
      const drain = async () => {
        for (let i = 0; i < 20; i++) {
          const claimed = (await ctx.deps.webhooks.worker.tick()).claimed + (await ctx.deps.routing.worker.tick()).claimed;
          if (claimed === 0) return;
        }
        throw new Error('the delivery queues did not drain');
      };
      await drain();
      const readable = [
        (await http('/routing/outbox', { key: ownerKey })).text,
        (await http('/tenant/integrations/webhook/desk/deliveries', { key: ownerKey })).text,
        (await http('/tenant/exports/records', { key: ownerKey })).text,
        (await http(`/v1/records/${paused.actionKey}`, { key: employee.key })).text,
        (await http('/active-manifest', { key: alice.key })).text,
      ];
      const bundle = await fetch(`${server.url}/evidence-packets/seal-bundle/batch`, {
        method: 'POST',
        headers: { 'x-service-key': ownerKey, 'content-type': 'application/json', accept: 'application/x-tar' },
        body: JSON.stringify({ action_keys: [paused.actionKey] }),
      });
      expect(bundle.status).toBe(200);
      const packageBytes = Buffer.from(await bundle.arrayBuffer());

      expect((await http('/v1/reviews', { key: alice.key, json: { pack: 'law', action_key: paused.actionKey, reviewer: alice.id, decision: 'approved' } })).status).toBe(201);
      await drain();
      const delivered = rx.received.map((r) => r.raw.toString('utf8'));
      // Both kinds went out: the review dispatch and the sealing events.
      expect(delivered.some((d) => d.includes(`"${DISPATCH_EVENT}"`))).toBe(true);
      expect(delivered.some((d) => d.includes('"record.sealed"'))).toBe(true);
      for (const needle of needles) {
        for (const text of [...delivered, ...readable]) expect(text).not.toContain(needle);
        expect(packageBytes.includes(Buffer.from(needle))).toBe(false);
      }
    } finally {
      await rx.close();
    }
  });

  it('revoking a device key erases what was sealed to it', async () => {
    const paused = await pause(employee, 'CANARY-REVOKE');
    const { ciphertexts } = await share(employee, paused, 'CANARY-FILE-REVOKE');
    expect((await http(`/v1/reviews/${paused.actionKey}/context`, { key: employee.key, json: { ciphertexts } })).status).toBe(201);
    expect((await http(`/account/me/review-keys/${aliceDevice.keyId}`, { method: 'DELETE', key: alice.key })).status).toBe(200);
    expect(await contextRows()).toBe(1);
    const recipients = await http(`/v1/reviews/${paused.actionKey}/context-recipients`, { key: employee.key });
    expect(recipients.body.recipients.map((r: any) => r.key_id)).toEqual([bobDevice.keyId]);
  });
});

describe('review context with the policy off (the default)', () => {
  it('lists no recipients, refuses a post and stores nothing', async () => {
    const employee = await person(DEFAULTS);
    const reviewer = await person([...DEFAULTS, 'reviews:decide']);
    const device = await registerDevice(reviewer);
    const paused = await pause(employee, 'CANARY-OFF');
    const recipients = await http(`/v1/reviews/${paused.actionKey}/context-recipients`, { key: employee.key });
    expect(recipients.status).toBe(200);
    expect(recipients.body).toMatchObject({ review_context: 'off', recipients: [], status: 'not_shared' });
    const sealed = await sealReviewContext(await rawPublicKey(device.pair.publicKey), utf8('x'.repeat(40)), { action_key: paused.actionKey, payload_hash: paused.payloadHash });
    const posted = await http(`/v1/reviews/${paused.actionKey}/context`, { key: employee.key, json: { ciphertexts: [{ key_id: device.keyId, enc: toBase64Url(sealed.enc), ct: toBase64Url(sealed.ct) }] } });
    expect(posted.status).toBe(409);
    expect(posted.body.code).toBe('review_context_off');
    expect(await contextRows()).toBe(0);

    // Per action type overrides the pack: on for proposed-action only, then off for it again.
    await policy({ review_context_action_types: { 'proposed-action': 'encrypted' } });
    expect((await http(`/v1/reviews/${paused.actionKey}/context-recipients`, { key: employee.key })).body.review_context).toBe('encrypted');
    await policy({ review_context: 'encrypted', review_context_action_types: { 'proposed-action': 'off' } });
    expect((await http(`/v1/reviews/${paused.actionKey}/context-recipients`, { key: employee.key })).body.review_context).toBe('off');
  });
});
