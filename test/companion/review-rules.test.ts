/**
 * Review rules (companion/reviews/rules.ts): N-of-M approvals from distinct reviewers (four
 * eyes at 2), the rule captured when an action pauses, reminders and escalation chains run by
 * the review worker's round, and review insights. In-process against a real temporary SQLite
 * file, the real keys and the real sealer; time moves only by the test clock.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runReviewSchedule } from '../../companion/reviews/schedule.ts';
import { createTestContext, freshTenantContext, makeTempDir } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { gateBody } from './pack-fixtures.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let ctx: TestContext;
let key: string;
let tenantId: string;
beforeEach(async () => ({ ctx, key, tenantId } = await freshTenantContext({ env: { SVC_WEBHOOK_ALLOW_LOOPBACK: '1' } })));
afterEach(() => ctx.close());

const FOUR_EYES = { 'proposed-action': { approvals_required: 2 } };
const SCHEDULED = {
  'proposed-action': {
    approvals_required: 2,
    remind_after_seconds: 3600,
    escalation: [
      { after_seconds: 7200, route: 'workflow:general-counsel' },
      { after_seconds: 10800, route: 'chat:managing-partner' },
    ],
  },
};

const putPolicy = (doc: unknown) => ctx.request('/tenant/policy?policy_pack=law', { method: 'PUT', json: doc, key });
const review = (json: unknown, k = key) => ctx.request('/v1/reviews', { json, key: k });
const record = (actionKey: string) => ctx.request(`/v1/records/${actionKey}`, { key });
const insights = (query = '') => ctx.request(`/reviews/insights${query}`, { key });
const receiptCount = async () => (await ctx.sql<{ n: number }>("SELECT count(*) AS n FROM sealed_records WHERE kind = 'review'"))[0]!.n;

async function withRules(rules: unknown) {
  const res = await putPolicy({ review_rules: rules });
  expect(res.status).toBe(201);
  return res;
}

async function pause(k = key) {
  const res = await ctx.request('/v1/gate', { json: gateBody('law'), key: k });
  expect(res.status).toBe(201);
  expect(res.body.decision).toBe('needs_review');
  return res.body.action_key as string;
}

const approve = (actionKey: string, reviewer: string, extra: Record<string, unknown> = {}) =>
  review({ pack: 'law', action_key: actionKey, reviewer, decision: 'approved', ...extra });

let added = 0;
/** A person of the tenant holding reviews:decide, with their own key (N-of-M counts people). */
async function reviewerPerson(name: string) {
  const email = `${name}-${++added}@example.com`;
  const res = await ctx.request('/account/people', { json: { email, display_name: name, capabilities: ['reviews:decide'] }, key });
  expect(res.status, res.text).toBe(201);
  const id = res.body.person.id as string;
  const personKey = res.body.api_key as string;
  return {
    id,
    email,
    key: personKey,
    /** This person's approval with their own key; reviewer absent: they decide as themselves. */
    approve: (actionKey: string, extra: Record<string, unknown> = {}) => review({ pack: 'law', action_key: actionKey, decision: 'approved', ...extra }, personKey),
    decide: (actionKey: string, decision: string) => review({ pack: 'law', action_key: actionKey, decision }, personKey),
  };
}

