/**
 * Sets the extension up the way an admin or employee does: through the real options page. The
 * API key goes into the extension's own page and storage, never into a web page.
 */
import { screenshot } from './browser.ts';
import type { ExtensionBrowser } from './browser.ts';

export interface OptionsInput {
  companionUrl: string;
  apiKey: string;
  role?: 'employee' | 'reviewer';
  reviewerId?: string;
  failMode?: 'closed' | 'open';
  pack?: string;
  actionType?: string;
  fileActionType?: string;
  context?: Record<string, unknown>;
  /** One `<url pattern> <adapter>` per entry. */
  mappings?: string[];
  generic?: { composer: string; send: string; release: string; enterSends?: boolean };
}

/** Fills and saves the options, then runs the connection test; `shot` names a screenshot of the page. */
export async function configureExtension(browser: ExtensionBrowser, input: OptionsInput, shot?: string): Promise<void> {
  const page = await browser.openExtensionPage('options.html');
  await page.locator('#companion-url').fill(input.companionUrl);
  await page.locator('#api-key').fill(input.apiKey);
  await page.locator('#role').selectOption(input.role ?? 'employee');
  await page.locator('#reviewer-id').fill(input.reviewerId ?? '');
  await page.locator('#fail-mode').selectOption(input.failMode ?? 'closed');
  if (input.pack) await page.locator('#gate-pack').fill(input.pack);
  if (input.actionType !== undefined) await page.locator('#gate-action-type').fill(input.actionType);
  if (input.fileActionType !== undefined) await page.locator('#gate-file-action-type').fill(input.fileActionType);
  if (input.context) await page.locator('#gate-context').fill(JSON.stringify(input.context));
  if (input.mappings) await page.locator('#site-mappings').fill(input.mappings.join('\n'));
  if (input.generic) {
    await page.locator('#generic-composer').fill(input.generic.composer);
    await page.locator('#generic-send').fill(input.generic.send);
    await page.locator('#generic-release').fill(input.generic.release);
    await page.locator('#generic-enter-sends').setChecked(input.generic.enterSends ?? false);
  }
  await page.locator('#save').click();
  const status = page.locator('#save-status');
  await status.waitFor();
  if (!(await status.textContent())?.includes('Saved.')) throw new Error(`options not saved: ${await status.textContent()}`);
  await page.locator('#test-connection').click();
  const result = page.locator('#connection-result');
  await result.waitFor();
  if ((await result.getAttribute('data-ok')) !== 'true') throw new Error(`connection test failed: ${await result.textContent()}`);
  if (shot) {
    await page.setViewportSize({ width: 1000, height: 1500 });
    await screenshot(page, shot);
  }
  await page.close();
}
