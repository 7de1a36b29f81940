/**
 * Reviews and the pending board: an employee's action pauses for review,
 * shows on GET /active-manifest, and a reviewer's decision is sealed as a review receipt that
 * verifies online, offline and as a seal bundle; refusals (409, 404, 422); fail-closed expiry.
 * In-process against a real temporary SQLite file, the real keys and the real sealer.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { payloadHash } from '../../shared/attestation.ts';
import { buildBundle, verifyBundle } from '../../shared/bundle.ts';
import { jwkToPublicKey } from '../../shared/keys.ts';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import { failedChecks, verifyEvidence } from '../../shared/verify.ts';
import type { PacketFields } from '../../shared/types.ts';
import { getGatePack } from '../../companion/packs/registry.ts';
import { sweepExpiredReviews } from '../../companion/reviews/expiry.ts';
import { INSIGHTS_TTL_MS } from '../../companion/reviews/sqlite-store.ts';
import { createTestContext, freshTenantContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { gateBody, recordBody, usageOf } from './pack-fixtures.ts';

const HOUR = 3600_000;
const WINDOW_MS = 72 * HOUR;

let ctx: TestContext;
let key: string;
let tenantId: string;
beforeEach(async () => ({ ctx, key, tenantId } = await freshTenantContext()));
afterEach(() => ctx.close());

/** An employee's law action on a fresh sandbox: needs_review (interface-spec States and transitions). */
async function pause(overrides: Record<string, unknown> = {}, k = key) {
  const res = await ctx.request('/v1/gate', { json: gateBody('law', overrides), key: k });
  expect(res.status).toBe(201);
  expect(res.body.decision).toBe('needs_review');
  return res.body;
}

function reviewBody(actionKey: string, overrides: Record<string, unknown> = {}) {
  return { pack: 'law', action_key: actionKey, reviewer: 'attorney-17', decision: 'approved', ...overrides };
}

const review = (json: unknown, k = key) => ctx.request('/v1/reviews', { json, key: k });
const board = (query = '', k = key) => ctx.request(`/active-manifest${query}`, { key: k });
const record = (actionKey: string, k = key) => ctx.request(`/v1/records/${actionKey}`, { key: k });
const receiptCount = async () => (await ctx.sql<{ n: number }>("SELECT count(*) AS n FROM sealed_records WHERE kind = 'review'"))[0]!.n;

describe('an employee’s action pauses for review', () => {
  it('lists the paused action on the board, raw-safe, with age and expiry from the server clock', async () => {
    const gate = await pause();
    ctx.clock.advance(90_000);
    const res = await board();
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toMatchObject({ tenant_id: tenantId, generated_at: '2025-01-01T00:01:30.000Z', truncated: false, raw_content_stored: false });
    const createdAt = gate.evidence_packet.seal.attestation.recorded_at;
    expect(res.body.items).toEqual([
      {
        action_key: gate.action_key,
        pack: 'law',
        vertical: 'law',
        action_type: 'proposed-action',
        decision: 'needs_review',
        status: 'pending',
        review_route: 'browser:legal-review',
        href: gate.evidence_packet.href,
        record_href: `/v1/records/${gate.action_key}`,
        next_step: getGatePack('law').manifest.next_step.needs_review,
        created_at: createdAt,
        age_seconds: 90,
        expires_at: new Date(Date.parse(createdAt) + WINDOW_MS).toISOString(),
        expires_in_seconds: 72 * 3600 - 90,
        escalation_count: 0,
        // No review rule: one approval releases, nothing scheduled.
        approvals: 0,
        approvals_required: 1,
        escalation_level: 0,
        reminded_at: null,
        approved_by: [],
        review_context: 'not_shared',
      },
    ]);
    expect(res.text).not.toContain('matter 42'); // the proposed text
  });

  it('shows the pending review on the gate record', async () => {
    const gate = await pause();
    const res = await record(gate.action_key);
    expect(res.status).toBe(200);
    expect(res.body.review).toMatchObject({
      status: 'pending',
      reviewer: null,
      decided_at: null,
      receipt_action_key: null,
      expires_at: new Date(Date.parse(gate.evidence_packet.seal.attestation.recorded_at) + WINDOW_MS).toISOString(),
      escalation_count: 0,
      receipts: [],
    });
  });

  it('lists oldest first, filters by exact route, bounds by limit and rejects unknown parameters', async () => {
    const first = await pause();
    ctx.clock.advance(1000);
    const filing = await pause({ action_type: 'court-filing' });
    ctx.clock.advance(1000);
    const third = await pause();
    expect((await board()).body.items.map((i: any) => i.action_key)).toEqual([first.action_key, filing.action_key, third.action_key]);

    const routed = await board('?route=browser:supervising-attorney');
    expect(routed.body.items.map((i: any) => i.action_key)).toEqual([filing.action_key]);
    expect(routed.body.route).toBe('browser:supervising-attorney');

    const limited = await board('?limit=2');
    expect(limited.body).toMatchObject({ limit: 2, truncated: true });
    expect(limited.body.items).toHaveLength(2);

    const bad = await board('?limit=0&status=pending');
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: any) => `${e.in}:${e.path}`).sort()).toEqual(['query:/limit', 'query:/status']);
    expect((await board('?limit=201')).status).toBe(422);
  });

  it("never shows another tenant's paused actions", async () => {
    await pause();
    const stranger = await ctx.signup();
    expect((await board('', stranger.apiKey)).body.items).toEqual([]);
  });

  it('requires an API key', async () => {
    expect((await ctx.request('/active-manifest')).status).toBe(401);
    expect((await ctx.request('/v1/reviews', { json: reviewBody('law:proposed-action:x') })).status).toBe(401);
  });
});

