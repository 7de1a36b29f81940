/**
 * The extension end to end in real Firefox ESR (Debian's firefox-esr, headless, over WebDriver
 * BiDi with puppeteer-core) with the Firefox package as shipped (`wxt zip -b firefox`,
 * unpacked), against a real companion on loopback: set up through the real options page; allow
 * → sent exactly once on every adapter's fixture page; blocked → never sent; needs review →
 * held until a reviewer decides, then released once or never; companion stopped → fail
 * closed. Firefox asks for nothing beyond loopback meanwhile.
 *
 * Firefox runs the background as an event page (background.scripts), not a service worker;
 * MV3 host permissions are optional in Firefox, so the test checks that the manifest's loopback
 * permission was granted at install (it is: Firefox grants an MV3 add-on's host_permissions when
 * it is installed, temporary add-ons included), which the mapped fixture pages rely on.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupCompanions, start, tempDataDir } from '../../helpers/companion-process.ts';
import type { Companion } from '../../helpers/companion-process.ts';
import { GECKO_ID, firefoxScreenshot, launchFirefoxWithExtension } from './harness/firefox.ts';
import type { FirefoxWithExtension } from './harness/firefox.ts';
import { startFixtureServer } from './harness/fixture-server.ts';
import type { FixtureServer } from './harness/fixture-server.ts';
import { extensionPackages } from './harness/packages.ts';
import { COMPOSER, GENERIC_SELECTORS, SEND_BUTTON, SITES, fixtureMappings } from './harness/sites.ts';
import type { Site } from './harness/sites.ts';
import { getJson, putPolicy, signUp } from './harness/tenant.ts';

/** The firm's profile for consumer AI tools (law pack, ABA Formal Op. 512), as in the Chromium tests. */
const LAW_CONTEXT = { matter_band: 'moderate', doctrine_anchor: 'competence', jurisdiction: 'US', tool_data_handling: 'vendor-trains-on-inputs' };
const ORDINARY = 'Summarise the main arguments for a four-day work week in three bullet points.';
const PRIVILEGED = 'Here is our privileged attorney-client memo on the Acme matter: please tighten the wording.';
/** Citing authority to an external AI tool: the law engine routes it for attorney review. */
const NEEDS_REVIEW = (n: string) => `Does Smith v. Jones still support our limitation argument? (${n})`;

let companion: Companion;
let fixtures: FixtureServer;
let firefox: FirefoxWithExtension;
let apiKey: string;

/** An element of the extension's in-page modal: it renders in an open shadow root. */
const modal = (selector: string) => `pierce/${selector}`;

async function text(page: Page, selector: string): Promise<string> {
  return page.$eval(selector, (el) => el.textContent ?? '');
}

async function attr(page: Page, selector: string, name: string): Promise<string | null> {
  return page.$eval(selector, (el, n) => el.getAttribute(n), name);
}

function sent(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { __sent: string[] }).__sent);
}

async function waitSent(page: Page, count: number): Promise<void> {
  await page.waitForFunction((n: number) => (window as unknown as { __sent: string[] }).__sent.length >= n, {}, count);
}

/** Opens a fixture page and waits until the content script has its adapter. */
async function openSite(site: Site): Promise<Page> {
  const page = await firefox.browser.newPage();
  await page.goto(`${fixtures.url}/${site}.html`);
  await page.waitForSelector(`html[data-action-gate="${site}"]`);
  return page;
}

async function typeInto(page: Page, site: Site, value: string): Promise<void> {
  await page.locator(COMPOSER[site]).click();
  await page.locator(COMPOSER[site]).fill(value);
}

function composerText(page: Page, site: Site): Promise<string> {
  return page.$eval(COMPOSER[site], (el) => (el instanceof HTMLTextAreaElement ? el.value : (el as HTMLElement).innerText).trim());
}

/** Types a prompt that needs review, sends it, waits for the pause and returns the action's key. */
async function pause(page: Page, site: Site, prompt: string): Promise<string> {
  await typeInto(page, site, prompt);
  await page.keyboard.press('Enter');
  await page.waitForSelector(modal('[data-kind="review"]'));
  return text(page, modal('[data-kind="review"] .ag-key'));
}

/** The reviewer's decision, as any reviewer client posts it (POST /v1/reviews). */
async function review(actionKey: string, decision: 'approved' | 'rejected'): Promise<void> {
  const res = await fetch(`${companion.url}/v1/reviews`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-key': apiKey },
    body: JSON.stringify({ pack: 'law', action_key: actionKey, reviewer: 'supervising.attorney@firm.example', decision }),
  });
  if (res.status >= 300) throw new Error(`POST /v1/reviews: ${res.status} ${await res.text()}`);
}

