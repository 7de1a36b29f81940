/**
 * Reviews end to end: needs_review → the in-page modal "paused until review" → a reviewer in a
 * second browser (the extension popup in reviewer mode) approves, rejects or escalates → the
 * employee's page releases the action once with the review receipt shown as verified, or never
 * sends it. Also: the employee withdraws; the service worker is stopped mid-flow (as Chromium
 * does to an idle worker) and nothing is sent twice.
 *
 * Real Chromium, the real extension build and a real companion on loopback; the reviewer and
 * the employee are two browser profiles of the same tenant.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupCompanions, start, tempDataDir } from '../../helpers/companion-process.ts';
import type { Companion } from '../../helpers/companion-process.ts';
import { launchWithExtension, screenshot } from './harness/browser.ts';
import type { ExtensionBrowser } from './harness/browser.ts';
import { startFixtureServer } from './harness/fixture-server.ts';
import type { FixtureServer } from './harness/fixture-server.ts';
import { configureExtension } from './harness/options-page.ts';
import { closeReview, decide, openReviewerPopup } from './harness/reviewer.ts';
import { GENERIC_SELECTORS, composerText, fixtureMappings, openSite, sent, typeInto } from './harness/sites.ts';
import type { Site } from './harness/sites.ts';
import { getJson, putPolicy, signUp } from './harness/tenant.ts';

const LAW_CONTEXT = { matter_band: 'moderate', doctrine_anchor: 'competence', jurisdiction: 'US', tool_data_handling: 'vendor-trains-on-inputs' };
/** Citing authority to an external AI tool: the law engine routes it for attorney review. */
const NEEDS_REVIEW = (n: string) => `Does Smith v. Jones still support our limitation argument? (${n})`;

let companion: Companion;
let fixtures: FixtureServer;
let employee: ExtensionBrowser;
let reviewer: ExtensionBrowser;
let reviewerPopup: Page;
let apiKey: string;

beforeAll(async () => {
  [companion, fixtures] = await Promise.all([start(tempDataDir()), startFixtureServer()]);
  apiKey = await signUp(companion.url, 'team@firm.example');
  await putPolicy(companion.url, apiKey, 'law', { allow_action_types: ['proposed-action'] });
  [employee, reviewer] = await Promise.all([launchWithExtension('employee'), launchWithExtension('reviewer')]);
  const common = { companionUrl: companion.url, apiKey, pack: 'law', actionType: 'proposed-action', context: LAW_CONTEXT };
  await Promise.all([
    configureExtension(employee, { ...common, mappings: fixtureMappings(fixtures.url), generic: GENERIC_SELECTORS }),
    configureExtension(reviewer, { ...common, role: 'reviewer', reviewerId: 'supervising.attorney@firm.example' }, 'options-reviewer'),
  ]);
  reviewerPopup = await openReviewerPopup(reviewer);
});

afterAll(async () => {
  await Promise.all([employee?.close(), reviewer?.close()]);
  await fixtures?.close();
  cleanupCompanions();
});

/** Types a prompt that needs review, sends it and returns the paused action's key. */
async function pause(page: Page, site: Site, text: string): Promise<string> {
  await openSite(page, fixtures.url, site);
  await typeInto(page, site, text);
  await page.keyboard.press('Enter');
  const modal = page.locator('[data-kind="review"]');
  await modal.waitFor();
  return (await modal.locator('.ag-key').textContent())!;
}

