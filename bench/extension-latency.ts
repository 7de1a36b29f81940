/**
 * The latency the extension adds to a submission (issue 5, "Benchmark"): on the ChatGPT
 * fixture page, Enter → the page's own send, timed in the same run in a Chromium with the
 * extension (gate decision allow, seal verified, logged) and in one without it. At least 50
 * timed sends each, interleaved in blocks so machine drift hits both alike; p50 and p95 of
 * each and of the difference. Everything stays on loopback; the companion is a real process.
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
    for (let i = 0; i < SENDS; i += BLOCK) {
      for (let j = i; j < i + BLOCK; j++) off.push(await direct(prompt(j)));
      for (let j = i; j < i + BLOCK; j++) on.push(await gated(prompt(j)));
    }
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
    line('of which the companion answering POST /v1/gate from Node', `p50 ${p(gateOnly, 50).toFixed(1)} ms, p95 ${p(gateOnly, 95).toFixed(1)} ms (20 calls)`);
    line('includes', 'hold, redaction, POST /v1/gate on loopback, payload_hash check, Ed25519 seal verification, Dexie log, release');
  } finally {
    await withExt.close();
    await plain.close();
    fs.rmSync(profile, { recursive: true, force: true });
    await fixtures.close();
    await companion.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
