/** The reviewer's side: the extension popup (reviewer role) in a page of its own. */
import { expect } from 'vitest';
import type { Page } from 'playwright-core';
import { screenshot } from './browser.ts';
import type { ExtensionBrowser } from './browser.ts';

export async function openReviewerPopup(reviewer: ExtensionBrowser): Promise<Page> {
  const page = await reviewer.openExtensionPage('popup.html');
  await page.locator('.ag-reviewer').waitFor();
  return page;
}

/**
 * Opens the pending item for `actionKey` (the popup refreshes its list by itself), posts the
 * decision and waits until the sealed receipt is shown with its verification.
 */
export async function decide(
  popup: Page,
  actionKey: string,
  decision: 'approve' | 'reject' | 'escalate',
  grades: Record<string, string> = {},
  shot?: string,
): Promise<void> {
  // The reviewer refreshes (the list also refreshes itself every few seconds).
  await popup.locator('.ag-header button', { hasText: 'Refresh' }).click();
  const item = popup.locator(`.ag-pending-item[data-action-key="${actionKey}"]`);
  await item.waitFor();
  if (shot) await screenshot(popup, shot);
  await item.locator('button.ag-open-review').click();
  const panel = popup.locator('.ag-modal');
  await panel.waitFor();
  expect(await panel.locator('.ag-key').first().textContent()).toBe(actionKey);
  // Why it needs review, from the action's sealed record.
  await panel.locator('.ag-reasons li').first().waitFor();
  for (const [key, grade] of Object.entries(grades)) await panel.locator(`select[name="${key}"]`).selectOption(grade);
  await panel.locator(`button.ag-${decision}`).click();
  const result = panel.locator('.ag-review-result');
  await result.waitFor();
  expect(await result.getAttribute('data-verified'), (await panel.textContent()) ?? '').toBe('true');
  // The status above the result is the decision's, no longer "pending".
  const status = { approve: 'approved', reject: 'rejected', escalate: 'escalated' }[decision];
  expect(await panel.locator('.ag-review-status').textContent()).toBe(status);
}

export async function closeReview(popup: Page): Promise<void> {
  await popup.locator('.ag-modal button.ag-close').click();
  await popup.locator('.ag-modal').waitFor({ state: 'detached' });
}
