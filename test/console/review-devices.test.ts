/**
 * "Your review devices" in real Chromium, below the review board: the reviewer's decide form
 * registers this browser's key (../../console/src/review-context.tsx), and the section lists it
 * as this browser with its label; a key registered through the API from another device shows
 * too; revoking that key after the confirmation step marks it revoked in the table and in the
 * service; revoking this browser's own key makes the next decide form register a new one; a
 * person without reviews:decide does not see the section. Only fingerprints are shown, never a
 * public key.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { checkPage, openConsole, openPage, signIn } from './harness.ts';
import type { ConsoleWorld } from './harness.ts';
import { addPerson, pause } from './review-fixtures.ts';

let world: ConsoleWorld;
let employeeKey = '';
let reviewerKey = '';
let viewerKey = '';
let actionKey = '';

interface ReviewKey {
  id: string;
  public_key: string;
  label: string;
  status: 'active' | 'revoked';
}

async function reviewKeys(): Promise<ReviewKey[]> {
  const res = await world.ctx.request('/account/me/review-keys', { key: reviewerKey });
  expect(res.status, res.text).toBe(200);
  return res.body.review_keys as ReviewKey[];
}

/** The raw X25519 public key of a fresh pair, base64url, as another device would register it. */
function otherDevicePublicKey(): string {
  const { publicKey } = generateKeyPairSync('x25519');
  return publicKey.export({ format: 'jwk' }).x!;
}

async function openDecide(page: Page) {
  const tail = actionKey.slice(-12).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const decide = page.getByRole('button', { name: new RegExp(`^Decide on .*${tail}$`) });
  await expect.poll(() => decide.count()).toBe(1);
  // Open afresh: a form left open from before is closed first, so its context step runs again.
  if ((await decide.getAttribute('aria-expanded')) === 'true') await decide.click();
  await decide.click();
  const form = page.getByRole('form', { name: /Decide on/ });
  await form.waitFor();
  // The context step has asked for this browser's device (registering it when needed).
  await expect.poll(() => form.getByText('Context not shared').isVisible()).toBe(true);
  return form;
}

function devices(page: Page) {
  return page.getByRole('region', { name: 'Your review devices' });
}

function deviceRow(page: Page, label: string) {
  return devices(page).getByRole('row').filter({ hasText: label });
}

beforeAll(async () => {
  world = await openConsole();
  const person = (email: string, capabilities: string[]) => addPerson(world, email, capabilities);
  employeeKey = await person('emma@firm.example', []);
  reviewerKey = await person('rita@firm.example', ['reviews:decide']);
  viewerKey = await person('vera@firm.example', ['records:read']);
  const policy = await world.ctx.request('/tenant/policy?policy_pack=law', { method: 'PUT', json: { review_context: 'encrypted' }, key: world.apiKey });
  expect(policy.status, policy.text).toBeLessThan(300);
  actionKey = (await pause(world, employeeKey, 'Summarise the memo')).actionKey;
});
afterAll(() => world?.close());

describe('the reviewer’s review devices in the console', () => {
  it('lists this browser’s device, registered by the decide form, with its label', async () => {
    const { page } = world;
    await signIn(world, reviewerKey);
    await openPage(world, 'reviews', 'Review board');
    await expect.poll(() => page.getByRole('heading', { name: 'Your review devices' }).isVisible()).toBe(true);
    await expect.poll(() => devices(page).textContent()).toContain('No device yet');
    await openDecide(page);
    const [key] = await reviewKeys();
    expect(key).toMatchObject({ status: 'active', label: 'Console, Chrome' });
    const row = deviceRow(page, 'Console, Chrome');
    await expect.poll(() => row.count()).toBe(1);
    await expect.poll(() => row.textContent()).toContain('this browser');
    expect(await row.textContent()).toContain('active');
    expect(await row.textContent()).toContain('never');
    // A fingerprint, never the key: the public key's text appears nowhere on the page.
    expect(await row.locator('code').textContent()).toMatch(/^[0-9a-f]{4}( [0-9a-f]{4}){3}$/);
    expect(await page.content()).not.toContain(key!.public_key);
    await checkPage(world, 'review-devices');
  });

  it('shows a key registered from another device, not as this browser', async () => {
    const { page } = world;
    const res = await world.ctx.request('/account/me/review-keys', { json: { public_key: otherDevicePublicKey(), label: 'Laptop, Firefox' }, key: reviewerKey });
    expect(res.status, res.text).toBe(201);
    // The list follows the service without a reload.
    const row = deviceRow(page, 'Laptop, Firefox');
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.textContent()).toContain('active');
    expect(await row.textContent()).not.toContain('this browser');
    expect(await deviceRow(page, 'Console, Chrome').textContent()).toContain('this browser');
  });

  it('revokes the other device after a confirmation, in the table and in the service', async () => {
    const { page } = world;
    const row = deviceRow(page, 'Laptop, Firefox');
    await row.getByRole('button', { name: /Revoke/ }).click();
    const confirm = devices(page).getByRole('group', { name: /Revoke “Laptop, Firefox”/ });
    await confirm.waitFor();
    // Cancel leaves the key as it was.
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => confirm.count()).toBe(0);
    expect((await reviewKeys()).find((k) => k.label === 'Laptop, Firefox')?.status).toBe('active');
    await row.getByRole('button', { name: /Revoke/ }).click();
    await confirm.getByRole('button', { name: 'Revoke the device' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'is revoked' }).isVisible()).toBe(true);
    await expect.poll(() => row.textContent()).toContain('revoked');
    expect(await row.getByRole('button', { name: /Revoke/ }).count()).toBe(0);
    const keys = await reviewKeys();
    expect(keys.find((k) => k.label === 'Laptop, Firefox')?.status).toBe('revoked');
    expect(keys.find((k) => k.label === 'Console, Chrome')?.status).toBe('active');
    await checkPage(world, 'review-devices-revoked');
  });

  it('revoking this browser’s device makes the next decide form register a new one', async () => {
    const { page } = world;
    const before = (await reviewKeys()).find((k) => k.status === 'active' && k.label === 'Console, Chrome')!;
    const row = devices(page).getByRole('row').filter({ hasText: 'this browser' });
    await row.getByRole('button', { name: /Revoke/ }).click();
    await devices(page).getByRole('group', { name: /\(this browser\)/ }).getByRole('button', { name: 'Revoke the device' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'This browser’s device' }).isVisible()).toBe(true);
    expect((await reviewKeys()).find((k) => k.id === before.id)?.status).toBe('revoked');
    // The stored pair is dropped with it: no row is this browser until a decide form registers one.
    await expect.poll(() => devices(page).getByText('this browser', { exact: true }).count()).toBe(0);
    await openDecide(page);
    const active = (await reviewKeys()).filter((k) => k.status === 'active');
    expect(active).toHaveLength(1);
    expect(active[0]!.id).not.toBe(before.id);
    const fresh = devices(page).getByRole('row').filter({ hasText: 'this browser' });
    await expect.poll(() => fresh.count()).toBe(1);
    expect(await fresh.textContent()).toContain('active');
  });

  it('is not shown to a person without reviews:decide', async () => {
    const { page } = world;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.getByLabel('API key').isVisible()).toBe(true);
    await signIn(world, viewerKey);
    await openPage(world, 'reviews', 'Review board');
    // The board itself has loaded (its item shows), and no devices section came with it.
    await expect.poll(() => page.getByRole('row').filter({ hasText: actionKey.slice(-12) }).count()).toBe(1);
    expect(await page.getByRole('heading', { name: 'Your review devices' }).count()).toBe(0);
    expect(await devices(page).count()).toBe(0);
  });
});
