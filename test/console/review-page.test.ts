/**
 * The review page of one paused action (#/reviews/<action_key>, the link route dispatches
 * carry) in real Chromium against the real companion: opened signed out, the link survives
 * signing in and lands on the page; the page shows the gate's reasons, the rule and the policy
 * version the seal commits, the pack's claim boundary, who has approved so far and a link to the
 * sealed record, beside the decide form with the context opened on this device; the reviewer
 * decides from it; a decided action shows how it ended and its receipt, verified in this
 * browser, and no form; a context that is not what was gated keeps Submit disabled. Every
 * expected fact is read from the service's own API, not written here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepExpiredReviews } from '../../companion/reviews/expiry.ts';
import { checkPage, openConsole, screenshot } from './harness.ts';
import type { ConsoleWorld } from './harness.ts';
import { addPerson, pause as pauseAction, shareContext } from './review-fixtures.ts';
import type { Paused } from './review-fixtures.ts';

let world: ConsoleWorld;
let employeeKey = '';
let ritaKey = '';
let bobKey = '';
const CANARY = 'CANARY-PROMPT-rev1ew-page';

const pause = (prompt: string) => pauseAction(world, employeeKey, prompt);

/** The extension's sharing step, optionally sealing another body. */
async function share(paused: Paused, body = paused.body): Promise<void> {
  const { recipients } = await shareContext(world, employeeKey, paused, { body });
  expect(recipients.recipients.length).toBeGreaterThan(0);
}

