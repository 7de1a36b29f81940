/**
 * The extension's reviewer panel opens review context, end to end in real Chromium: three
 * profiles each with the packaged extension. The employee's pauses a prompt under a policy with
 * `review_context: "encrypted"` and its background seals the gate request to every device of
 * every person who may decide; the reviewer's (signed in with the reviewer person's key) made
 * and registered its device key when its panel first opened, and now shows the employee's exact
 * prompt, "exactly what was gated", with Approve enabled. A third person, who did not hold
 * reviews:decide when the action paused, was sealed nothing: their panel says not shared. A
 * ciphertext altered in the companion's SQLite file, or another action's ciphertext put in its
 * place (other associated data), is refused and Approve stays disabled.
 *
 * The companion is a real process on loopback; only ciphertext ever reaches it.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupCompanions, start, tempDataDir } from '../../helpers/companion-process.ts';
import type { Companion } from '../../helpers/companion-process.ts';
import { launchWithExtension, screenshot } from './harness/browser.ts';
import type { ExtensionBrowser } from './harness/browser.ts';
import { startFixtureServer } from './harness/fixture-server.ts';
import type { FixtureServer } from './harness/fixture-server.ts';
import { configureExtension } from './harness/options-page.ts';
import { openReviewerPopup } from './harness/reviewer.ts';
import { GENERIC_SELECTORS, fixtureMappings, openSite, sent, typeInto } from './harness/sites.ts';
import { signUp } from './harness/tenant.ts';

const LAW_CONTEXT = { matter_band: 'moderate', doctrine_anchor: 'competence', jurisdiction: 'US', tool_data_handling: 'vendor-trains-on-inputs' };
const CANARY = 'CANARY-panel-e2e-3f08';
/** Citing authority to an external AI tool: the law engine routes it for attorney review. */
const ASK = (n: string) => `Does Smith v. Jones still support our limitation argument? ${n}`;
const PROMPT = ASK(CANARY);

let companion: Companion;
let dataDir: string;
let fixtures: FixtureServer;
let employee: ExtensionBrowser;
let reviewer: ExtensionBrowser;
let third: ExtensionBrowser;
let ownerKey: string;
let rita: { id: string; key: string };
let tom: { id: string; key: string };

