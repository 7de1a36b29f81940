/**
 * Files are actions too, in real Chromium against a real companion: a file attached through the
 * picker, dropped or pasted onto a gated page is held before the page receives it, gated as its
 * own action type with only metadata and SHA-256 commitments, and handed to the page only when
 * the gate allows it. Here the tenant allows prompts but the file action type is one the law
 * pack blocks (privileged material shared with an external tool), then one it allows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupCompanions, start, tempDataDir } from '../../helpers/companion-process.ts';
import type { Companion } from '../../helpers/companion-process.ts';
import { launchWithExtension, screenshot } from './harness/browser.ts';
import type { ExtensionBrowser } from './harness/browser.ts';
import { startFixtureServer } from './harness/fixture-server.ts';
import type { FixtureServer } from './harness/fixture-server.ts';
import { configureExtension } from './harness/options-page.ts';
import { fixtureMappings } from './harness/sites.ts';
import { getJson, putPolicy, signUp } from './harness/tenant.ts';

const CONTEXT = { matter_band: 'moderate', doctrine_anchor: 'competence', jurisdiction: 'US', tool_data_handling: 'vendor-no-training' };
const SECRET_BYTES = 'CONFIDENTIAL: Acme settlement terms, do not share.';

let companion: Companion;
let fixtures: FixtureServer;
let browser: ExtensionBrowser;
let apiKey: string;

async function configure(fileActionType: string): Promise<void> {
  await configureExtension(browser, { companionUrl: companion.url, apiKey, pack: 'law', actionType: 'proposed-action', fileActionType, context: CONTEXT, mappings: fixtureMappings(fixtures.url) });
}

beforeAll(async () => {
  [companion, fixtures] = await Promise.all([start(tempDataDir()), startFixtureServer()]);
  apiKey = await signUp(companion.url, 'files@firm.example');
  await putPolicy(companion.url, apiKey, 'law', { allow_action_types: ['proposed-action', 'legal-research-memo'] });
  browser = await launchWithExtension('files');
});

afterAll(async () => {
  await browser?.close();
  await fixtures?.close();
  cleanupCompanions();
});

async function openAttachPage() {
  const page = await browser.context.newPage();
  await page.goto(`${fixtures.url}/file-attach.html`);
  await page.locator('html[data-action-gate="chatgpt"]').waitFor({ state: 'attached' });
  return page;
}

const uploads = (page: import('playwright-core').Page) => page.evaluate(() => (window as any).__uploads as string[]);

describe('a file action type the pack blocks', () => {
  beforeAll(() => configure('privileged-material-external-share'));

  it('a file from the picker never reaches the page: blocked, the input emptied, only commitments sent', async () => {
    const page = await openAttachPage();
    await page.locator('#upload-files').setInputFiles({ name: 'acme-settlement.txt', mimeType: 'text/plain', buffer: Buffer.from(SECRET_BYTES) });
    const blocked = page.locator('[data-kind="blocked"]');
    await blocked.waitFor();
    expect(await uploads(page)).toEqual([]);
    expect(await page.locator('#upload-files').evaluate((el) => (el as HTMLInputElement).files?.length ?? 0)).toBe(0);
    expect(await blocked.locator('.ag-reasons li').first().getAttribute('data-rule')).toMatch(/privileged-material-external-share/);
    await screenshot(page, 'files-blocked');

    // The sealed record holds the decision for the attachment; nothing of the file's name or bytes.
    const key = (await blocked.locator('.ag-key').textContent())!;
    const record = await getJson(companion.url, apiKey, `/v1/records/${encodeURIComponent(key)}`);
    expect(record).toMatchObject({ decision: 'blocked', action_type: 'privileged-material-external-share' });
    expect(JSON.stringify(record)).not.toMatch(/acme-settlement|CONFIDENTIAL/);
    await page.close();
  });

  it('a dropped file is held and blocked the same way', async () => {
    const page = await openAttachPage();
    await page.evaluate((text) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], 'dropped.txt', { type: 'text/plain' }));
      document.getElementById('drop')!.dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt }));
    }, SECRET_BYTES);
    await page.locator('[data-kind="blocked"]').waitFor();
    expect(await uploads(page)).toEqual([]);
    await page.close();
  });
});

describe('a file action type the tenant allows', () => {
  beforeAll(() => configure('legal-research-memo'));

  it('picker, drop and paste: each file reaches the page once, after the gate allowed it', async () => {
    const page = await openAttachPage();
    await page.locator('#upload-files').setInputFiles({ name: 'memo.txt', mimeType: 'text/plain', buffer: Buffer.from('Research notes.') });
    await page.waitForFunction(() => (window as any).__uploads.length === 1);
    await page.evaluate(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['x'.repeat(10)], 'dropped.txt', { type: 'text/plain' }));
      document.getElementById('drop')!.dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt }));
    });
    await page.waitForFunction(() => (window as any).__uploads.length === 2);
    await page.evaluate(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['y'.repeat(7)], 'pasted.png', { type: 'image/png' }));
      document.getElementById('prompt-textarea')!.dispatchEvent(new ClipboardEvent('paste', { bubbles: true, cancelable: true, clipboardData: dt }));
    });
    await page.waitForFunction(() => (window as any).__uploads.length === 3);
    expect(await uploads(page)).toEqual(['memo.txt:15', 'dropped.txt:10', 'pasted.png:7']);
    await page.close();
  });
});

describe('a paste of text the redaction rules flag (default rules: keys blocked, emails warned)', () => {
  const pasteText = (page: import('playwright-core').Page, text: string) =>
    page.evaluate((t) => {
      const composer = document.getElementById('prompt-textarea')!;
      composer.focus();
      const dt = new DataTransfer();
      dt.setData('text/plain', t);
      composer.dispatchEvent(new ClipboardEvent('paste', { bubbles: true, cancelable: true, clipboardData: dt }));
    }, text);

  it('shows the flagged spans in place with their reason, and pastes the redacted form when asked', async () => {
    const page = await openAttachPage();
    await pasteText(page, 'Please write to ada@example.com about it.');
    const dialog = page.locator('[data-kind="paste"]');
    await dialog.waitFor();
    expect(await dialog.locator('mark.ag-flag[data-kind="EMAIL"]').textContent()).toContain('ada@example.com');
    expect(await dialog.locator('.ag-flag-reason').textContent()).toContain('an email address');
    await screenshot(page, 'paste-flagged');
    await dialog.locator('button.ag-paste-redacted').click();
    await expect.poll(() => page.locator('#prompt-textarea').innerText()).toContain('Please write to [EMAIL] about it.');
    await page.close();
  });

  it('a private key is not pasted at all', async () => {
    const page = await openAttachPage();
    await pasteText(page, 'key -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE\n-----END OPENSSH PRIVATE KEY-----');
    const dialog = page.locator('[data-kind="paste"]');
    await dialog.waitFor();
    expect(await dialog.locator('button.ag-paste-redacted').count()).toBe(0);
    expect(await dialog.locator('button.ag-paste-original').count()).toBe(0);
    await dialog.locator('button.ag-close').click();
    expect((await page.locator('#prompt-textarea').innerText()).trim()).toBe('');
    await page.close();
  });
});
