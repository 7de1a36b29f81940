/**
 * Composer pages built like today's AI sites, in real Chromium with the real extension build
 * against a real companion on loopback: a hidden fallback textarea before the rich editor, a
 * composer in a same-origin iframe, a web component that sends on pointerdown, and a React-style
 * composer re-created while its action waits for review. Each send is gated and goes out
 * exactly once; a release the page does not take is reported as not sent, never as sent.
 *
 * The tenant starts without a policy, so every prompt needs review (the law pack's default for a
 * fresh sandbox), and the dialog says so; later tests allowlist the action type.
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
import { GENERIC_SELECTORS, WILD_PAGES, fixtureMappings, sent } from './harness/sites.ts';
import type { WildPage } from './harness/sites.ts';
import { putPolicy, signUp } from './harness/tenant.ts';

const LAW_CONTEXT = { matter_band: 'moderate', doctrine_anchor: 'competence', jurisdiction: 'US', tool_data_handling: 'vendor-no-training' };
const ORDINARY = 'Summarise the main arguments for a four-day work week in three bullet points.';

let companion: Companion;
let fixtures: FixtureServer;
let browser: ExtensionBrowser;
let apiKey: string;

beforeAll(async () => {
  [companion, fixtures] = await Promise.all([start(tempDataDir()), startFixtureServer()]);
  apiKey = await signUp(companion.url, 'wild@firm.example');
  browser = await launchWithExtension('wild');
  await configureExtension(browser, {
    companionUrl: companion.url,
    apiKey,
    pack: 'law',
    actionType: 'proposed-action',
    context: LAW_CONTEXT,
    mappings: fixtureMappings(fixtures.url),
    generic: GENERIC_SELECTORS,
  });
});

afterAll(async () => {
  await browser?.close();
  await fixtures?.close();
  cleanupCompanions();
});

async function open(page: Page, name: WildPage, query = ''): Promise<void> {
  await page.goto(`${fixtures.url}/${name}.html${query}`);
  await page.locator(`html[data-action-gate="${WILD_PAGES[name]}"]`).waitFor({ state: 'attached' });
}

/** POST /v1/reviews as the tenant's reviewer would (the reviewer popup is tested in review-flow). */
async function approve(actionKey: string): Promise<void> {
  const res = await fetch(`${companion.url}/v1/reviews`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-key': apiKey },
    body: JSON.stringify({ pack: 'law', action_key: actionKey, reviewer: 'supervising.attorney@firm.example', decision: 'approved' }),
  });
  if (res.status !== 201) throw new Error(`POST /v1/reviews: ${res.status} ${await res.text()}`);
}

async function pausedKey(page: Page): Promise<string> {
  const modal = page.locator('[data-kind="review"]');
  await modal.waitFor();
  return (await modal.locator('.ag-key').textContent())!;
}