describe('review_rules in the policy document', () => {
  it('stores a rule with its defaults made explicit, and leaves documents without rules as they were', async () => {
    const plain = await putPolicy({ review_routes: { 'proposed-action': 'browser:legal-review' } });
    expect(plain.status).toBe(201);
    expect(plain.body.document.review_rules).toBeUndefined();
    const res = await withRules({ 'proposed-action': { approvals_required: 2 }, 'court-filing': { remind_after_seconds: 600 } });
    expect(res.body.document.review_rules).toEqual({
      'proposed-action': { approvals_required: 2, escalation: [] },
      'court-filing': { approvals_required: 1, remind_after_seconds: 600, escalation: [] },
    });
    const options = await ctx.request('/tenant/policy/options?policy_pack=law', { key });
    expect(options.body.current.document.review_rules['proposed-action']).toEqual({ approvals_required: 2, escalation: [] });
    expect(options.body.limits).toMatchObject({ review_approvals_max: 5, review_escalation_steps_max: 5, review_rule_seconds_min: 60 });
  });

  it('answers 422 naming every failing field, and stores nothing', async () => {
    const res = await putPolicy({
      review_rules: {
        'proposed-action': {
          approvals_required: 6,
          remind_after_seconds: 10,
          escalation: [
            { after_seconds: 7200, route: 'pager:nobody' },
            { after_seconds: 3600, route: 'chat:managing-partner' },
          ],
          escalate_to: 'x',
        },
        'not-an-action-type': { approvals_required: 2 },
      },
    });
    expect(res.status).toBe(422);
    const paths = (res.body.errors as { path: string }[]).map((e) => e.path).sort();
    expect(paths).toEqual(
      [
        '/review_rules/not-an-action-type',
        '/review_rules/proposed-action/approvals_required',
        '/review_rules/proposed-action/escalate_to',
        '/review_rules/proposed-action/escalation/0/route',
        '/review_rules/proposed-action/escalation/1/after_seconds',
        '/review_rules/proposed-action/remind_after_seconds',
      ].sort(),
    );
    expect(await ctx.sql('SELECT count(*) AS n FROM policy_versions')).toEqual([{ n: 0 }]);
  });
});