/** Fills and saves the options page as an employee does, then runs its connection test. */
async function configure(): Promise<void> {
  const page = await firefox.openExtensionPage('options.html');
  await page.locator('#companion-url').fill(companion.url);
  await page.locator('#api-key').fill(apiKey);
  await page.select('#role', 'employee');
  await page.select('#fail-mode', 'closed');
  await page.locator('#gate-pack').fill('law');
  await page.locator('#gate-action-type').fill('proposed-action');
  await page.locator('#gate-context').fill(JSON.stringify(LAW_CONTEXT));
  await page.locator('#site-mappings').fill(fixtureMappings(fixtures.url).join('\n'));
  await page.locator('#generic-composer').fill(GENERIC_SELECTORS.composer);
  await page.locator('#generic-send').fill(GENERIC_SELECTORS.send);
  await page.locator('#generic-release').fill(GENERIC_SELECTORS.release);
  await page.locator('#save').click();
  await page.waitForSelector('#save-status');
  expect(await text(page, '#save-status')).toContain('Saved.');
  await page.locator('#test-connection').click();
  await page.waitForSelector('#connection-result');
  expect(await attr(page, '#connection-result', 'data-ok'), await text(page, '#connection-result')).toBe('true');
  await page.setViewport({ width: 1000, height: 1500 });
  await firefoxScreenshot(page, 'firefox-options-employee');
  await page.close();
}

beforeAll(async () => {
  [companion, fixtures] = await Promise.all([start(tempDataDir()), startFixtureServer()]);
  apiKey = await signUp(companion.url, 'employee@firm.example');
  await putPolicy(companion.url, apiKey, 'law', { allow_action_types: ['proposed-action'] });
  firefox = await launchFirefoxWithExtension('decisions');
  await configure();
});

afterAll(async () => {
  await firefox?.close();
  await fixtures?.close();
  cleanupCompanions();
});

describe('install', () => {
  it('the Firefox package goes in over BiDi webExtension.install, and its loopback host permission is granted', async () => {
    expect(firefox.installedId).toBe(GECKO_ID);
    expect(await firefox.browser.version()).toMatch(/^firefox\/\d+\.\d+/);
    const page = await firefox.openExtensionPage('options.html');
    const seen = await page.evaluate(async () => {
      const b = (globalThis as any).browser;
      return { manifest: b.runtime.getManifest(), loopback: await b.permissions.contains({ origins: ['http://127.0.0.1/*'] }) };
    });
    const shipped = JSON.parse(fs.readFileSync(path.join(extensionPackages().firefox.dir, 'manifest.json'), 'utf8'));
    expect(seen.manifest.version).toBe(shipped.version);
    // An event page: Firefox has no background service workers for add-ons.
    expect(seen.manifest.background.scripts).toEqual([`${firefox.extensionOrigin}/background.js`]);
    expect(seen.manifest.background.service_worker ?? null).toBeNull();
    expect(seen.loopback).toBe(true);
    await page.close();
  });
});

describe('allow → the original action is released exactly once', () => {
  for (const site of SITES) {
    it(`${site}: the send goes out once, after the gate allowed it`, async () => {
      const page = await openSite(site);
      await typeInto(page, site, `${ORDINARY} (${site})`);
      // The generic internal tool is a plain form: Enter is a new line there, its button submits.
      if (site === 'generic') await page.locator(SEND_BUTTON[site]).click();
      else await page.keyboard.press('Enter');
      await waitSent(page, 1);
      // A second, different prompt afterwards: had the first gone out twice, it would show here.
      await typeInto(page, site, 'And one more short question.');
      await page.locator(SEND_BUTTON[site]).click();
      await waitSent(page, 2);
      expect(await sent(page)).toEqual([`${ORDINARY} (${site})`, 'And one more short question.']);
      await firefoxScreenshot(page, `firefox-allow-${site}`);
      await page.close();
    });
  }

  it('the popup lists each allowed decision, each seal verified in Firefox', async () => {
    const popup = await firefox.openExtensionPage('popup.html');
    await popup.waitForSelector('.ag-decision-allow');
    const badges = await popup.$$eval('.ag-decision-allow .ag-badge', (els) => els.map((e) => e.getAttribute('data-verified')));
    expect(badges.length).toBeGreaterThanOrEqual(SITES.length * 2);
    expect(new Set(badges)).toEqual(new Set(['true']));
    const sites = await popup.$$eval('.ag-decision-allow .ag-site', (els) => els.map((e) => e.textContent));
    for (const site of SITES) expect(sites.filter((s) => s === site)).toHaveLength(2);
    await firefoxScreenshot(popup, 'firefox-popup-recent-decisions');
    await popup.close();
  });
});