async function decideByApi(key: string, actionKey: string, decision: 'approved' | 'rejected') {
  const res = await world.ctx.request('/v1/reviews', { json: { pack: 'law', action_key: actionKey, decision }, key });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

const pageUrl = (actionKey: string) => `${world.url}/console#/reviews/${actionKey}`;
const facts = () => world.page.getByRole('region', { name: 'Why it paused' });

let first: Paused;

beforeAll(async () => {
  world = await openConsole();
  const person = (email: string, capabilities: string[]) => addPerson(world, email, capabilities);
  employeeKey = await person('emma@firm.example', []);
  ritaKey = await person('rita@firm.example', ['reviews:decide']);
  bobKey = await person('bob@firm.example', ['reviews:decide']);
  // Four eyes on the law pack's proposed actions, and the context sealed to the reviewers.
  const policy = await world.ctx.request('/tenant/policy?policy_pack=law', {
    method: 'PUT',
    json: { review_context: 'encrypted', review_rules: { 'proposed-action': { approvals_required: 2 } } },
    key: world.apiKey,
  });
  expect(policy.status, policy.text).toBe(201);
  first = await pause('Nothing secret here');
});
afterAll(() => world?.close());

describe('the review page of one paused action', () => {
  it('opened signed out, lands on the page after signing in, with everything the reviewer decides on', async () => {
    const { page } = world;
    await page.goto(pageUrl(first.actionKey));
    await page.getByLabel('API key').fill(ritaKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Paused action');
    expect(page.url()).toBe(pageUrl(first.actionKey));
    // The decide form, its context opened on this device (none shared yet: this device was just made).
    const form = page.getByRole('form', { name: /Decide on proposed-action/ });
    await expect.poll(() => form.getByText('Context not shared').isVisible()).toBe(true);

    // The facts, as the service states them.
    const record = (await world.ctx.request(`/v1/records/${first.actionKey}`, { key: ritaKey })).body;
    const attestation = record.verify_request.seal.attestation;
    const rules = (attestation.context.findings as { effect: string; rule: string }[]).filter((f) => f.effect === 'needs_review').map((f) => f.rule);
    expect(rules.length).toBeGreaterThan(0);
    const receipts = (await world.ctx.request('/tenant/policy/receipts?policy_pack=law', { key: world.apiKey })).body.receipts as { version: number; digest: string }[];
    const version = receipts.find((r) => r.digest === attestation.policy_digest);
    expect(version).toBeDefined();
    const packs = (await world.ctx.request('/v1/packs')).body.packs as { name: string; claim_boundary: string }[];
    const boundary = packs.find((p) => p.name === 'law')!.claim_boundary;
    await expect.poll(() => facts().textContent()).toContain(`Version ${version!.version} of the law policy`);
    const text = (await facts().textContent())!;
    for (const reason of record.reasons as { explanation: string; rule: string }[]) {
      expect(text).toContain(reason.explanation);
      expect(text).toContain(reason.rule);
    }
    for (const rule of rules) expect(await facts().locator('dd', { has: page.locator('code', { hasText: rule }) }).count()).toBeGreaterThan(0);
    await expect.poll(() => facts().textContent()).toContain(boundary);
    expect(text).toContain('0 of 2');
    expect(text).toContain('nobody has approved yet');
    const recordLink = facts().getByRole('link', { name: /Open the sealed record/ });
    expect(await recordLink.getAttribute('href')).toBe(`#/records/${first.actionKey}`);
    await expect.poll(() => page.getByText('sealed record verified in this browser').isVisible()).toBe(true);
    await checkPage(world, 'review-page');

    // The record link opens that record, verified in this browser.
    await recordLink.click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Record');
    const row = page.getByRole('row').filter({ hasText: first.actionKey.slice(-12) });
    await expect.poll(() => row.getByText('verified', { exact: true }).isVisible()).toBe(true);
  });

  it('shows who approved so far and decides from the page on the opened context; the page then shows the receipt', async () => {
    const { page } = world;
    const paused = await pause(`Summarise the memo ${CANARY}`);
    await share(paused);
    const bobs = await decideByApi(bobKey, paused.actionKey, 'approved');
    expect(bobs.review_status).toBe('pending');
    await page.goto(pageUrl(paused.actionKey));
    const form = page.getByRole('form', { name: /Decide on proposed-action/ });
    await expect.poll(() => form.getByText('This is exactly what was gated').isVisible()).toBe(true);
    expect(await form.locator('.review-context pre').first().textContent()).toBe(`Summarise the memo ${CANARY}`);
    const approvals = facts().locator('.approvals li');
    await expect.poll(() => approvals.count()).toBe(1);
    expect(await approvals.first().textContent()).toMatch(/^bob, /);
    expect(await facts().textContent()).toContain('1 of 2');
    await screenshot(page, 'review-page-context');

    await form.getByLabel('Approve').check();
    await form.getByRole('button', { name: /Submit: approve/ }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Done: approved' }).isVisible()).toBe(true);
    // The page follows the record: decided, with its receipt verified here, and no form.
    await expect.poll(() => page.getByText(/Already decided: approved/).isVisible()).toBe(true);
    const record = (await world.ctx.request(`/v1/records/${paused.actionKey}`, { key: ritaKey })).body;
    expect(record.review).toMatchObject({ status: 'approved', approvals: 2 });
    const ended = page.getByRole('region', { name: 'How the review ended' });
    expect(await ended.getByRole('link').getAttribute('href')).toBe(`#/records/${record.review.receipt_action_key}`);
    await expect.poll(() => ended.getByText('verified in this browser').isVisible()).toBe(true);
    expect(await page.getByRole('form', { name: /Decide on/ }).count()).toBe(0);
    await expect.poll(() => facts().locator('.approvals li').count()).toBe(2);
  });

  it('an action decided elsewhere shows how it ended and its receipt, and no form', async () => {
    const { page } = world;
    const paused = await pause('Decided elsewhere');
    const answer = await decideByApi(bobKey, paused.actionKey, 'rejected');
    await page.goto(pageUrl(paused.actionKey));
    await expect.poll(() => page.getByText(/Already decided: rejected/).isVisible()).toBe(true);
    const ended = page.getByRole('region', { name: 'How the review ended' });
    expect(await ended.getByRole('link').getAttribute('href')).toBe(`#/records/${answer.action_key}`);
    await expect.poll(() => ended.getByText('verified in this browser').isVisible()).toBe(true);
    expect(await page.getByRole('form', { name: /Decide on/ }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /Submit/ }).count()).toBe(0);
    await screenshot(page, 'review-page-decided');
  });

  it('keeps Submit disabled when the context is not what was gated', async () => {
    const { page } = world;
    const paused = await pause(`Summarise the memo ${CANARY}`);
    await share(paused, { ...paused.body, redacted_text: 'Something else entirely' });
    await page.goto(pageUrl(paused.actionKey));
    const form = page.getByRole('form', { name: /Decide on proposed-action/ });
    await expect.poll(() => form.getByText(/Mismatch: this is not what was gated/).isVisible()).toBe(true);
    await expect.poll(() => form.getByRole('button', { name: /Submit/ }).isDisabled()).toBe(true);
  });

  it('the board links each row to its review page, and its decide form shows the same facts', async () => {
    const { page } = world;
    await page.goto(`${world.url}/console#/reviews`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Review board');
    const row = page.getByRole('row').filter({ hasText: first.actionKey.slice(-12) });
    await expect.poll(() => row.count()).toBe(1);
    await row.getByRole('button', { name: /Decide/ }).click();
    await expect.poll(() => facts().textContent()).toContain('law.default.proposed-action');
    await row.getByRole('link', { name: /proposed-action/ }).click();
    await expect.poll(() => page.url()).toBe(pageUrl(first.actionKey));
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Paused action');
    // A link to an action this tenant does not have says so.
    await page.goto(pageUrl('law:proposed-action:01JZZZZZZZZZZZZZZZZZZZZZZZ'));
    await expect.poll(() => page.getByText(/No paused action/).isVisible()).toBe(true);
  });

  // Last: it moves the service clock past every open review's window.
  it('an expired action says so, with its expiry receipt verified, and no form', async () => {
    const { page } = world;
    const paused = await pause('Left to expire');
    const expiresAt = (await world.ctx.request(`/v1/records/${paused.actionKey}`, { key: ritaKey })).body.review.expires_at as string;
    world.ctx.clock.set(Date.parse(expiresAt) + 1000);
    expect(await sweepExpiredReviews(world.ctx.deps)).toBeGreaterThanOrEqual(1);
    const review = (await world.ctx.request(`/v1/records/${paused.actionKey}`, { key: ritaKey })).body.review;
    expect(review.status).toBe('expired');
    expect(review.receipt_action_key).toEqual(expect.any(String));
    await page.goto(pageUrl(paused.actionKey));
    // Three days on, the 8-hour session has ended too: signing in again keeps the link.
    await page.getByLabel('API key').fill(ritaKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByText(/^Expired /).isVisible()).toBe(true);
    expect(page.url()).toBe(pageUrl(paused.actionKey));
    const ended = page.getByRole('region', { name: 'How the review ended' });
    expect(await ended.getByRole('link').getAttribute('href')).toBe(`#/records/${review.receipt_action_key}`);
    await expect.poll(() => ended.getByText('verified in this browser').isVisible()).toBe(true);
    expect(await page.getByRole('form', { name: /Decide on/ }).count()).toBe(0);
  });
});