describe('a fresh sandbox: every prompt needs review', () => {
  it('the review dialog says why: the action type is not allowlisted yet, with the sealed rule id', async () => {
    const page = await browser.context.newPage();
    await open(page, 'chatgpt-fallback');
    await page.locator('#prompt-textarea').click();
    await page.keyboard.type(ORDINARY);
    await page.locator('[data-testid="send-button"]').click();
    await pausedKey(page);
    const reason = page.locator('[data-kind="review"] .ag-reasons li');
    expect(await reason.getAttribute('data-rule')).toBe('law.default.proposed-action');
    expect(await reason.textContent()).toMatch(/needs review until your organisation allowlists this action type/);
    expect(await sent(page)).toEqual([]);
    await screenshot(page, 'wild-review-reasons');
    await page.close();
  });

  it('a composer re-created while paused: the approval releases through the live composer and says sent only once it was', async () => {
    const page = await browser.context.newPage();
    await open(page, 'react-recreate');
    await page.locator('textarea#userInput').fill(`${ORDINARY} (re-created)`);
    await page.locator('[data-testid="submit-button"]').click();
    const key = await pausedKey(page);
    await page.evaluate(() => (window as any).rerender());
    expect(await page.evaluate(() => (window as any).__renders)).toBe(2);
    await approve(key);
    await page.locator('[data-kind="approved"]').waitFor();
    expect(await sent(page)).toEqual([`${ORDINARY} (re-created)`]);
    expect(await page.locator('[data-kind="approved"] .ag-evidence').textContent()).toMatch(/left the composer/);
    await page.close();
  });

  it('a release the page cannot take is reported as not sent, and the approval is not claimed as sent', async () => {
    const page = await browser.context.newPage();
    await open(page, 'react-recreate', '?inert');
    await page.locator('textarea#userInput').fill(`${ORDINARY} (inert)`);
    await page.locator('[data-testid="submit-button"]').click();
    const key = await pausedKey(page);
    await page.evaluate(() => (window as any).rerender()); // the new send button lost its handler
    await approve(key);
    const notSent = page.locator('[data-kind="not-sent"]');
    await notSent.waitFor();
    expect(await notSent.locator('.ag-message').textContent()).toMatch(/did not take the message/);
    expect(await sent(page)).toEqual([]);
    expect(await page.locator('[data-kind="approved"]').count()).toBe(0);
    await screenshot(page, 'wild-not-sent');
    // One more try with the same approval; the page still does not take it: not sent, no further retry.
    await notSent.locator('button.ag-retry').click();
    await page.locator('[data-kind="not-sent"]:not(:has(button.ag-retry))').waitFor();
    expect(await sent(page)).toEqual([]);
    await page.close();
  });
});

describe('allowlisted: sent exactly once from every messy composer', () => {
  beforeAll(() => putPolicy(companion.url, apiKey, 'law', { allow_action_types: ['proposed-action'] }));

  it('hidden fallback textarea first in the document: a click on send is gated and sends the editor text', async () => {
    const page = await browser.context.newPage();
    await open(page, 'chatgpt-fallback');
    await page.locator('#prompt-textarea').click();
    await page.keyboard.type(`${ORDINARY} (fallback)`);
    await page.locator('[data-testid="send-button"]').click();
    await page.waitForFunction(() => (window as any).__sent.length > 0);
    expect(await sent(page)).toEqual([`${ORDINARY} (fallback)`]);
    await page.close();
  });

  it('a composer in a same-origin iframe: Enter and the send button are both gated, each sent once', async () => {
    const page = await browser.context.newPage();
    await open(page, 'iframe-composer');
    const frame = page.frameLocator('#composer-frame');
    await frame.locator('.ProseMirror').click();
    await page.keyboard.type('First from the frame.');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => (window as any).__sent.length > 0);
    await frame.locator('.ProseMirror').click();
    await page.keyboard.type('Second from the frame.');
    await frame.locator('button[aria-label="Send message"]').click();
    await page.waitForFunction(() => (window as any).__sent.length > 1);
    expect(await sent(page)).toEqual(['First from the frame.', 'Second from the frame.']);
    // Gated, not merely sent: the frame's sends are in the decision log as allowed and verified.
    const popup = await browser.openExtensionPage('popup.html');
    await popup.locator('.ag-decisions li').first().waitFor();
    expect(await popup.locator('.ag-decision-allow', { hasText: 'claude' }).locator('.ag-sent[data-evidence="composer-cleared"]').count()).toBe(2);
    await popup.close();
    await page.close();
  });

  it('a web component that sends on pointerdown, in an open shadow root: held until allowed, sent once', async () => {
    const page = await browser.context.newPage();
    await open(page, 'pointerdown-send');
    await page.locator('chat-app .ql-editor').click();
    await page.keyboard.type(`${ORDINARY} (pointerdown)`);
    await page.locator('chat-app button.send-button').click();
    await page.waitForFunction(() => (window as any).__sent.length > 0);
    // The press's own click and pointerup must not send it a second time.
    await page.locator('chat-app button.send-button').click();
    expect(await sent(page)).toEqual([`${ORDINARY} (pointerdown)`]);
    await page.close();
  });
});
