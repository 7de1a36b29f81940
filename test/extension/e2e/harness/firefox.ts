/**
 * Real Firefox ESR (Debian's /usr/bin/firefox-esr, headless) driven by puppeteer-core over
 * WebDriver BiDi, with no separate driver and no browser downloaded. The extension's Firefox
 * package (`wxt zip -b firefox`, unpacked by the global setup) goes in as a temporary add-on
 * through BiDi `webExtension.install` (W3C WebDriver BiDi, "The webExtension Module"), the way
 * about:debugging loads one: unsigned, for this profile only.
 *
 * Nothing leaves loopback. Firefox's background services are switched off by preference, and
 * every non-loopback URL goes to a proxy on loopback that only writes down what was asked and
 * hangs up: a test can then see that nothing tried (`outboundRequests`).
 */
import fs from 'node:fs';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import type { Browser, Page } from 'puppeteer-core';
import { SCREENSHOT_DIR } from './browser.ts';
import { extensionPackages } from './packages.ts';

export const FIREFOX = process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr';
/** browser_specific_settings.gecko.id in wxt.config.ts. */
export const GECKO_ID = 'action-gate@extension.invalid';
/**
 * Firefox gives each add-on a random internal UUID per profile (its moz-extension:// host);
 * `extensions.webextensions.uuids` fixes it in advance, so the test knows the extension's origin.
 */
const EXTENSION_UUID = '5a1e0c9d-7f3b-4c2a-9e61-0d8b2f4a6c11';

/**
 * Preferences that keep Firefox off the network beyond what puppeteer already sets (its profile
 * defaults point telemetry, add-on and update URLs at dummy.test).
 */
function offlinePrefs(proxyPort: number): Record<string, unknown> {
  return {
    // Every URL that is not loopback goes to the recording proxy. Loopback itself is never
    // proxied (network.proxy.allow_hijacking_localhost stays false), so the companion and the
    // fixture pages are reached directly.
    'network.proxy.type': 1,
    'network.proxy.http': '127.0.0.1',
    'network.proxy.http_port': proxyPort,
    'network.proxy.ssl': '127.0.0.1',
    'network.proxy.ssl_port': proxyPort,
    'network.proxy.allow_hijacking_localhost': false,
    'network.proxy.no_proxies_on': '',
    // No DNS of its own: no DNS over HTTPS, no prefetching, no speculative connections.
    'network.trr.mode': 5,
    'network.dns.disablePrefetch': true,
    'network.prefetch-next': false,
    'network.predictor.enabled': false,
    'network.http.speculative-parallel-limit': 0,
    // Captive portal and connectivity checks (detectportal.firefox.com).
    'network.captive-portal-service.enabled': false,
    'network.connectivity-service.enabled': false,
    // Telemetry and studies.
    'toolkit.telemetry.enabled': false,
    'toolkit.telemetry.unified': false,
    'toolkit.telemetry.archive.enabled': false,
    'toolkit.telemetry.server': '',
    'datareporting.policy.dataSubmissionEnabled': false,
    'datareporting.healthreport.uploadEnabled': false,
    'app.shield.optoutstudies.enabled': false,
    'app.normandy.enabled': false,
    'messaging-system.rsexperimentloader.enabled': false,
    // Updates: the application (Debian updates Firefox ESR, not Firefox itself), add-ons,
    // system add-ons, media plugins, search engines, region.
    'app.update.auto': false,
    'app.update.disabledForTesting': true,
    'extensions.update.enabled': false,
    'extensions.systemAddon.update.enabled': false,
    'extensions.getAddons.cache.enabled': false,
    'extensions.htmlaboutaddons.recommendations.enabled': false,
    'media.gmp-manager.updateEnabled': false,
    'browser.search.update': false,
    'browser.region.network.url': '',
    'browser.region.update.enabled': false,
    // Safe Browsing lists and download checks.
    'browser.safebrowsing.malware.enabled': false,
    'browser.safebrowsing.phishing.enabled': false,
    'browser.safebrowsing.blockedURIs.enabled': false,
    'browser.safebrowsing.downloads.enabled': false,
    'browser.safebrowsing.downloads.remote.enabled': false,
    'browser.safebrowsing.update.enabled': false,
    // Remote Settings (blocklists, CRLite, intermediates) and certificate status checks. A
    // release build honours this server only with MOZ_DISABLE_NONLOCAL_CONNECTIONS=1 set, and
    // then this exact dummy URL skips every sync (services-settings Utils.shouldSkipRemoteActivity).
    'services.settings.server': 'data:,#remote-settings-dummy/v1',
    'security.remote_settings.crlite_filters.enabled': false,
    'security.remote_settings.intermediates.enabled': false,
    'security.OCSP.enabled': 0,
    // New tab page content, sponsored tiles, accounts, geolocation lookups.
    'browser.newtabpage.enabled': false,
    'browser.newtabpage.activity-stream.feeds.topsites': false,
    'browser.newtabpage.activity-stream.feeds.section.topstories': false,
    'browser.topsites.contile.enabled': false,
    'identity.fxaccounts.enabled': false,
    'geo.provider.network.url': '',
  };
}