describe('a reviewer’s decision is sealed and verifiable', () => {
  it('approves: a review receipt linked to the action, verifiable online, offline and as a bundle', async () => {
    const gate = await pause();
    ctx.clock.advance(5 * 60_000);
    const body = reviewBody(gate.action_key, { reason: 'Checked the cited authorities' });
    const res = await review(body);
    expect(res.status).toBe(201);
    const r = res.body;
    // companion/REVIEW-CONTRACT.tmp.md: every contract field is there.
    for (const f of ['action_key', 'reviewed_action_key', 'decision', 'review_status', 'reviewer', 'evidence_packet', 'payload_hash', 'review_route', 'verify_request', 'next_step']) {
      expect(r).toHaveProperty(f);
    }
    expect(r).toMatchObject({ reviewed_action_key: gate.action_key, decision: 'approved', review_status: 'approved', reviewer: 'attorney-17', review_route: null });
    expect(r.action_key).toMatch(/^law:review:[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(r.mirror_seal).toBeUndefined();
    // DESIGN.md §3: payload_hash = SHA-256 of the JCS body (idempotency_key excluded).
    expect(r.payload_hash).toBe(payloadHash(body));

    const att = r.evidence_packet.seal.attestation;
    expect(att).toMatchObject({ kind: 'review', pack: 'law', decision: 'approved', status: 'reviewed', review_route: null, tenant_id: tenantId, recorded_at: '2025-01-01T00:05:00.000Z' });
    // The link: the receipt's signed attestation commits the reviewed action and its attestation hash.
    expect(att.context).toMatchObject({
      reviewed_action_key: gate.action_key,
      reviewed_attestation_hash: gate.evidence_packet.seal.attestation_hash,
      reviewed_decision: 'needs_review',
      reviewer: 'attorney-17',
      // The owner's key named someone who is no person of the tenant: delegation, asserted by the owner.
      principal: null,
      asserted_by: { principal_id: expect.stringMatching(/^per_/), kind: 'person', display_name: expect.any(String) },
    });
    expect(r).toMatchObject({ principal: null, asserted_by: att.context.asserted_by });
    // …and follows the gate in the tenant's hash-chained log.
    expect(att.prev_attestation_hash).toBe(gate.evidence_packet.seal.attestation_hash);

    // Online.
    const online = await ctx.request('/v1/verify', { json: r.verify_request });
    expect(online.body).toMatchObject({ verified: true, key_status: 'sandbox', failed_checks: [] });
    // Offline, from the published keys only.
    const jwks = (await ctx.request('/.well-known/service-keys.json')).body;
    const keys = trustedKeySet(jwks);
    const offline = await verifyEvidence(r.verify_request, keys);
    expect(failedChecks(offline)).toEqual([]);
    // As a 4-file seal bundle.
    const fields: PacketFields = { action_key: r.action_key, href: r.evidence_packet.href, status: 'reviewed', decision: 'approved', payload_hash: r.payload_hash, review_route: null };
    const jwk = jwks.keys.find((k: any) => k.kid === r.evidence_packet.seal.key_id);
    const bundle = buildBundle(fields, r.evidence_packet.seal, jwkToPublicKey(jwk));
    expect(failedChecks(await verifyBundle(bundle, keys))).toEqual([]);

    // The action's record now says approved, with the receipt; the board no longer lists it.
    const rec = await record(gate.action_key);
    expect(rec.body.review).toMatchObject({ status: 'approved', reviewer: 'attorney-17', decided_at: '2025-01-01T00:05:00.000Z', receipt_action_key: r.action_key });
    expect(rec.body.review.next_step).toMatch(/^You may proceed/);
    expect((await board()).body.items).toEqual([]);
    // The receipt is itself a fetchable sealed record.
    const receipt = await record(r.action_key);
    expect(receipt.body).toMatchObject({ kind: 'review', decision: 'approved', status: 'reviewed', reviewed_action_key: gate.action_key, reviewer: 'attorney-17' });
    expect(receipt.body.evidence_packet).toEqual(r.evidence_packet);
    // A receipt is not a new sealed action: the sandbox allowance counts the gate only.
    expect((await usageOf(ctx, tenantId)).actions_used).toBe(1);
  });

  it('signs a production tenant’s receipt with the production key', async () => {
    const prod = ctx.productionTenant();
    const gate = await pause({}, prod.apiKey);
    const res = await review(reviewBody(gate.action_key), prod.apiKey);
    expect(res.status).toBe(201);
    expect(res.body.evidence_packet.seal.dev_key).toBe(false);
    const v = await verifyEvidence(res.body.verify_request, trustedKeySet(ctx.deps.keyring.jwks()));
    expect(v).toMatchObject({ verified: true, key_status: 'active' });
    expect((await usageOf(ctx, prod.tenantId)).credits_used).toBe((await record(gate.action_key, prod.apiKey)).body.credits);
  });

  it('rejects: final, and a later approval is refused', async () => {
    const gate = await pause();
    const res = await review(reviewBody(gate.action_key, { decision: 'rejected', reviewer: 'partner-2' }));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ decision: 'rejected', review_status: 'rejected' });
    expect((await record(gate.action_key)).body.review).toMatchObject({ status: 'rejected', reviewer: 'partner-2', receipt_action_key: res.body.action_key });
    const again = await review(reviewBody(gate.action_key));
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'review_not_pending', review_status: 'rejected', receipt_action_key: res.body.action_key });
    expect(again.body.detail).toContain('already rejected by partner-2');
  });

  it('escalates: the action stays paused, and a later approval is accepted', async () => {
    const gate = await pause();
    const esc = await review(reviewBody(gate.action_key, { decision: 'escalated', reviewer: 'associate-4' }));
    expect(esc.status).toBe(201);
    expect(esc.body).toMatchObject({ decision: 'escalated', review_status: 'escalated' });
    expect((await board()).body.items).toMatchObject([{ action_key: gate.action_key, status: 'escalated', escalation_count: 1 }]);
    expect((await record(gate.action_key)).body.review).toMatchObject({ status: 'escalated', reviewer: 'associate-4', escalation_count: 1 });

    ctx.clock.advance(HOUR);
    const ok = await review(reviewBody(gate.action_key));
    expect(ok.status).toBe(201);
    expect(ok.body.evidence_packet.seal.attestation.prev_attestation_hash).toBe(esc.body.evidence_packet.seal.attestation_hash);
    const rec = (await record(gate.action_key)).body.review;
    expect(rec).toMatchObject({ status: 'approved', reviewer: 'attorney-17', receipt_action_key: ok.body.action_key, escalation_count: 1 });
    expect(rec.receipts.map((x: any) => [x.action_key, x.decision])).toEqual([
      [esc.body.action_key, 'escalated'],
      [ok.body.action_key, 'approved'],
    ]);
    expect((await board()).body.items).toEqual([]);
  });

  it('replays an idempotent retry as the original receipt, sealed once', async () => {
    const gate = await pause();
    const body = reviewBody(gate.action_key, { idempotency_key: 'review-retry-1' });
    const first = await review(body);
    const retry = await review(body);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(await receiptCount()).toBe(1);
  });
});