describe('needs_review', () => {
  it('is paused in a modal; escalated stays paused; approved releases it once, with the review receipt verified', async () => {
    const page = await employee.context.newPage();
    const text = NEEDS_REVIEW('approve');
    const actionKey = await pause(page, 'gemini', text);
    const modal = page.locator('[data-kind="review"]');
    expect(await modal.locator('h2').textContent()).toBe('Paused until review');
    expect(await modal.locator('.ag-route').textContent()).toBe('browser:legal-review');
    expect(await modal.locator('.ag-next-step').textContent()).toMatch(/^Pause here\./);
    expect(await modal.locator('.ag-badge').getAttribute('data-verified')).toBe('true');
    await screenshot(page, 'review-paused-gemini');

    await decide(reviewerPopup, actionKey, 'escalate', {}, 'reviewer-pending-list');
    await closeReview(reviewerPopup);
    await page.locator('[data-kind="review"] .ag-status', { hasText: 'escalated' }).waitFor();
    expect(await sent(page)).toEqual([]);

    await decide(reviewerPopup, actionKey, 'approve', { citation_support: 'PASS', privilege_boundary: 'NA' });
    await screenshot(reviewerPopup, 'reviewer-approved');
    await closeReview(reviewerPopup);

    const approved = page.locator('[data-kind="approved"]');
    await approved.waitFor();
    expect(await approved.locator('.ag-badge').getAttribute('data-verified')).toBe('true');
    expect(await approved.locator('.ag-badge').textContent()).toContain('Review receipt: verified');
    await screenshot(page, 'review-approved-released-gemini');
    expect(await sent(page)).toEqual([text]);

    const record = await getJson(companion.url, apiKey, `/v1/records/${encodeURIComponent(actionKey)}`);
    expect(record.review.status).toBe('approved');
    expect(record.review.reviewer).toBe('supervising.attorney@firm.example');
    await page.close();
  });

  it('rejected is never sent, and the text stays in the composer', async () => {
    const page = await employee.context.newPage();
    const text = NEEDS_REVIEW('reject');
    const actionKey = await pause(page, 'chatgpt', text);
    await decide(reviewerPopup, actionKey, 'reject');
    await closeReview(reviewerPopup);

    const rejected = page.locator('[data-kind="rejected"]');
    await rejected.waitFor();
    expect(await rejected.locator('h2').textContent()).toContain('Rejected');
    expect(await rejected.locator('.ag-badge').getAttribute('data-verified')).toBe('true');
    await screenshot(page, 'review-rejected-chatgpt');
    expect(await sent(page)).toEqual([]);
    expect(await composerText(page, 'chatgpt')).toBe(text);
    await page.close();
  });

  it('withdrawn by the employee is never sent, even when a reviewer approves it later', async () => {
    const page = await employee.context.newPage();
    const text = NEEDS_REVIEW('withdraw');
    const actionKey = await pause(page, 'claude', text);
    await page.locator('[data-kind="review"] button.ag-withdraw').click();
    await page.locator('[data-kind="review"]').waitFor({ state: 'detached' });
    await screenshot(page, 'review-withdrawn-claude');

    await decide(reviewerPopup, actionKey, 'approve');
    await closeReview(reviewerPopup);
    // The employee's log records the approval only once its page is gone; the page itself never
    // sends: send something else and check only that went out.
    await typeInto(page, 'claude', 'A different, ordinary question about the weather.');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => (window as any).__sent.length > 0);
    expect(await sent(page)).toEqual(['A different, ordinary question about the weather.']);
    await page.close();
  });
});

describe('service worker restarted mid-flow', () => {
  it('a paused action survives the worker stopping and is released exactly once after approval', async () => {
    const page = await employee.context.newPage();
    const text = NEEDS_REVIEW('restart');
    const actionKey = await pause(page, 'copilot', text);

    await employee.stopServiceWorker(page);
    await decide(reviewerPopup, actionKey, 'approve');
    await closeReview(reviewerPopup);
    // The page's next poll wakes the worker; the approval releases the action.
    await page.locator('[data-kind="approved"]').waitFor();
    expect(await sent(page)).toEqual([text]);

    // Stopped again after the release: later polls or retries cannot send it a second time.
    await employee.stopServiceWorker(page);
    await page.locator('[data-kind="approved"] button.ag-close').click();
    await typeInto(page, 'copilot', 'Thanks, and what is the filing deadline in general terms?');
    await page.locator('button[data-testid="submit-button"]').click();
    await page.waitForFunction(() => (window as any).__sent.length > 1);
    expect(await sent(page)).toEqual([text, 'Thanks, and what is the filing deadline in general terms?']);
    await screenshot(page, 'worker-restart-copilot');

    // The employee's log: one decision for the paused action, approved, receipt verified, sent once.
    const log = await (await employee.openExtensionPage('popup.html')).evaluate(async () => {
      const reply = await (globalThis as any).chrome.runtime.sendMessage({ type: 'log.export', payload: {} });
      return reply.value;
    });
    const entries = log.decisions.filter((d: any) => d.action_key === actionKey);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ decision: 'needs_review', review_status: 'approved', review_verified: true, verified: true });
    expect(entries[0].released_attempt).not.toBeNull();
    expect(JSON.stringify(log)).not.toContain('Smith v. Jones');
    await page.close();
  });
});