/** A loopback "proxy" that records each request line it is sent and closes the connection. */
async function recordingProxy(): Promise<{ port: number; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.once('data', (chunk) => {
      requests.push(chunk.toString('latin1').split('\r\n')[0] ?? '');
      socket.destroy();
    });
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface FirefoxWithExtension {
  browser: Browser;
  /** moz-extension://<uuid> */
  extensionOrigin: string;
  /** What `webExtension.install` answered: the add-on's id. */
  installedId: string;
  /** Request lines Firefox sent towards anything but loopback (each was refused). */
  outboundRequests: string[];
  /** Opens an extension page (options.html, popup.html) in a new tab and waits for its body. */
  openExtensionPage(file: string): Promise<Page>;
  close(): Promise<void>;
}

/**
 * puppeteer's `goto` waits for BiDi navigation events that Firefox does not send for a
 * moz-extension:// document (the navigation itself completes), so extension pages are opened
 * with BiDi `browsingContext.navigate` and `wait: "complete"` directly.
 */
async function navigateExtensionPage(page: Page, url: string): Promise<void> {
  const frame = page.mainFrame() as unknown as { browsingContext?: { navigate(url: string, wait: string): Promise<void> } };
  if (typeof frame.browsingContext?.navigate !== 'function') throw new Error('puppeteer-core no longer exposes the BiDi browsing context of a frame');
  await frame.browsingContext.navigate(url, 'complete');
}

export async function launchFirefoxWithExtension(label: string): Promise<FirefoxWithExtension> {
  const dir = extensionPackages().firefox.dir;
  if (!fs.existsSync(path.join(dir, 'manifest.json'))) throw new Error(`no extension at ${dir}: the global setup unpacks the Firefox package there`);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), `ag-firefox-${label}-`));
  const proxy = await recordingProxy();
  let browser: Browser;
  try {
    browser = await puppeteer.launch({
      browser: 'firefox',
      protocol: 'webDriverBiDi',
      executablePath: FIREFOX,
      headless: true,
      userDataDir: profile,
      // WebDriver BiDi refuses to navigate to anything but http(s), file and blob URLs unless
      // the session may reach privileged documents; extension pages (moz-extension://) are such
      // documents (Firefox remote agent, isWebdriverSafeNavigationURL).
      args: ['--remote-allow-system-access'],
      extraPrefsFirefox: {
        ...offlinePrefs(proxy.port),
        'extensions.webextensions.uuids': JSON.stringify({ [GECKO_ID]: EXTENSION_UUID }),
      },
      defaultViewport: { width: 1000, height: 700 },
      // Firefox's own test switch: its network layer refuses every connection to a
      // non-loopback address (nsIOService::IsNonLocalConnectionsDisabled), and release builds
      // then honour the Remote Settings server preference above.
      env: { ...process.env, MOZ_DISABLE_NONLOCAL_CONNECTIONS: '1' },
    });
  } catch (e) {
    await proxy.close();
    fs.rmSync(profile, { recursive: true, force: true });
    throw e;
  }
  const installedId = await browser.installExtension(dir);
  const extensionOrigin = `moz-extension://${EXTENSION_UUID}`;

  return {
    browser,
    extensionOrigin,
    installedId,
    outboundRequests: proxy.requests,
    async openExtensionPage(file) {
      const page = await browser.newPage();
      await navigateExtensionPage(page, `${extensionOrigin}/${file}`);
      await page.waitForFunction((origin: string) => location.origin === origin && document.readyState === 'complete', {}, extensionOrigin);
      return page;
    },
    async close() {
      await browser.close();
      await proxy.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

export async function firefoxScreenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`) as `${string}.png` });
}
