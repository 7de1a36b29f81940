/**
 * Review context in real Chromium: the reviewer's console (a person with reviews:decide, signed
 * in) makes and registers its device key by opening the decide form; the employee's paused
 * actions are sealed to that key with shared/hpke.ts exactly as the extension's background does
 * (extension/utils/background/review-context.ts: the gate request as posted, bound to the
 * action_key and payload_hash as associated data, RFC 9180). The reviewer's decide form opens
 * the context with the non-extractable key in IndexedDB, recomputes payload_hash and shows the
 * exact prompt; a ciphertext with one byte flipped, one sealed with another action's associated
 * data, and one carrying a gate request other than the one gated are refused loudly, with
 * Submit disabled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { openConsole, openPage, screenshot, signIn } from './harness.ts';
import type { ConsoleWorld } from './harness.ts';
import { addPerson, pause as pauseAction, shareContext } from './review-fixtures.ts';
import type { ContextAlteration, Paused } from './review-fixtures.ts';

let world: ConsoleWorld;
let employeeKey = '';
let reviewerKey = '';
const CANARY = 'CANARY-PROMPT-c0ns0le-5e1f';

const pause = (prompt: string) => pauseAction(world, employeeKey, prompt);

/** The extension's sharing step, optionally altered as an attacker might. */
async function share(paused: Paused, alter: ContextAlteration = {}): Promise<void> {
  const { recipients, ciphertexts } = await shareContext(world, employeeKey, paused, alter);
  expect(recipients).toMatchObject({ review_context: 'encrypted', payload_hash: paused.payloadHash });
  expect(recipients.recipients).toHaveLength(1);
  expect(JSON.stringify(ciphertexts)).not.toContain(CANARY);
}

async function openDecide(page: Page, actionKey: string) {
  const row = page.getByRole('row').filter({ hasText: actionKey.slice(-12) });
  await expect.poll(() => row.count()).toBe(1);
  await row.getByRole('button', { name: /Decide/ }).click();
  const form = page.getByRole('form', { name: /Decide on/ });
  await form.waitFor();
  return form;
}

let warmUp: Paused;

beforeAll(async () => {
  world = await openConsole();
  const person = (email: string, capabilities: string[]) => addPerson(world, email, capabilities);
  employeeKey = await person('emma@firm.example', []);
  reviewerKey = await person('rita@firm.example', ['reviews:decide']);
  const policy = await world.ctx.request('/tenant/policy?policy_pack=law', { method: 'PUT', json: { review_context: 'encrypted' }, key: world.apiKey });
  expect(policy.status, policy.text).toBeLessThan(300);
  // Paused before the reviewer has a device: nobody to seal to yet.
  warmUp = await pause('Nothing secret here');
});
afterAll(() => world?.close());

describe('the reviewer reads the encrypted review context in Chromium', () => {
  it('registers this browser’s device key when the decide form opens', async () => {
    const { page } = world;
    await signIn(world, reviewerKey);
    await openPage(world, 'reviews', 'Review board');
    const form = await openDecide(page, warmUp.actionKey);
    await expect.poll(() => form.getByText('Context not shared').isVisible()).toBe(true);
    const keys = await world.ctx.request('/account/me/review-keys', { key: reviewerKey });
    expect(keys.body.review_keys).toEqual([expect.objectContaining({ status: 'active', label: 'Console, Chrome' })]);
    // The private key stays a non-extractable CryptoKey in IndexedDB.
    const extractable = await page.evaluate(
      () =>
        new Promise<boolean>((resolve, reject) => {
          const req = indexedDB.open('ag-console-review-keys');
          req.onerror = () => reject(req.error);
          req.onsuccess = () => {
            const get = req.result.transaction('device').objectStore('device').get('current');
            get.onerror = () => reject(get.error);
            get.onsuccess = () => resolve((get.result as { pair: CryptoKeyPair }).pair.privateKey.extractable);
          };
        }),
    );
    expect(extractable).toBe(false);
  });

  it('shows the exact prompt, exactly what was gated, and lets the reviewer decide', async () => {
    const { page } = world;
    const paused = await pause(`Summarise the memo ${CANARY}`);
    await share(paused);
    // The board follows the service: the new item appears, its context available.
    const row = page.getByRole('row').filter({ hasText: paused.actionKey.slice(-12) });
    await expect.poll(() => row.count()).toBe(1);
    await expect.poll(() => row.textContent()).toContain('context available');
    const form = await openDecide(page, paused.actionKey);
    await expect.poll(() => form.getByText('This is exactly what was gated').isVisible()).toBe(true);
    expect(await form.locator('.review-context pre').first().textContent()).toBe(`Summarise the memo ${CANARY}`);
    expect(await form.getByRole('button', { name: /Submit: approve/ }).isDisabled()).toBe(false);
    await screenshot(page, 'review-context-opened');
    // The same device reopens it: the stored key is reused, not registered again.
    const keys = await world.ctx.request('/account/me/review-keys', { key: reviewerKey });
    expect(keys.body.review_keys).toHaveLength(1);
    await form.getByLabel('Approve').check();
    await form.getByRole('button', { name: /Submit: approve/ }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Done: approved' }).isVisible()).toBe(true);
  });

  const refusals: [string, (p: Paused, other: Paused) => Parameters<typeof share>[1], RegExp][] = [
    ['a ciphertext with one byte flipped', () => ({ flipByte: true }), /Do not decide on this context/],
    ['a ciphertext sealed with another action’s associated data', (_p, other) => ({ binding: { action_key: other.actionKey, payload_hash: other.payloadHash } }), /Do not decide on this context/],
    ['a context that is not the gate request that was gated', (p) => ({ body: { ...p.body, redacted_text: 'Something else entirely' } }), /Mismatch: this is not what was gated/],
  ];
  for (const [name, alter, loud] of refusals) {
    it(`refuses ${name} loudly and keeps Submit disabled`, async () => {
      const { page } = world;
      const paused = await pause(`Summarise the memo ${CANARY}`);
      const other = await pause('Another action');
      await share(paused, alter(paused, other));
      const form = await openDecide(page, paused.actionKey);
      await expect.poll(() => form.getByText(loud).isVisible()).toBe(true);
      await expect.poll(() => form.getByRole('button', { name: /Submit/ }).isDisabled()).toBe(true);
      expect(await form.getByText('Not sent: the context on this device is not what was gated.').isVisible()).toBe(true);
      expect(await form.textContent()).not.toContain('exactly what was gated:');
      await screenshot(page, `review-context-refused-${refusals.findIndex((r) => r[0] === name)}`);
    });
  }
});
