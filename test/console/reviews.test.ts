/**
 * The console in real Chromium against the real companion: sign in with an API key, the
 * overview, and the review board — approving a paused action shows "done" only once its sealed
 * receipt verified in the browser. Screenshots go to test-output/console/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateBody } from '../companion/pack-fixtures.ts';
import { checkPage, openConsole, openPage, signIn } from './harness.ts';
import type { ConsoleWorld } from './harness.ts';

let world: ConsoleWorld;
beforeAll(async () => {
  world = await openConsole();
});
afterAll(() => world?.close());

async function gate(pack: 'law' | 'medicine', overrides: Record<string, unknown> = {}) {
  const res = await world.ctx.request('/v1/gate', { json: gateBody(pack, overrides), key: world.apiKey });
  expect(res.status).toBe(201);
  return res.body as { action_key: string; decision: string };
}

describe('the tenant console', () => {
  it('serves the page with a strict Content-Security-Policy and revalidates it', async () => {
    const res = await fetch(`${world.url}/console`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const html = await res.text();
    expect(html).not.toMatch(/<script>(?!<\/script>)/);
    const again = await fetch(`${world.url}/console`, { headers: { 'if-none-match': res.headers.get('etag')! } });
    expect(again.status).toBe(304);
    const script = /src="\/console\/([^"]+\.js)"/.exec(html)![1]!;
    const asset = await fetch(`${world.url}/console/${script}`);
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await fetch(`${world.url}/console/..%2Fpackage.json`)).status).toBe(404);
    expect((await fetch(`${world.url}/console/missing-file.js`)).status).toBe(404);
  });

  it('refuses a wrong key at the field, then signs in and shows the overview', async () => {
    const { page } = world;
    await page.goto(`${world.url}/console`);
    await page.getByLabel('API key').fill('svc_test_0000000000000000000000000000000000000000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByText('This key is not valid').isVisible()).toBe(true);
    expect(await page.getByLabel('API key').getAttribute('aria-invalid')).toBe('true');
    await checkPage(world, 'sign-in');

    await gate('law');
    await gate('medicine', { action_type: 'phi-export' });
    await signIn(world);
    await expect.poll(() => page.getByText('Sandbox allowance').isVisible()).toBe(true);
    await expect.poll(() => page.getByRole('img', { name: /Gate decisions per day: 2 decisions/ }).isVisible()).toBe(true);
    await expect.poll(() => page.locator('.stats').textContent()).toContain('Pending2');
    await checkPage(world, 'overview');
  });

  it('stays signed in across a reload', async () => {
    await world.page.reload();
    await expect.poll(() => world.page.getByRole('navigation', { name: 'Console pages' }).isVisible()).toBe(true);
  });

  it('approves a paused action and marks it done once the receipt verified in the browser', async () => {
    const paused = await gate('law');
    const { page } = world;
    await openPage(world, 'reviews', 'Review board');
    const row = page.getByRole('row').filter({ hasText: paused.action_key.slice(-12) });
    await expect.poll(() => row.count()).toBe(1);
    await checkPage(world, 'review-board');

    await row.getByRole('button', { name: /Decide/ }).click();
    const form = page.getByRole('form', { name: /Decide on/ });
    await form.getByLabel('Approve').check();
    await form.getByLabel('Reason').fill('Checked the citations myself');
    await checkPage(world, 'review-decide');
    await form.getByRole('button', { name: /Submit: approve/ }).click();

    const done = page.getByRole('status').filter({ hasText: 'Done: approved' });
    await expect.poll(() => done.isVisible()).toBe(true);
    expect(await done.textContent()).toContain('verified in this browser');
    // The service agrees: the action is approved, and the receipt names the signed-in person.
    const record = await world.ctx.request(`/v1/records/${paused.action_key}`, { key: world.apiKey });
    expect(record.body.review).toMatchObject({ status: 'approved' });
    await expect.poll(() => row.count()).toBe(0);
  });

  it('shows a refusal from the service at the field it names', async () => {
    const paused = await gate('law');
    const { page } = world;
    await page.getByRole('button', { name: 'Refresh' }).click();
    const row = page.getByRole('row').filter({ hasText: paused.action_key.slice(-12) });
    await expect.poll(() => row.count()).toBe(1);
    await row.getByRole('button', { name: /Decide/ }).click();
    const form = page.getByRole('form', { name: /Decide on/ });
    // Two of the five mirror grades: the service wants all five or none, and says so per field.
    await form.getByLabel('citation support').selectOption('PASS');
    await form.getByLabel('privilege boundary').selectOption('PASS');
    await form.getByRole('button', { name: /Submit/ }).click();
    await expect.poll(() => form.locator('.field-error').count()).toBeGreaterThanOrEqual(3);
    expect(await form.getByLabel('filing readiness').getAttribute('aria-invalid')).toBe('true');
  });

  it('signs out, and the session is refused afterwards', async () => {
    const { page } = world;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.getByLabel('API key').isVisible()).toBe(true);
    const cookies = await world.context.cookies();
    expect(cookies.find((c) => c.name === 'svc_session')).toBeUndefined();
  });

  it('works from the keyboard alone: sign in, skip to content, move between pages', async () => {
    const { page } = world;
    await page.goto(`${world.url}/console`);
    await page.getByLabel('API key').waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe(await page.getByLabel('API key').getAttribute('id'));
    await page.keyboard.type(world.apiKey);
    await page.keyboard.press('Enter');
    await page.getByRole('navigation', { name: 'Console pages' }).waitFor();

    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.keyboard.press('Tab'); // sign out
    await page.keyboard.press('Tab'); // Overview
    await page.keyboard.press('Tab'); // Review board
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Review board');
    // The focus ring is drawn (WCAG 2.4.7).
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).toBe('solid');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate(() => document.activeElement?.tagName + ' ' + document.activeElement?.textContent)).toBe('H1 Review board');
  });
});
