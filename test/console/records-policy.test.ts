/**
 * The console's Records and Policy pages in real Chromium against the real companion: records
 * verified in the browser with their anchoring status, a seal bundle downloaded and verified by
 * the offline CLI, and a policy change saved only after its preview, with a raw-material value
 * refused at its field.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateBody } from '../companion/pack-fixtures.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';
import { checkPage, openConsole, openPage, signIn } from './harness.ts';
import type { ConsoleWorld } from './harness.ts';

let world: ConsoleWorld;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ag-console-records-'));
beforeAll(async () => {
  world = await openConsole();
  await signIn(world);
});
afterAll(async () => {
  await world?.close();
  fs.rmSync(work, { recursive: true, force: true });
});

async function gate(pack: 'law' | 'medicine' | 'education', overrides: Record<string, unknown> = {}) {
  const res = await world.ctx.request('/v1/gate', { json: gateBody(pack, overrides), key: world.apiKey });
  expect(res.status).toBe(201);
  return res.body as { action_key: string; decision: string };
}

describe('Records', () => {
  it('lists records newest first, each verified in the browser, waiting for its epoch until it closes', async () => {
    const first = await gate('law');
    const second = await gate('education');
    const { page } = world;
    await openPage(world, 'records', 'Records');
    const rows = page.locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.first().textContent()).toContain(second.action_key.slice(-12));
    await expect.poll(() => page.locator('.badge', { hasText: 'verified' }).count()).toBe(2);
    await expect.poll(() => page.locator('.badge', { hasText: 'waiting for the epoch' }).count()).toBe(2);

    // Filters apply on the service, over the whole range.
    await page.getByLabel('Pack').selectOption('law');
    await page.getByRole('button', { name: 'Load records' }).click();
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain(first.action_key.slice(-12));
    await page.getByLabel('Kind').selectOption('record');
    await page.getByRole('button', { name: 'Load records' }).click();
    await expect.poll(() => page.getByText('0 shown of 0 loaded; 0 match.').isVisible()).toBe(true);
    await page.getByLabel('Kind').selectOption('');
    await page.getByLabel('Pack').selectOption('');
    await page.getByRole('button', { name: 'Load records' }).click();
    await expect.poll(() => rows.count()).toBe(2);
    await checkPage(world, 'records');

    // The hour ends and its epoch closes: the same records now show their epoch.
    world.ctx.clock.advance(3600_000);
    expect((await world.ctx.deps.workers.epochs.closeDue()).length).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Load records' }).click();
    await expect.poll(() => page.locator('.badge', { hasText: /anchored, epoch/ }).count()).toBe(2);
  });

  it('downloads a seal bundle that the offline verifier accepts', async () => {
    const { page } = world;
    const row = page.locator('tbody tr').first();
    const [download] = await Promise.all([page.waitForEvent('download'), row.getByRole('button', { name: /Download/ }).click()]);
    const file = path.join(work, download.suggestedFilename());
    await download.saveAs(file);
    const dir = path.join(work, 'bundle');
    fs.mkdirSync(dir);
    execFileSync('tar', ['-xf', file, '-C', dir]);
    const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'companion/cli/verify.ts'), dir], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/verified/i);
  });

  it('refuses a malformed time range at its field', async () => {
    const { page } = world;
    await page.getByLabel('From').fill('2030-01-02T00:00:00');
    await page.getByLabel('To (exclusive)').fill('2030-01-01T00:00:00');
    await page.getByRole('button', { name: 'Load records' }).click();
    await expect.poll(() => page.getByLabel('To (exclusive)').getAttribute('aria-invalid')).toBe('true');
  });
});

describe('Policy', () => {
  it('previews a change on sample requests, then saves it as a new version with a verified receipt', async () => {
    const { page } = world;
    await openPage(world, 'policy', 'Policy');
    await page.getByLabel('Pack', { exact: true }).selectOption('medicine');
    const save = page.getByRole('button', { name: 'Save as a new version' });
    await expect.poll(() => page.getByLabel('Treatment of phi-export').isVisible()).toBe(true);
    expect(await save.isDisabled()).toBe(true);

    await page.getByLabel('Treatment of clinical-note-draft').selectOption('allow');
    await page.getByLabel('Label', { exact: true }).fill('Notes go straight through');
    await page.getByRole('button', { name: 'Preview on samples' }).click();
    await expect.poll(() => page.getByText(/sample requests would be decided differently/).isVisible()).toBe(true);
    const changed = page.locator('tr.changed');
    await expect.poll(() => changed.count()).toBeGreaterThan(0);
    expect(await changed.first().textContent()).toContain('clinical-note-draft');
    await checkPage(world, 'policy-preview');

    // Changing the editor again invalidates the preview: saving waits for a new one.
    await page.getByLabel('Treatment of phi-export').selectOption('deny');
    expect(await save.isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Preview on samples' }).click();
    await expect.poll(() => save.isDisabled()).toBe(false);
    await save.click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Saved as version 1' }).isVisible()).toBe(true);

    const current = await world.ctx.request('/tenant/policy/options?policy_pack=medicine', { key: world.apiKey });
    expect(current.body.current).toMatchObject({ version: 1, document: { allow_action_types: ['clinical-note-draft'], deny_action_types: ['phi-export'], label: 'Notes go straight through' } });
    expect(current.body.current.actor).toMatch(/^per_/);
    await expect.poll(() => page.locator('#receipts-h ~ * .badge', { hasText: 'verified' }).count()).toBe(1);
    await checkPage(world, 'policy');
  });

  it('shows a raw-material refusal at the field it names, and stores nothing', async () => {
    const { page } = world;
    await page.getByLabel('Note', { exact: true }).fill('token AKIAIOSFODNN7EXAMPLE and sk_live_4eC39HqLyjWDarjtT1zdp7dc');
    await page.getByRole('button', { name: 'Preview on samples' }).click();
    await expect.poll(() => page.getByLabel('Note', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.field-invalid .field-error').first().textContent()).toBeTruthy();
    const receipts = await world.ctx.request('/tenant/policy/receipts?policy_pack=medicine', { key: world.apiKey });
    expect(receipts.body.receipts).toHaveLength(1);
    await checkPage(world, 'policy-refusal');
  });
});
