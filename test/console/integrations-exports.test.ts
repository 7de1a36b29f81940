/**
 * The console's Integrations and Exports pages in real Chromium against the real companion: a
 * webhook registered with its signing secret shown once, a delivery that ran out of attempts
 * seen as a dead letter with its last error and requeued until delivered; OSCAL downloaded and
 * the validation report with its blocking gaps.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordBody } from '../companion/pack-fixtures.ts';
import { startReceiver } from '../companion/webhook-receiver.ts';
import type { Receiver } from '../companion/webhook-receiver.ts';
import { checkPage, openConsole, openPage, signIn } from './harness.ts';
import type { ConsoleWorld } from './harness.ts';

let world: ConsoleWorld;
let rx: Receiver;
beforeAll(async () => {
  world = await openConsole({ SVC_WEBHOOK_ALLOW_LOOPBACK: '1' });
  rx = await startReceiver();
  await signIn(world);
});
afterAll(async () => {
  await world?.close();
  await rx?.close();
});

const deliveries = async () => (await world.ctx.request('/tenant/integrations/webhook/ops/deliveries', { key: world.apiKey })).body.deliveries;

describe('Integrations', () => {
  it('registers a webhook and shows its signing secret once', async () => {
    const { page } = world;
    await openPage(world, 'integrations', 'Integrations');
    await page.getByLabel('Target name').fill('ops');
    await page.getByLabel('Endpoint URL').fill(rx.url);
    await page.getByRole('button', { name: 'Save webhook' }).click();
    const shown = page.getByRole('status').filter({ hasText: 'signing secret, shown this once' });
    await expect.poll(() => shown.isVisible()).toBe(true);
    const secret = await shown.locator('code.secret').textContent();
    expect(secret).toMatch(/^whsec_/);
    await expect.poll(() => page.getByRole('cell', { name: 'ops', exact: true }).count()).toBe(1);
    await checkPage(world, 'integrations-secret');
    // Never again: a reload shows the webhook, not its secret.
    await page.reload();
    await page.getByRole('heading', { name: 'Routes and webhooks' }).waitFor();
    expect(await page.getByText(secret!).count()).toBe(0);
  });

  it('shows a dead letter with its last error, and requeues it until delivered', async () => {
    rx.status = 500;
    const sealed = await world.ctx.request('/v1/record', { json: recordBody(), key: world.apiKey });
    expect(sealed.status).toBe(201);
    // Run the delivery worker through every attempt, moving the service clock over each backoff.
    for (let attempt = 1; ; attempt++) {
      expect((await world.ctx.deps.webhooks.worker.tick()).claimed).toBe(1);
      const [d] = await deliveries();
      if (d.dead_lettered) break;
      world.ctx.clock.set(Date.parse(d.next_attempt_at));
      expect(attempt).toBeLessThan(20);
    }
    // Half a day passed on the service clock: the 8-hour session has expired, so sign in again.
    const { page } = world;
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.getByLabel('API key').waitFor();
    await signIn(world);
    await openPage(world, 'integrations', 'Integrations');
    const row = page.getByRole('row').filter({ hasText: 'record.sealed' });
    await expect.poll(() => row.getByText('dead letter').isVisible()).toBe(true);
    expect(await row.textContent()).toContain('HTTP 500');
    await checkPage(world, 'integrations-dead-letter');

    rx.status = 200;
    await row.getByRole('button', { name: /Requeue/ }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: /Requeued evt_/ }).isVisible()).toBe(true);
    expect((await world.ctx.deps.webhooks.worker.tick()).claimed).toBe(1);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => row.getByText('delivered').isVisible()).toBe(true);
    expect(rx.received.at(-1)!.json.action_key).toBe(sealed.body.action_key);
  });
});

describe('Exports', () => {
  it('downloads OSCAL and shows the validation report with its blocking gaps', async () => {
    const { page } = world;
    await openPage(world, 'exports', 'Exports');
    await expect.poll(() => page.getByRole('heading', { name: /Blocking gaps \(\d+\)/ }).isVisible()).toBe(true);
    const report = (await world.ctx.request('/tenant/exports/validation-report', { key: world.apiKey })).body;
    expect(await page.getByRole('heading', { name: /Blocking gaps/ }).textContent()).toBe(`Blocking gaps (${report.blocking_gaps.length})`);
    for (const gap of report.blocking_gaps) expect(await page.locator('.gaps').first().textContent()).toContain(gap.code);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download OSCAL assessment results' }).click()]);
    const oscal = JSON.parse(fs.readFileSync((await download.path())!, 'utf8'));
    expect(oscal['assessment-results']).toBeDefined();

    await page.getByRole('button', { name: 'Validate OSCAL assessment results' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: /^oscal: (passed|failed)/ }).isVisible()).toBe(true);
    await expect.poll(() => page.getByRole('region', { name: 'Validation runs' }).locator('tbody tr').count()).toBe(1);
    await checkPage(world, 'exports');
  });

  it('shows overview readiness of the webhook', async () => {
    await openPage(world, 'overview', 'Overview');
    await expect.poll(() => world.page.locator('.checks li', { hasText: 'ops' }).count()).toBe(1);
  });
});
