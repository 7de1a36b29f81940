/**
 * Review context end to end, two browser profiles: the employee's Chromium with the packaged
 * extension pauses a prompt under a policy with `review_context: "encrypted"`, and its
 * background seals the gate request it sent to the reviewer's device key (HPKE, RFC 9180); the
 * reviewer's Chromium, signed in to the console the companion serves, made and registered that
 * key by opening a decide form, and now opens the context and shows the employee's exact
 * prompt, its payload_hash recomputed to the sealed one. The companion is the built service
 * (dist/, as `npm start` runs it) on loopback; it only ever holds ciphertext.
 */
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupCompanions, start, tempDataDir } from '../../helpers/companion-process.ts';
import type { Companion } from '../../helpers/companion-process.ts';
import { CHROMIUM, chromiumArgs, launchWithExtension, screenshot } from './harness/browser.ts';
import type { ExtensionBrowser } from './harness/browser.ts';
import { startFixtureServer } from './harness/fixture-server.ts';
import type { FixtureServer } from './harness/fixture-server.ts';
import { configureExtension } from './harness/options-page.ts';
import { GENERIC_SELECTORS, fixtureMappings, openSite, sent, typeInto } from './harness/sites.ts';
import { signUp } from './harness/tenant.ts';

const LAW_CONTEXT = { matter_band: 'moderate', doctrine_anchor: 'competence', jurisdiction: 'US', tool_data_handling: 'vendor-trains-on-inputs' };
const CANARY = 'CANARY-e2e-9d41';
/** Citing authority to an external AI tool: the law engine routes it for attorney review. */
const PROMPT = `Does Smith v. Jones still support our limitation argument? ${CANARY}`;

let companion: Companion;
let fixtures: FixtureServer;
let employee: ExtensionBrowser;
let reviewerBrowser: Browser;
let reviewer: Page;
let ownerKey: string;
let employeeKey: string;
let reviewerKey: string;

async function api(path: string, key: string, method = 'GET', json?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${companion.url}${path}`, {
    method,
    headers: { 'x-service-key': key, ...(json !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

async function person(email: string, capabilities: string[]): Promise<string> {
  const res = await api('/account/people', ownerKey, 'POST', { email, display_name: email.split('@')[0], capabilities });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.api_key as string;
}

async function openDecide(actionKey: string) {
  const row = reviewer.getByRole('row').filter({ hasText: actionKey.slice(-12) });
  await expect.poll(() => row.count(), { timeout: 20_000 }).toBe(1);
  await row.getByRole('button', { name: /Decide/ }).click();
  const form = reviewer.getByRole('form', { name: /Decide on/ });
  await form.waitFor();
  return { row, form };
}

beforeAll(async () => {
  [companion, fixtures] = await Promise.all([start(tempDataDir()), startFixtureServer()]);
  ownerKey = await signUp(companion.url, 'team@firm.example');
  employeeKey = await person('emma@firm.example', []);
  reviewerKey = await person('rita@firm.example', ['reviews:decide']);
  const policy = await api('/tenant/policy?policy_pack=law', ownerKey, 'PUT', { policy_pack: 'law', allow_action_types: ['proposed-action'], review_context: 'encrypted' });
  expect(policy.status, JSON.stringify(policy.body)).toBeLessThan(300);
  [employee, reviewerBrowser] = await Promise.all([
    launchWithExtension('employee'),
    chromium.launch({ executablePath: CHROMIUM, headless: true, args: chromiumArgs(null) }),
  ]);
  await configureExtension(employee, {
    companionUrl: companion.url,
    apiKey: employeeKey,
    pack: 'law',
    actionType: 'proposed-action',
    context: LAW_CONTEXT,
    mappings: fixtureMappings(fixtures.url),
    generic: GENERIC_SELECTORS,
  });
  reviewer = await (await reviewerBrowser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
});

afterAll(async () => {
  await Promise.all([employee?.close(), reviewerBrowser?.close()]);
  await fixtures?.close();
  cleanupCompanions();
});

/** The employee's page: types the prompt, sends it, and returns the paused action's key. */
async function pause(page: Page, text: string): Promise<string> {
  await openSite(page, fixtures.url, 'gemini');
  await typeInto(page, 'gemini', text);
  await page.keyboard.press('Enter');
  const modal = page.locator('[data-kind="review"]');
  await modal.waitFor();
  return (await modal.locator('.ag-key').textContent())!;
}

describe('review context between the employee’s extension and the reviewer’s console', () => {
  it('the reviewer registers a device key, and sees the employee’s exact prompt, exactly what was gated', async () => {
    const page = await employee.context.newPage();
    // A first paused action, before the reviewer has a device: opening its decide form makes
    // and registers this browser's key, and its context was sealed to nobody.
    const first = await pause(page, `Does Smith v. Jones still support our limitation argument? first`);
    await reviewer.goto(`${companion.url}/console`);
    await reviewer.getByLabel('API key').fill(reviewerKey);
    await reviewer.getByRole('button', { name: 'Sign in' }).click();
    await reviewer.getByRole('link', { name: 'Review board', exact: true }).click();
    const warm = await openDecide(first);
    await expect.poll(() => warm.form.getByText('Context not shared').isVisible()).toBe(true);
    const keys = await api('/account/me/review-keys', reviewerKey);
    expect(keys.body.review_keys).toEqual([expect.objectContaining({ status: 'active' })]);

    // The employee's prompt, paused now, is sealed to that key by the extension's background.
    const actionKey = await pause(page, PROMPT);
    expect(actionKey).not.toBe(first);
    // Sharing runs in the background after the page is told it is paused: wait until it landed.
    const keyId = keys.body.review_keys[0].id as string;
    await expect.poll(async () => (await api(`/v1/reviews/${actionKey}/context?key_id=${keyId}`, reviewerKey)).status, { timeout: 20_000 }).toBe(200);
    const { form } = await openDecide(actionKey);
    await expect.poll(() => form.getByText('This is exactly what was gated').isVisible(), { timeout: 20_000 }).toBe(true);
    const shown = await form.locator('.review-context pre').first().textContent();
    expect(shown).toBe(PROMPT);
    expect(await form.getByRole('button', { name: /Submit: approve/ }).isDisabled()).toBe(false);
    await screenshot(reviewer, 'review-context-console');

    // The service holds ciphertext only: what it stored for the reviewer never names the canary.
    const sealed = await api(`/v1/reviews/${actionKey}/context?key_id=${keyId}`, reviewerKey);
    expect(sealed.status).toBe(200);
    expect(JSON.stringify(sealed.body)).not.toContain(CANARY);

    // The reviewer approves in the console; the employee's page releases the prompt once.
    await form.getByLabel('Approve').check();
    await form.getByRole('button', { name: /Submit: approve/ }).click();
    await expect.poll(() => reviewer.getByRole('status').filter({ hasText: 'Done: approved' }).isVisible()).toBe(true);
    await expect.poll(() => sent(page), { timeout: 20_000 }).toEqual([PROMPT]);
  });
});