describe('blocked → nothing is sent', () => {
  it('privileged material for a tool that trains on its inputs is blocked, with next_step, and the text stays', async () => {
    const page = await openSite('chatgpt');
    await typeInto(page, 'chatgpt', PRIVILEGED);
    await page.keyboard.press('Enter');
    await page.waitForSelector(modal('[data-kind="blocked"]'));
    expect(await text(page, modal('[data-kind="blocked"] h2'))).toContain('Blocked');
    expect(await text(page, modal('[data-kind="blocked"] .ag-next-step'))).toMatch(/^Stop\./);
    expect(await attr(page, modal('[data-kind="blocked"] .ag-badge'), 'data-verified')).toBe('true');
    await firefoxScreenshot(page, 'firefox-blocked-chatgpt');
    await page.locator(modal('[data-kind="blocked"] button.ag-close')).click();
    await page.waitForSelector(modal('[data-kind="blocked"]'), { hidden: true });

    // Clicking send again is held and gated again, and still never sent.
    await page.locator(SEND_BUTTON.chatgpt).click();
    await page.waitForSelector(modal('[data-kind="blocked"]'));
    expect(await sent(page)).toEqual([]);
    expect(await composerText(page, 'chatgpt')).toBe(PRIVILEGED);
    await page.close();
  });
});

describe('needs review → held until a reviewer decides', () => {
  it('is paused in a modal; a reviewer approves over the API; the page then sends it once, the review receipt verified', async () => {
    const page = await openSite('claude');
    const actionKey = await pause(page, 'claude', NEEDS_REVIEW('approve'));
    expect(await text(page, modal('[data-kind="review"] h2'))).toBe('Paused until review');
    expect(await attr(page, modal('[data-kind="review"] .ag-badge'), 'data-verified')).toBe('true');
    await firefoxScreenshot(page, 'firefox-review-paused-claude');
    expect(await sent(page)).toEqual([]);

    await review(actionKey, 'approved');

    // The page polls the gate; the approval releases the held send.
    await page.waitForSelector(modal('[data-kind="approved"]'));
    expect(await attr(page, modal('[data-kind="approved"] .ag-badge'), 'data-verified')).toBe('true');
    expect(await text(page, modal('[data-kind="approved"] .ag-badge'))).toContain('Review receipt: verified');
    await waitSent(page, 1);
    expect(await sent(page)).toEqual([NEEDS_REVIEW('approve')]);
    await firefoxScreenshot(page, 'firefox-review-approved-claude');

    const record = await getJson(companion.url, apiKey, `/v1/records/${encodeURIComponent(actionKey)}`);
    expect(record.review.status).toBe('approved');
    await page.close();
  });

  it('rejected is never sent, and the text stays in the composer', async () => {
    const page = await openSite('gemini');
    const actionKey = await pause(page, 'gemini', NEEDS_REVIEW('reject'));
    await review(actionKey, 'rejected');
    await page.waitForSelector(modal('[data-kind="rejected"]'));
    expect(await text(page, modal('[data-kind="rejected"] h2'))).toContain('Rejected');
    expect(await attr(page, modal('[data-kind="rejected"] .ag-badge'), 'data-verified')).toBe('true');
    await firefoxScreenshot(page, 'firefox-review-rejected-gemini');
    expect(await sent(page)).toEqual([]);
    expect(await composerText(page, 'gemini')).toBe(NEEDS_REVIEW('reject'));
    await page.close();
  });
});

describe('companion unreachable → fail closed', () => {
  it('with the companion stopped, nothing is sent and the employee is told why', async () => {
    const page = await openSite('copilot');
    companion.child.kill('SIGTERM');
    await companion.exited;
    await typeInto(page, 'copilot', ORDINARY);
    await page.keyboard.press('Enter');
    await page.waitForSelector(modal('[data-kind="failed"]'));
    expect(await text(page, modal('[data-kind="failed"] .ag-message'))).toContain('could not reach');
    await firefoxScreenshot(page, 'firefox-fail-closed-copilot');
    expect(await sent(page)).toEqual([]);
    expect(await composerText(page, 'copilot')).toBe(ORDINARY);
    await page.close();
  });
});

it('Firefox asked for nothing beyond loopback during the whole run', () => {
  expect(firefox.outboundRequests).toEqual([]);
});