describe('refusals', () => {
  it('refuses a second review with 409 review_not_pending naming the first decision', async () => {
    const gate = await pause();
    const first = await review(reviewBody(gate.action_key));
    const second = await review(reviewBody(gate.action_key, { reviewer: 'someone-else' }));
    expect(second.status).toBe(409);
    expect(second.headers.get('content-type')).toBe('application/problem+json');
    expect(second.body).toMatchObject({ code: 'review_not_pending', review_status: 'approved', reviewed_action_key: gate.action_key, receipt_action_key: first.body.action_key });
    expect(second.body.detail).toContain('already approved by attorney-17');
    expect(await receiptCount()).toBe(1);
  });

  it('lets exactly one of two concurrent approvals win', async () => {
    const gate = await pause();
    const results = await Promise.all([review(reviewBody(gate.action_key, { reviewer: 'a' })), review(reviewBody(gate.action_key, { reviewer: 'b' }))]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(await receiptCount()).toBe(1);
    const winner = results.find((r) => r.status === 201)!;
    expect((await record(gate.action_key)).body.review).toMatchObject({ status: 'approved', reviewer: winner.body.reviewer, receipt_action_key: winner.body.action_key });
  });

  it('refuses actions that never paused: a blocked decision, an allow decision and a record', async () => {
    const blocked = await ctx.request('/v1/gate', { json: gateBody('law', { action_type: 'privileged-material-external-share' }), key });
    expect(blocked.body.decision).toBe('blocked');
    const res = await review(reviewBody(blocked.body.action_key));
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'review_not_pending', review_status: 'not_paused', action_decision: 'blocked' });
    expect(res.body.detail).toContain('was decided blocked');

    // An allow decision, sealed through the real pipeline as the gate seals one once a tenant
    // allowlists the action type (tenant policy is another capability).
    const allow = await ctx.deps.sealer.seal({
      auth: { tenantId, tenantKind: 'sandbox', keyId: 'test' },
      vertical: 'law',
      actionType: 'proposed-action',
      pack: 'law',
      kind: 'gate',
      decision: 'allow',
      status: 'sealed',
      reviewRoute: null,
      payloadHash: payloadHash(gateBody('law')),
      manifestDigest: getGatePack('law').digest,
      policyDigest: null,
      details: { action_type: 'proposed-action', next_step: 'proceed' },
      metering: { counted: true, credits: 0 },
      respond: (r) => ({ action_key: r.actionKey }),
    });
    const allowed = await review(reviewBody((allow.body as { action_key: string }).action_key));
    expect(allowed.status).toBe(409);
    expect(allowed.body).toMatchObject({ code: 'review_not_pending', action_decision: 'allow' });

    const rec = await ctx.request('/v1/record', { json: recordBody(), key });
    const recorded = await review(reviewBody(rec.body.action_key, { pack: 'law' }));
    expect(recorded.status).toBe(409);
    expect(recorded.body.detail).toContain('is a record record, not a gate action');
    expect(await receiptCount()).toBe(0);
  });

  it("answers another tenant's action and an unknown key with 404, never 403", async () => {
    const gate = await pause();
    const stranger = await ctx.signup();
    const res = await review(reviewBody(gate.action_key), stranger.apiKey);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
    const unknown = await review(reviewBody('law:proposed-action:01JD3Q8Z5V7N4M2K6H8G0F1E2D'), stranger.apiKey);
    expect(unknown.status).toBe(404);
    // Same answer either way, apart from the key named in the detail.
    expect(res.body.detail.replace(gate.action_key, 'K')).toBe(unknown.body.detail.replace('law:proposed-action:01JD3Q8Z5V7N4M2K6H8G0F1E2D', 'K'));
    expect((await record(gate.action_key)).body.review.status).toBe('pending');
  });

  it('answers 422 listing every failing field, and for a pack that is not the action’s', async () => {
    const gate = await pause();
    const res = await review({ pack: 'law', action_key: gate.action_key, reviewer: '  ', decision: 'maybe', extra: 1 });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: any) => e.path).sort()).toEqual(['/decision', '/extra', '/reviewer']);
    const missing = await review({ action_key: gate.action_key });
    // reviewer is optional: absent, the principal behind the key decides as itself.
    expect(missing.body.errors.map((e: any) => e.path).sort()).toEqual(['/decision', '/pack']);
    const wrongPack = await review(reviewBody(gate.action_key, { pack: 'medicine' }));
    expect(wrongPack.status).toBe(422);
    expect(wrongPack.body.errors).toEqual([expect.objectContaining({ path: '/pack', message: expect.stringContaining('gated with the law pack') })]);
    expect(await receiptCount()).toBe(0);
  });
});

