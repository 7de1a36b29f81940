/**
 * The latency the extension adds to a submission: on the ChatGPT
 * fixture page, Enter → the page's own send, timed in the same run in a Chromium with the
 * extension (gate decision allow, seal verified, logged) and in one without it. At least 50
 * timed sends each, interleaved in blocks so machine drift hits both alike; p50 and p95 of
 * each and of the difference. Everything stays on loopback; the companion is a real process.
 *
 * The added time is split into the gate round trip (POST /v1/gate as the extension's service
 * worker saw it: its Resource Timing entries, read through DevTools, so the product carries no
 * timing code) and the extension's own overhead (hold, redaction and hashing, messaging, the
 * seal check, release), printed as a ratio to the round trip: the target is <= 0.5x at p50.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import type { Page } from 'playwright-core';
import { CHROMIUM, chromiumArgs, launchWithExtension } from '../test/extension/e2e/harness/browser.ts';
import { startFixtureServer } from '../test/extension/e2e/harness/fixture-server.ts';
import { configureExtension } from '../test/extension/e2e/harness/options-page.ts';
import { putPolicy, signUp } from '../test/extension/e2e/harness/tenant.ts';
import { line, percentile, section } from './harness.ts';
import { startCompanion } from './companion-process.ts';

const SENDS = 60;
const WARM_UP = 5;
const BLOCK = 10;
const REPO_ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

/** A page whose sends resolve a promise in this process (fixture.js calls __onFixtureSend). */
async function timedPage(page: Page): Promise<(text: string) => Promise<number>> {
  let waiting: ((text: string) => void) | null = null;
  await page.exposeFunction('__onFixtureSend', (text: string) => waiting?.(text));
  return async (text: string) => {
    const composer = page.locator('#prompt-textarea');
    await composer.fill(text);
    const sent = new Promise<string>((resolve) => (waiting = resolve));
    const t0 = performance.now();
    await composer.press('Enter');
    const got = await sent;
    const ms = performance.now() - t0;
    if (got !== text) throw new Error(`expected ${JSON.stringify(text)} to be sent, got ${JSON.stringify(got)}`);
    return ms;
  };
}