describe('four-eyes: approvals from distinct people', () => {
  it('one approval does not release; the same person again, under another spelling, is refused with nothing sealed; a second person releases', async () => {
    await withRules(FOUR_EYES);
    const [alice, bob] = [await reviewerPerson('alice'), await reviewerPerson('bob')];
    const action = await pause();

    const first = await alice.approve(action);
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({ decision: 'approved', review_status: 'pending', approvals: 1, approvals_required: 2, reviewer: alice.id });
    expect(first.body.evidence_packet.seal.attestation.context.approval).toEqual({
      approvals_required: 2,
      approval_number: 1,
      releases: false,
      counts_as: alice.id,
      prior_approvals: [],
    });
    expect((await record(action)).body.review).toMatchObject({ status: 'pending', approvals: 1, approvals_required: 2, receipt_action_key: null });
    const board = await ctx.request('/active-manifest', { key });
    expect(board.body.items).toEqual([
      expect.objectContaining({
        action_key: action,
        status: 'pending',
        approvals: 1,
        approvals_required: 2,
        approved_by: [{ receipt_action_key: first.body.action_key, at: expect.any(String), reviewer: alice.id, principal_id: alice.id, display_name: 'alice', asserted_by: null }],
      }),
    ]);

    const sealed = await receiptCount();
    const again = await alice.approve(action, { reviewer: alice.email.toUpperCase(), reason: 'still fine' });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'review_duplicate_approver', approvals: 1, approvals_required: 2, receipt_action_key: first.body.action_key });
    expect(await receiptCount()).toBe(sealed);

    const second = await bob.approve(action);
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ review_status: 'approved', approvals: 2, approvals_required: 2 });
    expect(second.body.evidence_packet.seal.attestation.context.approval).toEqual({
      approvals_required: 2,
      approval_number: 2,
      releases: true,
      counts_as: bob.id,
      prior_approvals: [{ action_key: first.body.action_key, reviewer: alice.id, counts_as: alice.id }],
    });
    const after = (await record(action)).body.review;
    expect(after).toMatchObject({ status: 'approved', reviewer: bob.id, receipt_action_key: second.body.action_key, approvals: 2 });
    expect(after.receipts.map((r: { reviewer: string }) => r.reviewer)).toEqual([alice.id, bob.id]);
    expect(after.approved_by.map((a: { principal_id: string }) => a.principal_id)).toEqual([alice.id, bob.id]);
    expect((await ctx.request('/active-manifest', { key })).body.items).toEqual([]);
  });

  it('replays an approval by its idempotency key as the original answer, not as a duplicate', async () => {
    await withRules(FOUR_EYES);
    const alice = await reviewerPerson('alice');
    const action = await pause();
    const first = await alice.approve(action, { idempotency_key: 'approve-once-1' });
    const replay = await alice.approve(action, { idempotency_key: 'approve-once-1' });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(await receiptCount()).toBe(1);
  });

  it('one rejection closes the action rejected, even after an approval', async () => {
    await withRules(FOUR_EYES);
    const [alice, bob, carol] = [await reviewerPerson('alice'), await reviewerPerson('bob'), await reviewerPerson('carol')];
    const action = await pause();
    expect((await alice.approve(action)).status).toBe(201);
    const rejected = await bob.decide(action, 'rejected');
    expect(rejected.status).toBe(201);
    expect(rejected.body.review_status).toBe('rejected');
    expect((await carol.approve(action)).body).toMatchObject({ code: 'review_not_pending', review_status: 'rejected' });
  });

  it('an escalation by a reviewer keeps the approvals; the second person still releases', async () => {
    await withRules(FOUR_EYES);
    const [alice, bob] = [await reviewerPerson('alice'), await reviewerPerson('bob')];
    const action = await pause();
    await alice.approve(action);
    expect((await alice.decide(action, 'escalated')).status).toBe(201);
    const partial = await alice.approve(action);
    expect(partial.body.code).toBe('review_duplicate_approver');
    const final = await bob.approve(action);
    expect(final.body).toMatchObject({ review_status: 'approved', approvals: 2 });
  });

  it('two concurrent final approvals: exactly one releases', async () => {
    await withRules(FOUR_EYES);
    const [alice, bob, carol] = [await reviewerPerson('alice'), await reviewerPerson('bob'), await reviewerPerson('carol')];
    const action = await pause();
    await alice.approve(action);
    const answers = await Promise.all([bob.approve(action), carol.approve(action)]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    expect(answers.find((a) => a.status === 409)!.body).toMatchObject({ code: 'review_not_pending', review_status: 'approved' });
    expect(await ctx.sql("SELECT count(*) AS n FROM review_receipts WHERE reviewed_action_key = ? AND decision = 'approved'", action)).toEqual([{ n: 2 }]);
    expect((await record(action)).body.review).toMatchObject({ status: 'approved', approvals: 2 });
  });

  it('two concurrent first approvals by distinct people both count: the later one is prepared again and releases', async () => {
    await withRules(FOUR_EYES);
    const [alice, bob] = [await reviewerPerson('alice'), await reviewerPerson('bob')];
    const action = await pause();
    const answers = await Promise.all([alice.approve(action), bob.approve(action)]);
    expect(answers.map((a) => a.status)).toEqual([201, 201]);
    expect(answers.map((a) => a.body.review_status).sort()).toEqual(['approved', 'pending']);
    const release = answers.find((a) => a.body.review_status === 'approved')!;
    expect(release.body.evidence_packet.seal.attestation.context.approval.prior_approvals).toHaveLength(1);
  });

  it('two concurrent approvals by one person under two spellings: exactly one is sealed', async () => {
    await withRules(FOUR_EYES);
    const alice = await reviewerPerson('alice');
    const action = await pause();
    const answers = await Promise.all([alice.approve(action), alice.approve(action, { reviewer: alice.email })]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    expect(answers.find((a) => a.status === 409)!.body.code).toBe('review_duplicate_approver');
    expect(await receiptCount()).toBe(1);
  });

  it('captures the rule in force when the action pauses: a later policy does not change an open item', async () => {
    const policy = await withRules(FOUR_EYES);
    const [alice, bob] = [await reviewerPerson('alice'), await reviewerPerson('bob')];
    const underRule = await pause();
    // The gate seal commits the digest of the policy version holding the rule.
    const gate = (await record(underRule)).body;
    expect(JSON.stringify(gate)).toContain(policy.body.digest);
    expect((await putPolicy({})).status).toBe(201);
    const underDefault = await pause();
    expect((await alice.approve(underDefault)).body.review_status).toBe('approved');
    expect((await alice.approve(underRule)).body).toMatchObject({ review_status: 'pending', approvals_required: 2 });
    expect((await bob.approve(underRule)).body.review_status).toBe('approved');
  });
});