describe('unanswered reviews expire and fail closed', () => {
  it('shows insights remembered for at most INSIGHTS_TTL_MS of service time (on SQLite; read afresh on PostgreSQL), and at once after a review item changes', async () => {
    const gate = await pause();
    ctx.clock.advance(WINDOW_MS - 1);
    expect((await board()).body.insights).toMatchObject({ pending: 1, expired: 0 });
    // Passing the deadline writes nothing. The SQLite store's remembered insights stand until
    // their time is up; the PostgreSQL store remembers none, since other companions write the
    // same items (companion/reviews/postgres-store.ts), so the expiry shows at once there.
    ctx.clock.advance(2);
    const stale = (await board()).body;
    expect(stale.items).toEqual([]);
    expect(stale.insights).toMatchObject(ctx.engine === 'sqlite' ? { pending: 1, expired: 0 } : { pending: 0, expired: 1 });
    ctx.clock.advance(INSIGHTS_TTL_MS);
    expect((await board()).body.insights).toMatchObject({ pending: 0, expired: 1 });
    // A write to one of the tenant's items shows at once.
    const next = await pause();
    expect((await board()).body.insights).toMatchObject({ pending: 1, expired: 1 });
    expect((await review(reviewBody(next.action_key))).status).toBe(201);
    expect((await board()).body.insights).toMatchObject({ pending: 0, approved: 1, expired: 1 });
    expect(gate.action_key).not.toBe(next.action_key);
  });

  it('refuses approval after the window, seals the expiry receipt at first touch, and drops the item from the board', async () => {
    const gate = await pause();
    const expiresAt = new Date(Date.parse(gate.evidence_packet.seal.attestation.recorded_at) + WINDOW_MS).toISOString();
    ctx.clock.advance(WINDOW_MS - 1);
    expect((await board()).body.items).toHaveLength(1);

    ctx.clock.advance(1); // the deadline itself is past the window
    // Read-only views already say expired, before any receipt exists.
    expect((await board()).body.items).toEqual([]);
    expect((await record(gate.action_key)).body.review).toMatchObject({ status: 'expired', decided_at: expiresAt, receipt_action_key: null, reviewer: null });

    const res = await review(reviewBody(gate.action_key));
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'review_not_pending', review_status: 'expired' });
    expect(res.body.detail).toContain(`ended at ${expiresAt}`);
    const expiryKey = res.body.receipt_action_key;
    expect(expiryKey).toMatch(/^law:review:/);

    const rec = (await record(gate.action_key)).body.review;
    expect(rec).toMatchObject({ status: 'expired', receipt_action_key: expiryKey, decided_at: expiresAt });
    expect(rec.next_step).toMatch(/^Do not proceed/);
    expect(rec.receipts).toEqual([expect.objectContaining({ action_key: expiryKey, decision: 'expired', reviewer: null })]);

    // The expiry receipt is evidence like any other, linked to the action.
    const receipt = (await record(expiryKey)).body;
    expect(receipt.evidence_packet.seal.attestation).toMatchObject({
      kind: 'review',
      decision: 'expired',
      status: 'expired',
      context: { reviewed_action_key: gate.action_key, reviewed_attestation_hash: gate.evidence_packet.seal.attestation_hash, review_expires_at: expiresAt },
    });
    expect(receipt.payload_hash).toBe(payloadHash(receipt.evidence_packet.seal.attestation.context.payload));
    expect(failedChecks(await verifyEvidence(receipt.verify_request, trustedKeySet(ctx.deps.keyring.jwks())))).toEqual([]);

    // Touching it again refuses with the same receipt; nothing more is sealed.
    const again = await review(reviewBody(gate.action_key, { decision: 'escalated' }));
    expect(again.body).toMatchObject({ status: 409, review_status: 'expired', receipt_action_key: expiryKey });
    expect(await receiptCount()).toBe(1);
  });

  it('cannot be escalated past the window either: escalation does not extend it', async () => {
    const gate = await pause();
    ctx.clock.advance(WINDOW_MS - HOUR);
    expect((await review(reviewBody(gate.action_key, { decision: 'escalated' }))).status).toBe(201);
    ctx.clock.advance(HOUR);
    const res = await review(reviewBody(gate.action_key));
    expect(res.status).toBe(409);
    expect(res.body.review_status).toBe('expired');
    expect((await record(gate.action_key)).body.review).toMatchObject({ status: 'expired', escalation_count: 1 });
  });

  it('seals expiry receipts from the background sweep, started with the lifecycle, exactly once', async () => {
    const a = await pause();
    const b = await pause();
    ctx.clock.advance(HOUR);
    const fresh = await pause();
    ctx.clock.advance(WINDOW_MS - HOUR);

    await ctx.deps.lifecycle.start(); // the first sweep runs before start resolves
    expect((await record(a.action_key)).body.review.receipt_action_key).toMatch(/^law:review:/);
    expect((await record(b.action_key)).body.review.receipt_action_key).toMatch(/^law:review:/);
    expect((await record(fresh.action_key)).body.review.status).toBe('pending');
    expect(await receiptCount()).toBe(2);

    // A later sweep or a late review adds nothing for what is already settled.
    expect(await sweepExpiredReviews(ctx.deps)).toBe(0);
    const late = await review(reviewBody(a.action_key));
    expect(late.body).toMatchObject({ review_status: 'expired', receipt_action_key: (await record(a.action_key)).body.review.receipt_action_key });
    expect(await receiptCount()).toBe(2);
  });

  it('honours SVC_REVIEW_TIMEOUT_SECONDS', async () => {
    const short = await createTestContext({ env: { SVC_REVIEW_TIMEOUT_SECONDS: '600' } });
    try {
      const s = await short.signup();
      const gate = await short.request('/v1/gate', { json: gateBody('law'), key: s.apiKey });
      const item = (await short.request('/active-manifest', { key: s.apiKey })).body.items[0];
      expect(Date.parse(item.expires_at) - Date.parse(gate.body.evidence_packet.seal.attestation.recorded_at)).toBe(600_000);
      short.clock.advance(600_000);
      const res = await short.request('/v1/reviews', { json: reviewBody(gate.body.action_key), key: s.apiKey });
      expect(res.body).toMatchObject({ status: 409, review_status: 'expired' });
    } finally {
      await short.close();
    }
  });
});

describe('raw-safe storage', () => {
  it('stores neither the proposed text nor the reviewer’s reason', async () => {
    const proposed = 'Tell opposing counsel the settlement floor is 1.2 million (RAWSAFE-PROPOSAL-7Q)';
    const reason = 'Client confirmed by phone on Tuesday (RAWSAFE-REASON-9Z)';
    const gate = await pause({ proposed_action: proposed });
    const res = await review(reviewBody(gate.action_key, { decision: 'escalated', reason }));
    expect(res.status).toBe(201);
    // The reason is committed through payload_hash: the reviewer's copy re-proves it.
    expect(res.body.payload_hash).toBe(payloadHash(reviewBody(gate.action_key, { decision: 'escalated', reason })));
    for (const { name: file, bytes } of await ctx.storedBytes()) {
      for (const secret of ['RAWSAFE-PROPOSAL-7Q', 'RAWSAFE-REASON-9Z', 'settlement floor', 'confirmed by phone']) {
        expect(bytes.includes(Buffer.from(secret)), `${secret} in ${file}`).toBe(false);
      }
    }
  });
});
