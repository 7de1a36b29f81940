/**
 * Reviews against a real companion in process: the reviewer lists
 * pending items and posts decisions whose sealed receipts are verified; the employee's paused
 * action is released once, and only on a verified approval bound to it.
 */
import { fakeBrowser } from 'wxt/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyReceipt } from '../../extension/utils/background/review-client.ts';
import { POPUP, putPolicy, startBackground } from './background-harness.ts';
import type { Background } from './background-harness.ts';
import { heldAction } from './submit-fixture.ts';

const CITES = 'Does Smith v. Jones still support our limitation argument?';
let bg: Background;

beforeEach(async () => {
  fakeBrowser.reset();
  bg = await startBackground();
  await bg.configure({
    role: 'reviewer',
    reviewerId: 'partner@firm.example',
    gateProfile: { pack: 'law', actionType: 'proposed-action', context: { matter_band: 'moderate', doctrine_anchor: 'competence', jurisdiction: 'US' } },
  });
  await putPolicy(bg, 'law', { allow_action_types: ['proposed-action'] });
});

afterEach(async () => {
  await bg.close();
});

async function paused(): Promise<{ actionKey: string; attempt: string }> {
  const submit = heldAction(CITES);
  const outcome = await bg.send('gate.submit', submit);
  if (outcome.action !== 'review') throw new Error(`expected review, got ${outcome.action}`);
  return { actionKey: outcome.action_key, attempt: submit.attempt_id };
}