describe('reminders and escalation chains', () => {
  const deliveries = () => ctx.sql<{ event: string; event_key: string; body: string }>('SELECT event, event_key, body FROM webhook_deliveries WHERE tenant_id = ? ORDER BY event_key', tenantId);

  it('reminds once and takes each step once, across rounds and across reopening the database; events land in the outbox', async () => {
    const dataDir = makeTempDir();
    await ctx.close();
    ctx = await createTestContext({ dataDir, env: { SVC_WEBHOOK_ALLOW_LOOPBACK: '1' } });
    ({ apiKey: key, tenantId } = await ctx.signup());
    const hook = await ctx.request('/tenant/integrations/webhook/review-desk', {
      method: 'PUT',
      key,
      json: { enabled: true, config: { url: 'http://127.0.0.1:9/hook', events: ['review.reminder', 'review.escalated'] } },
    });
    expect(hook.status).toBe(201);
    await withRules(SCHEDULED);
    const action = await pause();

    ctx.clock.advance(HOUR - MINUTE);
    expect(await runReviewSchedule(ctx.deps)).toBe(0);
    ctx.clock.advance(MINUTE);
    expect(await runReviewSchedule(ctx.deps)).toBe(1);
    expect(await runReviewSchedule(ctx.deps)).toBe(0);
    expect((await deliveries()).map((d) => d.event_key)).toEqual([`review.reminder:${action}`]);
    expect(JSON.parse((await deliveries())[0]!.body)).toMatchObject({
      event: 'review.reminder',
      tenant: tenantId,
      action_key: action,
      action_type: 'proposed-action',
      review_route: 'browser:legal-review',
      waiting_seconds: 3600,
      approvals: 0,
      approvals_required: 2,
    });

    ctx.clock.advance(HOUR);
    expect(await runReviewSchedule(ctx.deps)).toBe(1);
    expect(await runReviewSchedule(ctx.deps)).toBe(0);
    const onCounsel = await ctx.request('/active-manifest?route=workflow:general-counsel', { key });
    expect(onCounsel.body.items).toEqual([expect.objectContaining({ action_key: action, review_route: 'workflow:general-counsel', escalation_level: 1 })]);

    // Reopen the same database: the stored step, not memory, decides what is still due.
    await ctx.close();
    ctx = await createTestContext({ dataDir, takeOver: true, env: { SVC_WEBHOOK_ALLOW_LOOPBACK: '1' } });
    ctx.clock.set('2025-01-01T02:01:00.000Z');
    expect(await runReviewSchedule(ctx.deps)).toBe(0);
    ctx.clock.advance(HOUR);
    expect(await runReviewSchedule(ctx.deps)).toBe(1);
    expect(await runReviewSchedule(ctx.deps)).toBe(0);

    expect((await deliveries()).map((d) => [d.event, d.event_key])).toEqual([
      ['review.escalated', `review.escalated:${action}:1`],
      ['review.escalated', `review.escalated:${action}:2`],
      ['review.reminder', `review.reminder:${action}`],
    ]);
    const steps = (await deliveries())
      .filter((d) => d.event === 'review.escalated')
      .map((d) => JSON.parse(d.body));
    expect(steps.map((s) => [s.escalation_level, s.from_route, s.review_route])).toEqual([
      [1, 'browser:legal-review', 'workflow:general-counsel'],
      [2, 'workflow:general-counsel', 'chat:managing-partner'],
    ]);
    const view = (await record(action)).body.review;
    expect(view).toMatchObject({ status: 'pending', review_route: 'chat:managing-partner', escalation_level: 2, reminded_at: '2025-01-01T01:00:00.000Z' });
    expect(view.escalations.map((e: { level: number; to_route: string }) => [e.level, e.to_route])).toEqual([
      [1, 'workflow:general-counsel'],
      [2, 'chat:managing-partner'],
    ]);
    await ctx.close();
    ctx = await createTestContext();
  });

  it('takes every overdue step in order after downtime, and nothing for a decided or expired item', async () => {
    await withRules(SCHEDULED);
    const waiting = await pause();
    const decided = await pause();
    await review({ pack: 'law', action_key: decided, reviewer: 'partner-3', decision: 'rejected' });
    ctx.clock.advance(5 * HOUR);
    expect(await runReviewSchedule(ctx.deps)).toBe(3);
    expect((await record(waiting)).body.review).toMatchObject({ escalation_level: 2, review_route: 'chat:managing-partner' });
    expect((await record(decided)).body.review).toMatchObject({ escalation_level: 0, reminded_at: null });
    // No webhook is subscribed: the steps are still taken, with no delivery rows.
    expect(await deliveries()).toEqual([]);

    const late = await pause();
    ctx.clock.advance(72 * HOUR);
    expect(await runReviewSchedule(ctx.deps)).toBe(0);
    expect((await record(late)).body.review).toMatchObject({ status: 'expired', escalation_level: 0, reminded_at: null });
  });

  it('runs in the review worker round started with the service', async () => {
    await withRules({ 'proposed-action': { remind_after_seconds: 60 } });
    const action = await pause();
    ctx.clock.advance(MINUTE);
    await ctx.deps.lifecycle.start(); // the first round runs before start resolves
    expect((await record(action)).body.review.reminded_at).toBe('2025-01-01T00:01:00.000Z');
    expect(await runReviewSchedule(ctx.deps)).toBe(0);
  });
});

