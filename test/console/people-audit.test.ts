/**
 * The console's People and keys page and its Audit page in real Chromium against the real
 * companion: a person added, given a capability, deactivated (their key refused by the API at
 * once) and reactivated; the last owner's refusal shown as the API words it; a key created with
 * a label and a capability subset whose secret is shown once, and which the API refuses once it
 * is revoked from the page; a rotation whose old key keeps working for its overlap; and the
 * admin receipts of all of it on the Audit page, by name, each verified in the browser.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPage, openConsole, openPage, signIn } from './harness.ts';
import type { ConsoleWorld } from './harness.ts';

let world: ConsoleWorld;
beforeAll(async () => {
  world = await openConsole();
  await signIn(world);
});
afterAll(() => world?.close());

const asKey = (path: string, key: string, init: { method?: string; json?: unknown } = {}) => world.ctx.request(path, { ...init, key });

async function shownSecret(): Promise<string> {
  const secret = world.page.locator('code.secret');
  await expect.poll(() => secret.count()).toBe(1);
  return (await secret.textContent())!.trim();
}

describe('People and keys', () => {
  let beaKey = '';
  let beaId = '';

  it('adds a person, shows their key once, and the key works', async () => {
    const { page } = world;
    await openPage(world, 'people', 'People and keys');
    const form = page.getByRole('form', { name: 'Add a person' });
    await form.getByLabel('Email').fill('bea@firm.example');
    await form.getByLabel('Display name').fill('Bea Reviewer');
    await form.getByRole('checkbox', { name: /reviews:decide/ }).check();
    // The defaults every person holds are shown, checked and fixed.
    expect(await form.getByRole('checkbox', { name: /gate:submit/ }).isDisabled()).toBe(true);
    await form.getByRole('button', { name: 'Add the person' }).click();
    beaKey = await shownSecret();
    expect(beaKey).toMatch(/^svc_test_/);
    const row = page.getByRole('row').filter({ hasText: 'bea@firm.example' });
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.textContent()).toContain('Bea Reviewer');
    expect(await row.textContent()).toContain('reviews:decide');
    await checkPage(world, 'people');

    const people = await asKey('/account/people', world.apiKey);
    const bea = people.body.people.find((p: { email: string }) => p.email === 'bea@firm.example');
    beaId = bea.id;
    expect(bea.capabilities).toContain('reviews:decide');
    expect((await asKey('/active-manifest', beaKey)).status).toBe(200);

    // Shown once: hidden on request, and not on the page after a reload.
    await page.getByRole('button', { name: 'I have stored it, hide it' }).click();
    await expect.poll(() => page.locator('code.secret').count()).toBe(0);
    await page.reload();
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'bea@firm.example' }).count()).toBe(1);
    expect(await page.content()).not.toContain(beaKey);
  });

  it('changes a person’s capabilities', async () => {
    const { page } = world;
    await page.getByRole('button', { name: 'Change Bea Reviewer' }).click();
    const form = page.getByRole('form', { name: 'Change Bea Reviewer' });
    await form.getByRole('checkbox', { name: /policy:manage/ }).check();
    await form.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'changed' }).isVisible()).toBe(true);
    const person = (await asKey('/account/people', world.apiKey)).body.people.find((p: { id: string }) => p.id === beaId);
    expect(person.capabilities).toEqual(expect.arrayContaining(['reviews:decide', 'policy:manage']));
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'bea@firm.example' }).textContent()).toContain('policy:manage');
  });

  it('deactivates a person after a confirmation: their key is refused at once; reactivated, it works again', async () => {
    const { page } = world;
    await page.getByRole('button', { name: 'Deactivate Bea Reviewer' }).click();
    await page.getByRole('group', { name: /Deactivate Bea Reviewer\?/ }).getByRole('button', { name: 'Deactivate', exact: true }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'deactivated' }).isVisible()).toBe(true);
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'bea@firm.example' }).textContent()).toContain('deactivated');
    expect((await asKey('/active-manifest', beaKey)).status).toBe(401);

    await page.getByRole('button', { name: 'Reactivate Bea Reviewer' }).click();
    await page.getByRole('group', { name: /Reactivate Bea Reviewer\?/ }).getByRole('button', { name: 'Reactivate', exact: true }).click();
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'bea@firm.example' }).textContent()).toContain('active');
    expect((await asKey('/active-manifest', beaKey)).status).toBe(200);
  });

  it('shows the API’s refusal when the last owner would be deactivated', async () => {
    const { page } = world;
    const owner = page.getByRole('row').filter({ hasText: '(you)' });
    await owner.getByRole('button', { name: /^Deactivate/ }).click();
    await page.getByRole('group', { name: /^Deactivate Owner/ }).getByRole('button', { name: 'Deactivate', exact: true }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'last active owner' });
    await expect.poll(() => alert.isVisible()).toBe(true);
    expect(await alert.textContent()).toContain('last_owner');
    expect((await asKey('/active-manifest', world.apiKey)).status).toBe(200);
  });

  it('creates a labelled, narrowed key shown once, then revokes it: the API refuses it', async () => {
    const { page } = world;
    const form = page.getByRole('form', { name: 'Create a key' });
    await form.getByLabel('Label').fill('Board reader');
    await form.getByRole('checkbox', { name: 'Only some capabilities (least privilege)' }).check();
    await form.getByRole('checkbox', { name: /records:read/ }).check();
    await form.getByRole('button', { name: 'Create the key' }).click();
    const key = await shownSecret();
    expect((await asKey('/active-manifest', key)).status).toBe(200);
    // The subset holds: this key cannot manage people although its person can.
    expect((await asKey('/account/people', key)).status).toBe(403);
    const row = page.getByRole('row').filter({ hasText: 'Board reader' });
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.textContent()).toContain('records:read');
    expect(await row.textContent()).toContain('never');
    await page.getByRole('button', { name: 'I have stored it, hide it' }).click();

    await row.getByRole('button', { name: /^Revoke/ }).click();
    await page.getByRole('group', { name: /^Revoke Board reader/ }).getByRole('button', { name: 'Revoke the key' }).click();
    await expect.poll(() => row.textContent()).toContain('revoked');
    expect((await asKey('/active-manifest', key)).status).toBe(401);
    expect(await page.content()).not.toContain(key);
    await checkPage(world, 'people-keys');
  });

  it('rotates a key: the new one works, and the old one keeps working for the overlap', async () => {
    const { page } = world;
    const form = page.getByRole('form', { name: 'Create a key' });
    await form.getByLabel('Label').fill('Nightly export');
    await form.getByRole('button', { name: 'Create the key' }).click();
    const old = await shownSecret();
    await page.getByRole('button', { name: 'I have stored it, hide it' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Nightly export' });
    await row.getByRole('button', { name: /^Rotate/ }).click();
    const rotate = page.getByRole('form', { name: /^Rotate Nightly export/ });
    await rotate.getByLabel('The old key keeps working for').selectOption('3600');
    await rotate.getByRole('button', { name: 'Rotate the key' }).click();
    const fresh = await shownSecret();
    expect(fresh).not.toBe(old);
    expect(await page.locator('.notice', { has: page.locator('code.secret') }).textContent()).toContain('keeps working for 1 hour');
    expect((await asKey('/active-manifest', fresh)).status).toBe(200);
    expect((await asKey('/active-manifest', old)).status).toBe(200);
    world.ctx.clock.advance(3601_000);
    expect((await asKey('/active-manifest', old)).status).toBe(401);
    expect((await asKey('/active-manifest', fresh)).status).toBe(200);
    await page.getByRole('button', { name: 'I have stored it, hide it' }).click();
  });
});

describe('Audit', () => {
  it('lists every admin receipt by name, newest first, each verified in the browser', async () => {
    const { page } = world;
    await openPage(world, 'audit', 'Audit');
    const audit = (await asKey('/account/audit', world.apiKey)).body.receipts as { action: string }[];
    const rows = page.locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(audit.length);
    expect(audit.map((r) => r.action)).toEqual(
      expect.arrayContaining(['person.added', 'person.changed', 'person.deactivated', 'person.reactivated', 'key.created', 'key.revoked', 'key.rotated']),
    );
    expect(await rows.first().textContent()).toContain('Rotated a key');
    expect(await rows.last().textContent()).toContain('Added a person');
    expect(await rows.last().textContent()).toContain('Bea Reviewer');
    await expect.poll(() => page.locator('tbody .badge', { hasText: 'verified' }).count()).toBe(audit.length);
    // Names, never raw principal or key ids, in what the page shows.
    const text = (await page.locator('main').innerText()) ?? '';
    expect(text).not.toMatch(/\b(per|key|sva)_[0-9A-Z]{26}\b/);
    await checkPage(world, 'audit');
  });
});
