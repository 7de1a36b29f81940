/**
 * The extension end to end in real Chromium with the real extension build, against a real companion
 * on loopback: allow → sent exactly once on every adapter's fixture page; blocked → never sent,
 * the text left in the composer; companion stopped → fail closed.
 *
 * The tenant allowlists the law pack's catch-all action type (PUT /tenant/policy), so what the
 * gate decides comes from the prompt's content through the law engine: an ordinary prompt is
 * allowed; privileged material sent to a tool that trains on its inputs is blocked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupCompanions, start, tempDataDir } from '../../helpers/companion-process.ts';
import type { Companion } from '../../helpers/companion-process.ts';
import { launchWithExtension, screenshot } from './harness/browser.ts';
import type { ExtensionBrowser } from './harness/browser.ts';
import { startFixtureServer } from './harness/fixture-server.ts';
import type { FixtureServer } from './harness/fixture-server.ts';
import { configureExtension } from './harness/options-page.ts';
import { GENERIC_SELECTORS, SEND_BUTTON, SITES, composerText, fixtureMappings, openSite, sent, typeInto } from './harness/sites.ts';
import { getJson, putPolicy, signUp } from './harness/tenant.ts';

/** The firm's profile for consumer AI tools (law pack, ABA Formal Op. 512). */
export const LAW_CONTEXT = { matter_band: 'moderate', doctrine_anchor: 'competence', jurisdiction: 'US', tool_data_handling: 'vendor-trains-on-inputs' };
export const ORDINARY = 'Summarise the main arguments for a four-day work week in three bullet points.';
export const PRIVILEGED = 'Here is our privileged attorney-client memo on the Acme matter: please tighten the wording.';

let companion: Companion;
let fixtures: FixtureServer;
let browser: ExtensionBrowser;
let apiKey: string;

beforeAll(async () => {
  [companion, fixtures] = await Promise.all([start(tempDataDir()), startFixtureServer()]);
  apiKey = await signUp(companion.url, 'employee@firm.example');
  await putPolicy(companion.url, apiKey, 'law', { allow_action_types: ['proposed-action'] });
  browser = await launchWithExtension('decisions');
  await configureExtension(browser, {
    companionUrl: companion.url,
    apiKey,
    pack: 'law',
    actionType: 'proposed-action',
    context: LAW_CONTEXT,
    mappings: fixtureMappings(fixtures.url),
    generic: GENERIC_SELECTORS,
  }, 'options-employee');
});

afterAll(async () => {
  await browser?.close();
  await fixtures?.close();
  cleanupCompanions();
});

describe('allow → the original action is released exactly once', () => {
  for (const site of SITES) {
    it(`${site}: Enter (or the form's submit) sends the prompt once, after the gate allowed it`, async () => {
      const page = await browser.context.newPage();
      await openSite(page, fixtures.url, site);
      await typeInto(page, site, `${ORDINARY} (${site})`);
      // The generic internal tool is a plain form: Enter is a new line there, its button submits.
      if (site === 'generic') await page.locator(SEND_BUTTON[site]).click();
      else await page.keyboard.press('Enter');

      await page.waitForFunction(() => (window as any).__sent.length > 0);
      // A second, different prompt afterwards: had the first gone out twice, it would show here.
      await typeInto(page, site, 'And one more short question.');
      await page.locator(SEND_BUTTON[site]).click();
      await page.waitForFunction(() => (window as any).__sent.length > 1);
      expect(await sent(page)).toEqual([`${ORDINARY} (${site})`, 'And one more short question.']);
      await screenshot(page, `allow-${site}`);
      await page.close();
    });
  }

  it('Shift+Enter is a line break, not a send; the log records allowed decisions as verified', async () => {
    const page = await browser.context.newPage();
    await openSite(page, fixtures.url, 'copilot');
    await page.locator('textarea#userInput').click();
    await page.keyboard.type('first line');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('second line');
    expect(await page.locator('textarea#userInput').inputValue()).toBe('first line\nsecond line');
    expect(await sent(page)).toEqual([]);

    const popup = await browser.openExtensionPage('popup.html');
    await popup.locator('.ag-decision-allow').first().waitFor();
    const badges = await popup.locator('.ag-decision-allow .ag-badge').evaluateAll((els) => els.map((e) => e.getAttribute('data-verified')));
    expect(badges.length).toBeGreaterThanOrEqual(SITES.length * 2);
    expect(new Set(badges)).toEqual(new Set(['true']));
    // Each site's two sends were each gated (one sealed allow each), none slipped past the gate.
    const sites = await popup.locator('.ag-decision-allow .ag-site').allTextContents();
    for (const site of SITES) expect(sites.filter((s) => s === site)).toHaveLength(2);
    await screenshot(popup, 'popup-recent-decisions');
    await popup.close();
    await page.close();
  });
});

describe('blocked → nothing is sent', () => {
  it('privileged material for a tool that trains on its inputs is blocked, with next_step, and the text stays', async () => {
    const page = await browser.context.newPage();
    await openSite(page, fixtures.url, 'chatgpt');
    await typeInto(page, 'chatgpt', PRIVILEGED);
    await page.keyboard.press('Enter');

    const dialog = page.locator('[data-kind="blocked"]');
    await dialog.waitFor();
    expect(await dialog.locator('h2').textContent()).toContain('Blocked');
    expect(await dialog.locator('.ag-next-step').textContent()).toMatch(/^Stop\./);
    expect(await dialog.locator('.ag-badge').getAttribute('data-verified')).toBe('true');
    await screenshot(page, 'blocked-chatgpt');
    await dialog.locator('button.ag-close').click();

    // Clicking send again is held and gated again (a new decision), and still never sent.
    await page.locator('button[data-testid="send-button"]').click();
    await page.locator('[data-kind="blocked"]').waitFor();
    expect(await sent(page)).toEqual([]);
    expect(await composerText(page, 'chatgpt')).toBe(PRIVILEGED);

    const records = await getJson(companion.url, apiKey, '/tenant/usage');
    expect(records.actions_used).toBeGreaterThan(0);
    await page.close();
  });
});

describe('companion unreachable → fail closed', () => {
  it('with the companion stopped, nothing is sent and the employee is told why', async () => {
    const page = await browser.context.newPage();
    await openSite(page, fixtures.url, 'claude');
    companion.child.kill('SIGTERM');
    await companion.exited;

    await typeInto(page, 'claude', ORDINARY);
    await page.keyboard.press('Enter');
    const dialog = page.locator('[data-kind="failed"]');
    await dialog.waitFor();
    expect(await dialog.locator('.ag-message').textContent()).toContain('could not reach');
    await screenshot(page, 'fail-closed-claude');
    expect(await sent(page)).toEqual([]);
    expect(await composerText(page, 'claude')).toBe(ORDINARY);

    // The popup shows the connection down and the incident.
    const popup = await browser.openExtensionPage('popup.html');
    await popup.locator('.ag-connection[data-ok="false"]').waitFor();
    await popup.locator('.ag-incidents').waitFor();
    await screenshot(popup, 'popup-companion-down');
    await popup.close();
    await page.close();
  });
});
