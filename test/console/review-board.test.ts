/**
 * The review board in real Chromium against the real companion, with more than a page of
 * paused actions (seeded through the gate API): the service's paging and filters (pack, action
 * type, route, age), the board following the service without a refresh as items arrive and are
 * decided elsewhere, who has approved so far shown by name, and Decide disabled, with the
 * reason, for the person who already approved under a four-eyes rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../companion/core/auth.ts';
import { gateBody } from '../companion/pack-fixtures.ts';
import { checkPage, openConsole, openPage, signIn } from './harness.ts';
import type { ConsoleWorld } from './harness.ts';

let world: ConsoleWorld;
// A production tenant (a sandbox's allowance is 100 actions): the signed-up sandbox made
// production in the store, as the upgrade does, with a svc_live_ key for its owner. Carl and
// Bea are people of it, each with their own key.
let adminKey = '';
let carlKey = '';
let carlId = '';
let beaKey = '';
let beaId = '';
const law: string[] = [];
const medicine: string[] = [];

async function gate(pack: 'law' | 'medicine', overrides: Record<string, unknown> = {}) {
  const res = await world.ctx.request('/v1/gate', { json: gateBody(pack, overrides), key: adminKey });
  expect(res.status).toBe(201);
  expect(res.body.decision).toBe('needs_review');
  return res.body.action_key as string;
}

/** The upgrade's effect on the store (account-upgrade tests cover the upgrade itself): kind production, a live key for the owner. */
function productionOwnerKey(): string {
  const { db } = world.ctx.store;
  const owner = db.prepare("SELECT id, tenant_id FROM people WHERE role = 'owner'").get() as { id: string; tenant_id: string };
  const live = generateApiKey('production');
  db.transaction(() => {
    db.prepare("UPDATE tenants SET kind = 'production' WHERE id = ?").run(owner.tenant_id);
    db.prepare('INSERT INTO api_keys (id, tenant_id, key_sha256, prefix, last_four, created_at, person_id) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
      world.ctx.deps.ids.next('key'),
      owner.tenant_id,
      Buffer.from(live.hash),
      live.prefix,
      live.lastFour,
      world.ctx.clock.now().toISOString(),
      owner.id,
    );
  })();
  return live.key;
}

const board = (query: string, key = adminKey) => world.ctx.request(`/active-manifest${query}`, { key });

beforeAll(async () => {
  world = await openConsole();
  adminKey = productionOwnerKey();
  const person = async (email: string, name: string, capabilities: string[]) => {
    const res = await world.ctx.request('/account/people', { json: { email, display_name: name, capabilities }, key: adminKey });
    expect(res.status).toBe(201);
    return { key: res.body.api_key as string, id: res.body.person.id as string };
  };
  ({ key: carlKey, id: carlId } = await person('carl@firm.example', 'Carl Counsel', ['reviews:decide', 'people:manage', 'exports:read']));
  ({ key: beaKey, id: beaId } = await person('bea@firm.example', 'Bea Reviewer', ['reviews:decide']));
  // Four eyes for medicine's phi-export: two different people must approve.
  const rules = await world.ctx.request('/tenant/policy?policy_pack=medicine', {
    method: 'PUT',
    json: { review_rules: { 'phi-export': { approvals_required: 2 } } },
    key: adminKey,
  });
  expect(rules.status).toBe(201);
  // Three medicine items paused two hours ago, then more than a page of law items.
  for (let i = 0; i < 3; i++) medicine.push(await gate('medicine', { action_type: 'phi-export' }));
  world.ctx.clock.advance(2 * 3600_000);
  for (let i = 0; i < 205; i++) law.push(await gate('law'));
});
afterAll(() => world?.close());

