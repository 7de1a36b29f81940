/**
 * The tenant console under test: the console built from its sources into a temporary folder,
 * the real companion app on loopback HTTP (real SQLite file, real signatures; in-process so a
 * test can move the service clock and run a worker tick), and Debian's Chromium, headless,
 * driven by playwright-core. Every flag keeps traffic on loopback.
 *
 * Accessibility: axe-core is evaluated in the page over the DevTools protocol (page.evaluate),
 * which the console's strict Content-Security-Policy does not govern, so the scan runs against
 * the page exactly as served, CSP included (no bypassCSP).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { startServer } from '../../companion/core/server.ts';
import type { RunningServer } from '../../companion/core/server.ts';
import { buildConsole } from '../../scripts/build-console.mjs';
import { CHROMIUM, chromiumArgs } from '../extension/e2e/harness/browser.ts';
import { createTestContext } from '../companion/helpers.ts';
import type { TestContext } from '../companion/helpers.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';

export const SCREENSHOT_DIR = path.join(REPO_ROOT, 'test-output', 'console');
const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface ConsoleWorld {
  ctx: TestContext;
  server: RunningServer;
  url: string;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  apiKey: string;
  /** Messages the browser logged that mention the Content-Security-Policy (should stay empty). */
  cspViolations: string[];
  close(): Promise<void>;
}

export async function openConsole(env: Record<string, string> = {}): Promise<ConsoleWorld> {
  const consoleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ag-console-'));
  await buildConsole(consoleDir);
  const ctx = await createTestContext({ env: { SVC_CONSOLE_DIR: consoleDir, ...env } });
  // The service clock starts at the browser's now, so ages, expiries and charts read true.
  ctx.clock.set(Date.now());
  const server = await startServer(ctx.app, { host: '127.0.0.1', port: 0, graceMs: 500, log: ctx.log });
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: chromiumArgs(null) });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  const page = await context.newPage();
  const cspViolations: string[] = [];
  page.on('console', (m) => {
    if (/Content.Security.Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  const { apiKey } = await ctx.signup(`admin.${process.pid}@firm.example`);
  return {
    ctx,
    server,
    url: server.url,
    browser,
    context,
    page,
    apiKey,
    cspViolations,
    async close() {
      await browser.close();
      await server.close();
      await ctx.close();
      fs.rmSync(consoleDir, { recursive: true, force: true });
    },
  };
}

export async function signIn(world: ConsoleWorld, key = world.apiKey): Promise<void> {
  const { page } = world;
  await page.goto(`${world.url}/console`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Console pages' }).waitFor();
}

export async function openPage(world: ConsoleWorld, id: string, title: string): Promise<void> {
  await world.page.getByRole('link', { name: title, exact: true }).click();
  await expect.poll(() => world.page.url()).toContain(`#/${id}`);
  await expect.poll(() => world.page.getByRole('heading', { level: 1 }).textContent()).toBe(title);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/** axe-core's WCAG 2.x A and AA rules on the page as it is; the serious and critical violations. */
export async function axeScan(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(ctx: Document, opts: object): Promise<{ violations: any[] }> } }).axe;
    const r = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n: any) => String(n.target)) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** A screenshot at 1280×800 and at a narrow width, and no serious or critical axe violation at either. */
export async function checkPage(world: ConsoleWorld, name: string): Promise<void> {
  const { page } = world;
  await screenshot(page, name);
  expect(await axeScan(page), `${name} at 1280×800`).toEqual([]);
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, `${name}-narrow`);
  expect(await axeScan(page), `${name} narrow`).toEqual([]);
  // Nothing scrolls sideways at the narrow width except inside a table's own scroll region.
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
  await page.setViewportSize({ width: 1280, height: 800 });
  expect(world.cspViolations).toEqual([]);
}
