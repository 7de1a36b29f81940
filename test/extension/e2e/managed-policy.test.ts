/**
 * Managed deployment in real Chromium: the organisation's settings arrive as enterprise policy
 * (`3rdparty.extensions.<id>` in a JSON file under /etc/chromium/policies/managed, the Linux
 * policy directory), land in storage.managed under the extension's managed_schema, configure the
 * extension without anyone opening its options, and lock what the policy locks.
 *
 * Chromium's --policy switch does not carry extension (3rdparty) policy, so the policy file is
 * the only way on Linux; it is machine-wide and needs root. To touch nothing else on the
 * machine, the test builds a copy of the extension with a throwaway manifest `key` (so its id
 * is new and known in advance), names that id in its own policy file, and removes the file.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cleanupCompanions, start, tempDataDir } from '../../helpers/companion-process.ts';
import type { Companion } from '../../helpers/companion-process.ts';
import { extensionDir, launchWithExtension, screenshot } from './harness/browser.ts';
import type { ExtensionBrowser } from './harness/browser.ts';
import { startFixtureServer } from './harness/fixture-server.ts';
import type { FixtureServer } from './harness/fixture-server.ts';
import { putPolicy, signUp } from './harness/tenant.ts';

const POLICY_DIR = '/etc/chromium/policies/managed';

/** A copy of the build with a fresh manifest key; Chromium derives the id from the key's SHA-256. */
function keyedCopy(): { dir: string; id: string } {
  const { publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const der = publicKey.export({ type: 'spki', format: 'der' });
  const hex = crypto.createHash('sha256').update(der).digest('hex').slice(0, 32);
  const id = [...hex].map((h) => String.fromCharCode(97 + parseInt(h, 16))).join('');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ag-managed-ext-'));
  fs.cpSync(extensionDir(), dir, { recursive: true });
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ ...manifest, key: der.toString('base64') }));
  return { dir, id };
}

let companion: Companion;
let fixtures: FixtureServer;
let browser: ExtensionBrowser;
let policyFile: string;
let extDir: string;
let extId: string;

beforeAll(async () => {
  [companion, fixtures] = await Promise.all([start(tempDataDir()), startFixtureServer()]);
  const apiKey = await signUp(companion.url, 'it@firm.example');
  await putPolicy(companion.url, apiKey, 'law', { allow_action_types: ['proposed-action'] });
  ({ dir: extDir, id: extId } = keyedCopy());
  fs.mkdirSync(POLICY_DIR, { recursive: true });
  policyFile = path.join(POLICY_DIR, `action-gate-e2e-${extId}.json`);
  const settings = {
    companionUrl: companion.url,
    apiKey,
    failMode: 'closed',
    siteMappings: [{ pattern: `${fixtures.url}/chatgpt.html*`, adapter: 'chatgpt' }],
    gatePack: 'law',
    gateActionType: 'proposed-action',
    gateContext: JSON.stringify({ matter_band: 'moderate', doctrine_anchor: 'competence', jurisdiction: 'US', tool_data_handling: 'vendor-no-training' }),
    // siteMappings is not locked: the organisation's mappings come on top of the person's own.
    locked: ['companionUrl', 'apiKey', 'failMode', 'gateProfile'],
  };
  fs.writeFileSync(policyFile, JSON.stringify({ '3rdparty': { extensions: { [extId]: settings } } }));
  browser = await launchWithExtension('managed', extDir);
});

afterAll(async () => {
  if (policyFile) fs.rmSync(policyFile, { force: true });
  await browser?.close();
  if (extDir) fs.rmSync(extDir, { recursive: true, force: true });
  await fixtures?.close();
  cleanupCompanions();
});

it('gates a mapped site with the policy’s settings, nobody having opened the options', async () => {
  expect(browser.extensionId).toBe(extId);
  const page = await browser.context.newPage();
  // The mapped site's content script is registered once the worker has read the policy; a
  // page loaded before that has none, so load it again until it does.
  await expect
    .poll(async () => {
      await page.goto(`${fixtures.url}/chatgpt.html`);
      const gated = page.locator('html[data-action-gate="chatgpt"]');
      return gated.waitFor({ state: 'attached', timeout: 2_000 }).then(() => true, () => false);
    }, { timeout: 20_000 })
    .toBe(true);
  await page.locator('#prompt-textarea').click();
  await page.keyboard.type('Draft a polite reminder about tomorrow’s team meeting.');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => (window as any).__sent.length > 0);
  expect(await page.evaluate(() => (window as any).__sent)).toEqual(['Draft a polite reminder about tomorrow’s team meeting.']);
  await page.close();
});

it('shows the locked settings in the options page, filled in and not editable', async () => {
  const options = await browser.openExtensionPage('options.html');
  await options.locator('#managed-notice').waitFor();
  const url = options.locator('#companion-url');
  expect(await url.inputValue()).toBe(companion.url);
  expect(await url.isDisabled()).toBe(true);
  expect(await options.locator('#api-key').isDisabled()).toBe(true);
  expect(await options.locator('#fail-mode').isDisabled()).toBe(true);
  expect(await options.locator('#gate-pack').inputValue()).toBe('law');
  expect(JSON.parse(await options.locator('#gate-context').inputValue())).toMatchObject({ tool_data_handling: 'vendor-no-training' });
  // Not locked by the policy: the person still chooses.
  expect(await options.locator('#role').isDisabled()).toBe(false);
  await screenshot(options, 'options-managed');
  await options.close();
});