describe('the reviewer', () => {
  it('lists the pending item and the law grading mirror', async () => {
    const { actionKey } = await paused();
    const pending = await bg.send('reviews.pending', {}, POPUP);
    expect(pending).toEqual([expect.objectContaining({ action_key: actionKey, pack: 'law', status: 'pending', review_route: 'browser:legal-review' })]);
    const mirror = await bg.send('reviews.mirror', {}, POPUP);
    expect(mirror?.mirror_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(bg.badges).toEqual([1]);
  });

  it('sees why the action needs review: the reasons of its sealed record, for rules the seal commits', async () => {
    const { actionKey } = await paused();
    const { reasons, verified } = await bg.send('reviews.reasons', { action_key: actionKey }, POPUP);
    expect(verified).toBe(true);
    expect(reasons.length).toBeGreaterThan(0);
    const record = await bg.ctx.request(`/v1/records/${encodeURIComponent(actionKey)}`, { key: bg.apiKey });
    const sealed = record.body.verify_request.seal.attestation.context.findings.map((f: { rule: string }) => f.rule);
    for (const r of reasons) {
      expect(sealed).toContain(r.rule);
      expect(r.explanation).not.toContain(CITES);
    }
    // A reason for a rule the seal does not name is dropped, not shown.
    bg.intercept = async (req, forward) => {
      const res = await forward(req);
      if (!req.url.includes('/v1/records/')) return res;
      const body = await res.json();
      return Response.json({ ...body, reasons: [...body.reasons, { rule: 'law.made-up', explanation: 'Trust me.' }] });
    };
    expect((await bg.send('reviews.reasons', { action_key: actionKey }, POPUP)).reasons.map((r) => r.rule)).toEqual(reasons.map((r) => r.rule));
  });

  it('posts a law review with the five-grade mirror and gets a verified receipt', async () => {
    const { actionKey } = await paused();
    const grades = { citation_support: 'PASS', privilege_boundary: 'NA', supervision_route: 'PASS', client_confidentiality: 'NA', filing_readiness: 'NA' } as const;
    const result = await bg.send('reviews.decide', { pack: 'law', action_key: actionKey, decision: 'approved', mirror_grades: grades }, POPUP);
    expect(result).toMatchObject({ decision: 'approved', review_status: 'approved', verification: { verified: true } });
    expect(result.receipt_action_key).toMatch(/^law:review:/);
    const record = await bg.ctx.request(`/v1/records/${encodeURIComponent(result.receipt_action_key)}`, { key: bg.apiKey });
    expect(record.body.verify_request.seal.attestation.context.mirror.mirror_grades).toEqual(grades);
    expect(await bg.send('reviews.pending', {}, POPUP)).toEqual([]);
  });

  it('with "reviewing for" left empty, decides as the person its key names: the receipt seals that principal', async () => {
    await bg.configure({ reviewerId: '' });
    const { actionKey } = await paused();
    const result = await bg.send('reviews.decide', { pack: 'law', action_key: actionKey, decision: 'approved' }, POPUP);
    expect(result).toMatchObject({ review_status: 'approved', verification: { verified: true } });
    const context = (await bg.ctx.request(`/v1/records/${encodeURIComponent(result.receipt_action_key)}`, { key: bg.apiKey })).body.verify_request.seal.attestation.context;
    expect(context.principal.principal_id).toMatch(/^per_/);
    expect(context.asserted_by).toBeUndefined();
    expect((await bg.svc.log.recentReviews())[0]).toMatchObject({ reviewer: context.principal.principal_id });
  });
});

describe('a review rule needing two approvals', () => {
  it('shows N of M on the pending item and after an approval that leaves the action paused', async () => {
    await putPolicy(bg, 'law', { allow_action_types: ['proposed-action'], review_rules: { 'proposed-action': { approvals_required: 2 } } });
    // Two approvals must come from two people: a name the key's person asserts for someone who
    // is not one of the tenant's people counts as nobody, so this reviewer decides as themselves.
    await bg.configure({ reviewerId: '' });
    const { actionKey } = await paused();
    expect(await bg.send('reviews.pending', {}, POPUP)).toEqual([expect.objectContaining({ action_key: actionKey, approvals: 0, approvals_required: 2 })]);
    const first = await bg.send('reviews.decide', { pack: 'law', action_key: actionKey, decision: 'approved' }, POPUP);
    expect(first).toMatchObject({ decision: 'approved', review_status: 'pending', approvals: 1, approvals_required: 2, verification: { verified: true } });
    expect(await bg.send('reviews.pending', {}, POPUP)).toEqual([expect.objectContaining({ action_key: actionKey, approvals: 1, approvals_required: 2 })]);
  });
});

describe('the paused action', () => {
  it('stays paused while pending and escalated, then is released once on a verified approval', async () => {
    const { actionKey, attempt } = await paused();
    expect(await bg.send('review.status', { action_key: actionKey, attempt_id: attempt })).toMatchObject({ status: 'pending', release: false });
    await bg.send('reviews.decide', { pack: 'law', action_key: actionKey, decision: 'escalated' }, POPUP);
    expect(await bg.send('review.status', { action_key: actionKey, attempt_id: attempt })).toMatchObject({ status: 'escalated', release: false });
    await bg.send('reviews.decide', { pack: 'law', action_key: actionKey, decision: 'approved' }, POPUP);

    const approved = await bg.send('review.status', { action_key: actionKey, attempt_id: attempt });
    expect(approved).toMatchObject({ status: 'approved', release: true, reviewer: 'partner@firm.example', verification: { verified: true } });
    // Asked again (a lost answer after a worker restart): the same attempt may still release...
    expect(await bg.send('review.status', { action_key: actionKey, attempt_id: attempt })).toMatchObject({ release: true });
    // ...but no other attempt ever can.
    expect(await bg.send('review.status', { action_key: actionKey, attempt_id: 'another-attempt' })).toMatchObject({ status: 'approved', release: false });
    expect(await bg.svc.log.get(actionKey)).toMatchObject({ review_status: 'approved', review_verified: true, released_attempt: attempt });
  });

  it('rejected is final and never released', async () => {
    const { actionKey, attempt } = await paused();
    await bg.send('reviews.decide', { pack: 'law', action_key: actionKey, decision: 'rejected', reason: 'cite check first' }, POPUP);
    expect(await bg.send('review.status', { action_key: actionKey, attempt_id: attempt })).toMatchObject({ status: 'rejected', release: false, verification: { verified: true } });
  });

  it('withdrawn by the employee is never released, whatever the reviewer does later', async () => {
    const { actionKey, attempt } = await paused();
    await bg.send('review.withdraw', { action_key: actionKey });
    await bg.send('reviews.decide', { pack: 'law', action_key: actionKey, decision: 'approved' }, POPUP);
    expect(await bg.send('review.status', { action_key: actionKey, attempt_id: attempt })).toMatchObject({ status: 'withdrawn', release: false });
  });

  it('an approval whose receipt is not bound to this action does not count', async () => {
    const first = await paused();
    const second = await paused();
    const result = await bg.send('reviews.decide', { pack: 'law', action_key: second.actionKey, decision: 'approved' }, POPUP);
    const receipt = await bg.ctx.request(`/v1/records/${encodeURIComponent(result.receipt_action_key)}`, { key: bg.apiKey });
    const checked = await verifyReceipt(bg.svc, receipt.body, first.actionKey, 'approved');
    expect(checked.verification.verified).toBe(false);
    expect(checked.problem).toContain('does not name the reviewed action');
    expect((await verifyReceipt(bg.svc, receipt.body, second.actionKey, 'rejected')).problem).toContain('decision is approved');
  });
});