describe('review insights', () => {
  it('summarises a known set of decisions, tenant-wide and per action type, on /reviews/insights and /active-manifest', async () => {
    const keys = [await pause(), await pause(), await pause(), await pause(), await pause()];
    const [a, b, c, d] = keys as [string, string, string, string, string];
    ctx.clock.advance(MINUTE);
    await approve(a, 'attorney-17');
    ctx.clock.advance(MINUTE);
    await approve(b, 'attorney-17');
    ctx.clock.advance(3 * MINUTE);
    await review({ pack: 'law', action_key: c, reviewer: 'partner-3', decision: 'rejected' });
    await review({ pack: 'law', action_key: d, reviewer: 'partner-3', decision: 'escalated' });

    const res = await insights();
    expect(res.status).toBe(200);
    const expected = {
      total: 5,
      pending: 2,
      oldest_pending_age_seconds: 300,
      approved: 2,
      rejected: 1,
      expired: 0,
      escalated: 1,
      approval_rate: 0.6667,
      median_seconds_to_decide: 120,
      p90_seconds_to_decide: 300,
    };
    expect(res.body).toEqual({
      tenant_id: tenantId,
      generated_at: '2025-01-01T00:05:00.000Z',
      since: null,
      ...expected,
      action_types: [{ action_type: 'proposed-action', ...expected }],
    });
    expect((await ctx.request('/active-manifest', { key })).body.insights).toEqual(res.body);

    ctx.clock.advance(72 * HOUR);
    expect((await insights()).body).toMatchObject({ pending: 0, expired: 2, oldest_pending_age_seconds: null, approved: 2 });
    expect((await insights('?since=2025-01-01T00:00:01Z')).body).toMatchObject({ since: '2025-01-01T00:00:01.000Z', total: 0, approval_rate: null, action_types: [] });
  });

  it('reads only the caller’s tenant, needs a key, and answers 422 for a bad since', async () => {
    await pause();
    const other = await ctx.signup();
    expect((await ctx.request('/reviews/insights', { key: other.apiKey })).body).toMatchObject({ tenant_id: other.tenantId, total: 0 });
    expect((await ctx.request('/reviews/insights')).status).toBe(401);
    const bad = await insights('?since=yesterday');
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].path).toBe('/since');
    expect((await insights('?until=x')).status).toBe(422);
  });
});