async function api(p: string, key: string, method = 'GET', json?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${companion.url}${p}`, {
    method,
    headers: { 'x-service-key': key, ...(json !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

async function person(email: string, capabilities: string[]): Promise<{ id: string; key: string }> {
  const res = await api('/account/people', ownerKey, 'POST', { email, display_name: email.split('@')[0], capabilities });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.person.id as string, key: res.body.api_key as string };
}

async function setCapabilities(id: string, capabilities: string[]): Promise<void> {
  const res = await api(`/account/people/${id}`, ownerKey, 'PATCH', { capabilities });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** The rows the companion holds for an action, read straight from its SQLite file. */
function contextRows(actionKey: string): { review_key_id: string; enc: Buffer; ct: Buffer }[] {
  const db = new Database(path.join(dataDir, 'companion.db'), { readonly: true });
  try {
    return db.prepare('SELECT review_key_id, enc, ct FROM review_contexts WHERE action_key = ?').all(actionKey) as never;
  } finally {
    db.close();
  }
}

/** Overwrites one stored ciphertext in the companion's SQLite file, as someone with the disk could. */
function overwriteRow(actionKey: string, keyId: string, enc: Buffer, ct: Buffer): void {
  const db = new Database(path.join(dataDir, 'companion.db'));
  try {
    db.pragma('busy_timeout = 5000');
    const changed = db.prepare('UPDATE review_contexts SET enc = ?, ct = ? WHERE action_key = ? AND review_key_id = ?').run(enc, ct, actionKey, keyId).changes;
    expect(changed).toBe(1);
  } finally {
    db.close();
  }
}

/** A new tab of the employee's: types the prompt, sends it, and returns the paused action's key and the tab. */
async function pause(text: string): Promise<{ actionKey: string; page: Page }> {
  const page = await employee.context.newPage();
  await openSite(page, fixtures.url, 'gemini');
  await typeInto(page, 'gemini', text);
  await page.keyboard.press('Enter');
  const modal = page.locator('[data-kind="review"]');
  await modal.waitFor();
  return { actionKey: (await modal.locator('.ag-key').textContent())!, page };
}

/** Opens the pending item in a reviewer's popup and waits until its context has settled. */
async function openPanel(popup: Page, actionKey: string) {
  await popup.locator('.ag-header button', { hasText: 'Refresh' }).click();
  const item = popup.locator(`.ag-pending-item[data-action-key="${actionKey}"]`);
  await item.waitFor({ timeout: 20_000 });
  await item.locator('button.ag-open-review').click();
  const panel = popup.locator('.ag-modal');
  await panel.waitFor();
  expect(await panel.locator('.ag-key').first().textContent()).toBe(actionKey);
  const context = panel.locator('.ag-context');
  await expect.poll(() => context.getAttribute('data-context'), { timeout: 20_000 }).not.toBe('loading');
  return { panel, context, approve: panel.locator('button.ag-approve') };
}

async function closePanel(popup: Page): Promise<void> {
  await popup.locator('.ag-modal button.ag-close').click();
  await popup.locator('.ag-modal').waitFor({ state: 'detached' });
}

/**
 * Everything the extension keeps in the profile: every IndexedDB database of its origin (the
 * background's log and the device key store) and its storage areas, as text.
 */
async function extensionStorage(popup: Page): Promise<string> {
  return popup.evaluate(async () => {
    const dump: unknown[] = [];
    for (const { name } of await indexedDB.databases()) {
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const req = indexedDB.open(name!);
        req.onsuccess = () => resolve(req.result);
        req.onerror = () => reject(req.error);
      });
      for (const store of Array.from(db.objectStoreNames)) {
        const rows = await new Promise<unknown[]>((resolve, reject) => {
          const req = db.transaction(store).objectStore(store).getAll();
          req.onsuccess = () => resolve(req.result);
          req.onerror = () => reject(req.error);
        });
        dump.push({ name, store, rows });
      }
      db.close();
    }
    const api = (globalThis as unknown as { chrome: { storage: Record<string, { get(k: null): Promise<unknown> } | undefined> } }).chrome.storage;
    for (const area of ['local', 'sync', 'session'] as const) dump.push({ area, items: await api[area]?.get(null) });
    return JSON.stringify(dump);
  });
}

/** The active review key the person's extension registered (its device). */
async function deviceKeyId(key: string): Promise<string> {
  const keys = await api('/account/me/review-keys', key);
  expect(keys.status).toBe(200);
  const active = keys.body.review_keys.filter((k: { status: string }) => k.status === 'active');
  expect(active).toHaveLength(1);
  expect(active[0].label).toBe('Browser extension · Chrome');
  return active[0].id as string;
}

beforeAll(async () => {
  dataDir = tempDataDir();
  [companion, fixtures] = await Promise.all([start(dataDir), startFixtureServer()]);
  ownerKey = await signUp(companion.url, 'team@firm.example');
  const employeeKey = (await person('emma@firm.example', [])).key;
  rita = await person('rita@firm.example', ['reviews:decide', 'records:read']);
  tom = await person('tom@firm.example', ['reviews:decide', 'records:read']);
  const policy = await api('/tenant/policy?policy_pack=law', ownerKey, 'PUT', { policy_pack: 'law', allow_action_types: ['proposed-action'], review_context: 'encrypted' });
  expect(policy.status, JSON.stringify(policy.body)).toBeLessThan(300);
  [employee, reviewer, third] = await Promise.all([launchWithExtension('employee'), launchWithExtension('reviewer'), launchWithExtension('third')]);
  const common = { companionUrl: companion.url, pack: 'law', actionType: 'proposed-action', context: LAW_CONTEXT };
  await Promise.all([
    configureExtension(employee, { ...common, apiKey: employeeKey, mappings: fixtureMappings(fixtures.url), generic: GENERIC_SELECTORS }),
    configureExtension(reviewer, { ...common, apiKey: rita.key, role: 'reviewer' }),
    configureExtension(third, { ...common, apiKey: tom.key, role: 'reviewer' }),
  ]);
});

afterAll(async () => {
  await Promise.all([employee?.close(), reviewer?.close(), third?.close()]);
  await fixtures?.close();
  cleanupCompanions();
});

describe('the extension’s reviewer panel opens the review context', () => {
  it('shows the reviewer the exact prompt; a person without reviews:decide when it paused gets none; altered or substituted context is refused', async () => {
    const [ritaPopup, tomPopup] = await Promise.all([openReviewerPopup(reviewer), openReviewerPopup(third)]);

    // A first action, paused before any reviewer device exists: opening it makes and registers
    // each profile's device key, and its context was sealed to nobody.
    const { actionKey: warm } = await pause(ASK('warm-up'));
    for (const popup of [ritaPopup, tomPopup]) {
      const { context, approve } = await openPanel(popup, warm);
      expect(await context.getAttribute('data-context')).toBe('not_shared');
      expect(await context.textContent()).toContain('Context not shared with this device');
      await expect.poll(() => approve.isDisabled()).toBe(false);
      await closePanel(popup);
    }
    const ritaKey = await deviceKeyId(rita.key);
    const tomKey = await deviceKeyId(tom.key);

    // Tom no longer holds reviews:decide when the employee's prompt pauses.
    await setCapabilities(tom.id, ['records:read']);
    const { actionKey, page } = await pause(PROMPT);
    // Sharing runs in the background after the page is told it is paused: wait until it landed.
    await expect.poll(() => contextRows(actionKey).length, { timeout: 20_000 }).toBe(1);
    expect(contextRows(actionKey).map((r) => r.review_key_id)).toEqual([ritaKey]);
    // Without reviews:decide, his key reads no context at all.
    expect((await api(`/v1/reviews/${actionKey}/context?key_id=${tomKey}`, tom.key)).status).toBe(403);

    // The reviewer's panel: exactly what was gated, the employee's exact prompt, Approve enabled.
    const { panel, context, approve } = await openPanel(ritaPopup, actionKey);
    expect(await context.getAttribute('data-context'), (await context.textContent()) ?? '').toBe('opened');
    expect(await context.getAttribute('data-match')).toBe('true');
    expect(await panel.locator('.ag-context-match').textContent()).toContain('This is exactly what was gated');
    expect(await panel.locator('.ag-context-text').textContent()).toBe(PROMPT);
    await expect.poll(() => approve.isDisabled()).toBe(false);
    // What the sealed record says, beside the context.
    expect(await panel.locator('.ag-reasons li').count()).toBeGreaterThan(0);
    expect(await panel.locator('.ag-paused-by').textContent()).not.toBe('-');
    expect(await panel.locator('.ag-approved-by').textContent()).toBe('no one yet');
    expect(await panel.locator('a.ag-record-link').getAttribute('href')).toBe(`${companion.url}/console#/records/${encodeURIComponent(actionKey)}`);
    expect(await panel.locator('.ag-claim-boundary').textContent()).not.toBe('');
    await screenshot(ritaPopup, 'reviewer-panel-context-opened');
    // The plaintext lives in the panel only: nothing the extension keeps holds it.
    const kept = await extensionStorage(ritaPopup);
    expect(kept).toContain('action-gate-review-device');
    expect(kept).toContain(companion.url);
    expect(kept).not.toContain(CANARY);
    // The service holds ciphertext only.
    for (const r of contextRows(actionKey)) expect(r.ct.toString('latin1')).not.toContain(CANARY);
    await closePanel(ritaPopup);

    // Given reviews:decide again, Tom's device still had nothing sealed to it.
    await setCapabilities(tom.id, ['reviews:decide', 'records:read']);
    const tomPanel = await openPanel(tomPopup, actionKey);
    expect(await tomPanel.context.getAttribute('data-context')).toBe('not_shared');
    expect(await tomPanel.context.textContent()).toContain('Context not shared with this device');
    expect(await tomPanel.panel.textContent()).not.toContain(CANARY);
    await closePanel(tomPopup);

    // A ciphertext altered on the companion's disk: refused, Approve disabled.
    const { actionKey: altered } = await pause(ASK('altered'));
    // Tom holds reviews:decide again: sealed to both devices now.
    await expect.poll(() => contextRows(altered).length, { timeout: 20_000 }).toBe(2);
    const row = contextRows(altered).find((r) => r.review_key_id === ritaKey)!;
    const ct = Buffer.from(row.ct);
    ct[ct.length - 1]! ^= 0x01;
    overwriteRow(altered, ritaKey, row.enc, ct);
    const refused = await openPanel(ritaPopup, altered);
    expect(await refused.context.getAttribute('data-context')).toBe('refused');
    expect(await refused.panel.locator('[role="alert"]').textContent()).toContain('Do not approve on this context');
    expect(await refused.approve.isDisabled()).toBe(true);
    await screenshot(ritaPopup, 'reviewer-panel-context-refused');
    await closePanel(ritaPopup);

    // Another action's ciphertext put in this one's place: its associated data names the other
    // action and payload_hash, so it does not open here either.
    const { actionKey: substituted } = await pause(ASK('substituted'));
    await expect.poll(() => contextRows(substituted).length, { timeout: 20_000 }).toBe(2);
    const other = contextRows(actionKey)[0]!;
    overwriteRow(substituted, ritaKey, other.enc, other.ct);
    const swapped = await openPanel(ritaPopup, substituted);
    expect(await swapped.context.getAttribute('data-context')).toBe('refused');
    expect(await swapped.approve.isDisabled()).toBe(true);
    expect(await swapped.panel.textContent()).not.toContain(CANARY);
    await closePanel(ritaPopup);

    // The reviewer approves the prompt whose context opened; the employee's page sends it once.
    const decided = await openPanel(ritaPopup, actionKey);
    await decided.panel.locator('select[name="citation_support"]').selectOption('PASS');
    await decided.approve.click();
    const result = decided.panel.locator('.ag-review-result');
    await result.waitFor();
    expect(await result.getAttribute('data-verified')).toBe('true');
    // The receipt sealed the decision, and the context was erased with it.
    await expect.poll(() => contextRows(actionKey).length).toBe(0);
    await expect.poll(() => sent(page), { timeout: 20_000 }).toEqual([PROMPT]);
  });
});