describe('the board API', () => {
  it('pages past 200 items with next_cursor, each item once', async () => {
    const first = await board('?limit=200');
    expect(first.body.items).toHaveLength(200);
    expect(first.body.truncated).toBe(true);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await board(`?limit=200&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect(second.status).toBe(200);
    expect(second.body.items).toHaveLength(8);
    expect(second.body.next_cursor).toBeNull();
    const seen = [...first.body.items, ...second.body.items].map((i: { action_key: string }) => i.action_key);
    expect(new Set(seen).size).toBe(208);
    expect(new Set(seen)).toEqual(new Set([...law, ...medicine]));
    // Longest waiting first: the medicine items paused two hours earlier lead.
    expect(new Set(seen.slice(0, 3))).toEqual(new Set(medicine));
  });

  it('filters by pack, action type, route and age on the service', async () => {
    const keys = (r: { body: { items: { action_key: string }[] } }) => new Set(r.body.items.map((i) => i.action_key));
    expect(keys(await board('?pack=medicine&limit=200'))).toEqual(new Set(medicine));
    expect(keys(await board('?action_type=phi-export&limit=200'))).toEqual(new Set(medicine));
    expect(keys(await board('?min_age_seconds=3600&limit=200'))).toEqual(new Set(medicine));
    expect((await board('?route=browser:legal-review&limit=200')).body.items).toHaveLength(200);
    expect((await board('?pack=law&action_type=phi-export')).body.items).toHaveLength(0);
  });

  it('refuses a cursor it did not issue, and a malformed age, naming the parameter', async () => {
    const bad = await board('?cursor=not-a-cursor');
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([expect.objectContaining({ in: 'query', path: '/cursor', code: 'invalid_cursor' })]);
    expect(JSON.stringify(bad.body)).not.toContain('not-a-cursor');
    const age = await board('?min_age_seconds=-5');
    expect(age.status).toBe(422);
    expect(age.body.errors[0]).toMatchObject({ in: 'query', path: '/min_age_seconds' });
  });
});

describe('the board in the console', () => {
  it('shows 200 to a page and pages on', async () => {
    const { page } = world;
    await signIn(world, carlKey);
    await openPage(world, 'reviews', 'Review board');
    const rows = page.locator('tbody > tr');
    await expect.poll(() => rows.count()).toBe(200);
    expect(await page.getByText(/Page 1: 1–200, more on the next page/).isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => rows.count()).toBe(8);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await expect.poll(() => rows.count()).toBe(200);
  });

  it('filters by pack, action type, route and age', async () => {
    const { page } = world;
    const rows = page.locator('tbody > tr');
    const filters = page.getByRole('form', { name: 'Filter the board' });
    await filters.getByLabel('Pack').selectOption('medicine');
    await expect.poll(() => rows.count()).toBe(3);
    await filters.getByLabel('Pack').selectOption('');
    await filters.getByLabel('Age').selectOption('3600');
    await expect.poll(() => rows.count()).toBe(3);
    await filters.getByLabel('Age').selectOption('');
    await filters.getByLabel('Action type').selectOption('proposed-action');
    await expect.poll(() => rows.count()).toBe(200);
    await filters.getByLabel('Action type').selectOption('');
    await filters.getByLabel('Route', { exact: true }).fill('chat:nowhere');
    await filters.getByLabel('Route', { exact: true }).press('Tab');
    await expect.poll(() => page.getByText('Nothing here is waiting for a review.').isVisible()).toBe(true);
    await filters.getByLabel('Route', { exact: true }).fill('');
    await filters.getByLabel('Route', { exact: true }).press('Tab');
    await filters.getByLabel('Pack').selectOption('medicine');
    await expect.poll(() => rows.count()).toBe(3);
    await checkPage(world, 'review-board-filtered');
  });

  it('follows the service: a new item appears and a decided one goes, without a refresh', async () => {
    const { page } = world;
    const rows = page.locator('tbody > tr');
    const fresh = await gate('medicine', { action_type: 'phi-export' });
    medicine.push(fresh);
    await expect.poll(() => rows.count()).toBe(4);
    expect(await page.getByRole('row').filter({ hasText: fresh.slice(-12) }).count()).toBe(1);

    // Bea approves, through the API: the board names her as the first of two approvals.
    const target = medicine[0]!;
    const approve = await world.ctx.request('/v1/reviews', { json: { pack: 'medicine', action_key: target, reviewer: beaId, decision: 'approved' }, key: beaKey });
    expect(approve.status).toBe(201);
    expect(approve.body.review_status).toBe('pending');
    const row = page.getByRole('row').filter({ hasText: target.slice(-12) });
    await expect.poll(() => row.textContent()).toContain('1 of 2: Bea Reviewer');
    expect(await row.textContent()).not.toContain(beaId);

    // Another item is rejected elsewhere: it leaves the board.
    const rejected = medicine[1]!;
    const reject = await world.ctx.request('/v1/reviews', { json: { pack: 'medicine', action_key: rejected, reviewer: beaId, decision: 'rejected' }, key: beaKey });
    expect(reject.status).toBe(201);
    await expect.poll(() => page.getByRole('row').filter({ hasText: rejected.slice(-12) }).count()).toBe(0);
    expect(await rows.count()).toBe(3);
  });

  it('disables Decide, with the reason, for the person who already approved; another person still decides', async () => {
    const target = medicine[0]!;
    const context = await world.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const bea = { ...world, context, page: await context.newPage() };
    try {
      await signIn(bea, beaKey);
      expect(await bea.page.locator('header .person').textContent()).toContain('Bea Reviewer');
      await openPage(bea, 'reviews', 'Review board');
      await bea.page.getByRole('form', { name: 'Filter the board' }).getByLabel('Pack').selectOption('medicine');
      const row = bea.page.getByRole('row').filter({ hasText: target.slice(-12) });
      await expect.poll(() => row.count()).toBe(1);
      const decide = row.getByRole('button', { name: /Decide/ });
      await expect.poll(() => decide.isDisabled()).toBe(true);
      expect(await row.textContent()).toContain('You approved this');
      expect(await row.textContent()).toContain('needs another person');
      // Her other items stay open to her.
      const other = bea.page.getByRole('row').filter({ hasText: medicine[2]!.slice(-12) });
      expect(await other.getByRole('button', { name: /Decide/ }).isDisabled()).toBe(false);
      await checkPage(bea, 'review-board-approved');
    } finally {
      await context.close();
    }

    // Carl is another person: Decide is open to him, and his approval, the second, releases the action.
    const { page } = world;
    const row = page.getByRole('row').filter({ hasText: target.slice(-12) });
    const decide = row.getByRole('button', { name: /Decide/ });
    expect(await decide.isDisabled()).toBe(false);
    expect(await row.getByText('context not shared', { exact: true }).count()).toBe(1);
    await decide.click();
    const form = page.getByRole('form', { name: /Decide on/ });
    // The review context is opened on this device; this tenant's policy shares none.
    await expect.poll(() => form.getByText('Context not shared').isVisible()).toBe(true);
    await form.getByLabel('Approve').check();
    await form.getByRole('button', { name: /Submit: approve/ }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Done: approved' }).isVisible()).toBe(true);
    await expect.poll(() => row.count()).toBe(0);
    const record = await world.ctx.request(`/v1/records/${target}`, { key: adminKey });
    expect(record.body.review).toMatchObject({ status: 'approved', approvals: 2 });
  });

  it('disables Decide for the signed-in person right after their own approval in the console', async () => {
    const { page } = world;
    const target = medicine[2]!;
    const row = page.getByRole('row').filter({ hasText: target.slice(-12) });
    await row.getByRole('button', { name: /Decide/ }).click();
    const form = page.getByRole('form', { name: /Decide on/ });
    await form.getByLabel('Approve').check();
    await form.getByRole('button', { name: /Submit: approve/ }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: '1 of 2 approvals' }).isVisible()).toBe(true);
    await expect.poll(() => row.getByRole('button', { name: /Decide/ }).isDisabled()).toBe(true);
    expect(await row.textContent()).toContain('You approved this');
    // The service agrees: a second approval by the same person is refused.
    const again = await world.ctx.request('/v1/reviews', { json: { pack: 'medicine', action_key: target, reviewer: carlId, decision: 'approved' }, key: carlKey });
    expect(again.status).toBe(409);
  });

  it('names the people behind the review receipts on the Records page, never their ids', async () => {
    const { page } = world;
    await openPage(world, 'records', 'Records');
    await page.getByLabel('Kind').selectOption('review');
    await page.getByRole('button', { name: 'Load records' }).click();
    const rows = page.locator('tbody tr');
    // Bea's approval and rejection, Carl's two approvals.
    await expect.poll(() => rows.count()).toBe(4);
    const text = await page.locator('main').innerText();
    expect(text).toContain('Bea Reviewer');
    expect(text).toContain('Carl Counsel');
    expect(text).not.toMatch(/\b(per|key|sva)_[0-9A-Z]{26}\b/);
    expect(await page.locator('header .person').textContent()).toContain('Carl Counsel');
  });

  it('lets a service account’s session decide as itself, the reviewer left empty', async () => {
    const account = await world.ctx.request('/account/service-accounts', { json: { name: 'Intake desk', capabilities: ['reviews:decide'] }, key: adminKey });
    expect(account.status).toBe(201);
    const minted = await world.ctx.request('/account/api-keys', { json: { principal_id: account.body.service_account.id }, key: adminKey });
    expect(minted.status).toBe(201);
    const context = await world.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const desk = { ...world, context, page: await context.newPage() };
    try {
      await signIn(desk, minted.body.api_key);
      expect(await desk.page.locator('header .person').textContent()).toContain('Intake desk · service account');
      await openPage(desk, 'reviews', 'Review board');
      const target = law[0]!;
      const row = desk.page.getByRole('row').filter({ hasText: target.slice(-12) });
      await expect.poll(() => row.count()).toBe(1);
      await row.getByRole('button', { name: /Decide/ }).click();
      const form = desk.page.getByRole('form', { name: /Decide on/ });
      expect(await form.getByLabel('Reviewer').inputValue()).toBe('');
      await form.getByLabel('Approve').check();
      await form.getByRole('button', { name: /Submit: approve/ }).click();
      await expect.poll(() => desk.page.getByRole('status').filter({ hasText: 'Done: approved' }).isVisible()).toBe(true);
      const record = await world.ctx.request(`/v1/records/${target}`, { key: adminKey });
      expect(record.body.review.status).toBe('approved');
      expect(record.body.review.approved_by).toEqual([expect.objectContaining({ principal_id: account.body.service_account.id, asserted_by: null })]);
    } finally {
      await context.close();
    }
  });
});