export async function benchExtensionLatency(): Promise<void> {
  section(`Latency the extension adds to a submission (ChatGPT fixture, decision allow, ${SENDS} sends each)`);
  execFileSync(path.join(REPO_ROOT, 'node_modules', '.bin', 'wxt'), ['build'], { cwd: REPO_ROOT, stdio: 'pipe' });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-ext-'));
  const companion = await startCompanion(dataDir);
  const fixtures = await startFixtureServer();
  const withExt = await launchWithExtension('bench');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'ag-chromium-bench-plain-'));
  const plain = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: chromiumArgs(null) });
  try {
    const apiKey = await signUp(companion.url, 'bench@firm.example');
    await putPolicy(companion.url, apiKey, 'law', { allow_action_types: ['proposed-action'] });
    await configureExtension(withExt, {
      companionUrl: companion.url,
      apiKey,
      pack: 'law',
      actionType: 'proposed-action',
      context: { matter_band: 'moderate', doctrine_anchor: 'competence', jurisdiction: 'US', tool_data_handling: 'vendor-no-training' },
      mappings: [`${fixtures.url}/chatgpt.html* chatgpt`],
    });
    const worker = withExt.context.serviceWorkers()[0] ?? (await withExt.context.waitForEvent('serviceworker'));
    const gatedPage = await withExt.context.newPage();
    await gatedPage.goto(`${fixtures.url}/chatgpt.html`);
    await gatedPage.locator('html[data-action-gate="chatgpt"]').waitFor({ state: 'attached' });
    const plainPage = await plain.newPage();
    await plainPage.goto(`${fixtures.url}/chatgpt.html`);
    const gated = await timedPage(gatedPage);
    const direct = await timedPage(plainPage);

    const prompt = (i: number) => `Bench prompt ${i}: list three benefits of unit tests.`;
    for (let i = 0; i < WARM_UP; i++) {
      await gated(prompt(-1 - i));
      await direct(prompt(-1 - i));
    }
    const on: number[] = [];
    const off: number[] = [];
    await worker.evaluate(() => {
      performance.setResourceTimingBufferSize(1000);
      performance.clearResourceTimings();
    });
    for (let i = 0; i < SENDS; i += BLOCK) {
      for (let j = i; j < i + BLOCK; j++) off.push(await direct(prompt(j)));
      for (let j = i; j < i + BLOCK; j++) on.push(await gated(prompt(j)));
    }
    const roundTrips = await worker.evaluate(() =>
      performance
        .getEntriesByType('resource')
        .filter((e) => new URL(e.name).pathname === '/v1/gate')
        .map((e) => e.duration),
    );
    if (roundTrips.length !== SENDS) throw new Error(`expected ${SENDS} gate calls from the extension, saw ${roundTrips.length}`);
    const sentOnce = await gatedPage.evaluate(() => (window as unknown as { __sent: string[] }).__sent.length);
    if (sentOnce !== SENDS + WARM_UP) throw new Error(`the gated page sent ${sentOnce} times for ${SENDS + WARM_UP} submissions`);

    // For context: the companion's own answer to the same kind of request, straight from Node.
    const gateOnly: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      const res = await fetch(`${companion.url}/v1/gate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-key': apiKey },
        body: JSON.stringify({
          pack: 'law',
          action_type: 'proposed-action',
          proposed_action: `Send a prompt to the external AI tool ChatGPT (50 characters, SHA-256 ${'0'.repeat(64)})`,
          law_context: { tool_id: 'chatgpt-web', matter_band: 'moderate', doctrine_anchor: 'competence', jurisdiction: 'US', tool_data_handling: 'vendor-no-training' },
          surface: 'chatgpt',
          redacted_text: prompt(1000 + i),
        }),
      });
      await res.arrayBuffer();
      gateOnly.push(performance.now() - t0);
    }

    const p = (xs: number[], q: number) => percentile(xs, q);
    line('extension disabled (baseline)', `p50 ${p(off, 50).toFixed(1)} ms, p95 ${p(off, 95).toFixed(1)} ms`);
    line('extension enabled, allow', `p50 ${p(on, 50).toFixed(1)} ms, p95 ${p(on, 95).toFixed(1)} ms (${(p(on, 50) / p(off, 50)).toFixed(2)}x baseline at p50)`);
    line('added by the extension', `p50 ${(p(on, 50) - p(off, 50)).toFixed(1)} ms (difference of medians), p95 ${(p(on, 95) - p(off, 95)).toFixed(1)} ms (difference of p95s)`);
    const added = p(on, 50) - p(off, 50);
    const gate = p(roundTrips, 50);
    const own = added - gate;
    line('  at the companion: POST /v1/gate round trip in the extension', `p50 ${gate.toFixed(1)} ms, p95 ${p(roundTrips, 95).toFixed(1)} ms (${roundTrips.length} calls)`);
    line('  the rest: the extension\'s own overhead', `p50 ${own.toFixed(1)} ms = ${(own / gate).toFixed(2)}x the gate round trip (target <= 0.5x)`);
    line('for reference: POST /v1/gate straight from Node', `p50 ${p(gateOnly, 50).toFixed(1)} ms, p95 ${p(gateOnly, 95).toFixed(1)} ms (20 calls)`);
    line('before the release', 'hold, redaction and hashing, message to the background, POST /v1/gate, payload_hash check, Ed25519 seal verification');
    line('after the release', 'the decision log write, the dialog, the release report');
  } finally {
    await withExt.close();
    await plain.close();
    fs.rmSync(profile, { recursive: true, force: true });
    await fixtures.close();
    await companion.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
