/**
 * Real Chromium (Debian's /usr/bin/chromium, headless) with the extension's Chrome package
 * (`wxt zip`, unpacked by the global setup) loaded, driven by playwright-core; no browser is ever downloaded. Every flag keeps traffic on
 * loopback (shared/notes/extension-testing.md, "Real-browser end-to-end tests").
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import type { BrowserContext, CDPSession, Page, Worker } from 'playwright-core';
import { REPO_ROOT } from '../../../helpers/vectors.ts';
import { extensionPackages } from './packages.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/**
 * The unpacked Chrome package, as a user loads it, not the .output/chrome-mv3 build folder.
 * Asked for only when a browser with the extension starts: the console tests share this
 * harness's flags without the extension-e2e project's packages.
 */
export function extensionDir(): string {
  return extensionPackages().chrome.dir;
}
export const SCREENSHOT_DIR = path.join(REPO_ROOT, 'test-output', 'extension-e2e');

export interface ExtensionBrowser {
  context: BrowserContext;
  extensionId: string;
  /** Opens an extension page (options.html, popup.html) in a new tab. */
  openExtensionPage(file: string): Promise<Page>;
  /**
   * Stops the extension's service worker, as Chromium does when it idles, and waits until it
   * has. The DevTools session attaches to `page` (any open page sees the worker), so no new tab
   * pushes the page under test into the background, where Chromium throttles it.
   */
  stopServiceWorker(page: Page): Promise<void>;
  close(): Promise<void>;
}

export function chromiumArgs(extensionDir: string | null): string[] {
  return [
    ...(extensionDir ? [`--disable-extensions-except=${extensionDir}`, `--load-extension=${extensionDir}`] : []),
    '--no-sandbox',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-default-apps',
    '--no-first-run',
    '--no-default-browser-check',
    '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
  ];
}

export async function launchWithExtension(label: string, dir = extensionDir()): Promise<ExtensionBrowser> {
  if (!fs.existsSync(path.join(dir, 'manifest.json'))) throw new Error(`no extension at ${dir}: the global setup unpacks the Chrome package there`);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), `ag-chromium-${label}-`));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    ignoreDefaultArgs: ['--disable-extensions'],
    args: chromiumArgs(dir),
    viewport: { width: 1000, height: 700 },
  });
  const worker: Worker = context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker'));
  const extensionId = new URL(worker.url()).host;
  const sessions = new WeakMap<Page, CDPSession>();

  return {
    context,
    extensionId,
    async openExtensionPage(file) {
      const page = await context.newPage();
      await page.goto(`chrome-extension://${extensionId}/${file}`);
      return page;
    },
    async stopServiceWorker(page) {
      let session = sessions.get(page);
      if (session === undefined) {
        session = await context.newCDPSession(page);
        await session.send('ServiceWorker.enable');
        sessions.set(page, session);
      }
      const cdp = session;
      const stopped = new Promise<void>((resolve) => {
        const onUpdate = (e: { versions: { scriptURL: string; runningStatus: string }[] }) => {
          if (e.versions.some((v) => v.scriptURL.startsWith(`chrome-extension://${extensionId}/`) && v.runningStatus === 'stopped')) {
            cdp.off('ServiceWorker.workerVersionUpdated', onUpdate);
            resolve();
          }
        };
        cdp.on('ServiceWorker.workerVersionUpdated', onUpdate);
      });
      await cdp.send('ServiceWorker.stopAllWorkers');
      await stopped;
    },
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`) });
}
