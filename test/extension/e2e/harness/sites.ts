/** The fixture pages and how each adapter is mapped to them (the admin's site mappings). */
import type { Page } from 'playwright-core';

export const SITES = ['chatgpt', 'claude', 'gemini', 'copilot', 'generic'] as const;
export type Site = (typeof SITES)[number];

/** The composer of each fixture page (what a person types into). */
export const COMPOSER: Record<Site, string> = {
  chatgpt: '#prompt-textarea',
  claude: 'div.ProseMirror[contenteditable="true"]',
  gemini: 'rich-textarea .ql-editor',
  copilot: 'textarea#userInput',
  generic: 'textarea.ask-box',
};

export const SEND_BUTTON: Record<Site, string> = {
  chatgpt: 'button[data-testid="send-button"]',
  claude: 'button[aria-label="Send message"]',
  gemini: 'button.send-button',
  copilot: 'button[data-testid="submit-button"]',
  generic: 'button.ask-submit',
};

/**
 * The pages built like today's AI sites rather than our tidy fixtures, and the adapter whose
 * selectors each one uses (test/extension/fixtures/<page>.html).
 */
export const WILD_PAGES = {
  'chatgpt-fallback': 'chatgpt',
  'react-recreate': 'copilot',
  'iframe-composer': 'claude',
  'pointerdown-send': 'gemini',
  'file-attach': 'chatgpt',
} as const satisfies Record<string, Site>;
export type WildPage = keyof typeof WILD_PAGES;

/** Every fixture page mapped to its adapter, as an admin would map an internal host. */
export function fixtureMappings(fixturesUrl: string): string[] {
  return [
    ...SITES.map((s) => `${fixturesUrl}/${s}.html* ${s}`),
    ...Object.entries(WILD_PAGES).map(([page, site]) => `${fixturesUrl}/${page}.html* ${site}`),
  ];
}

export const GENERIC_SELECTORS = { composer: 'textarea.ask-box', send: 'button.ask-submit', release: 'request-submit, click-send' };

/** Opens a fixture page and waits until the content script has its adapter. */
export async function openSite(page: Page, fixturesUrl: string, site: Site): Promise<void> {
  await page.goto(`${fixturesUrl}/${site}.html`);
  await page.locator(`html[data-action-gate="${site}"]`).waitFor({ state: 'attached' });
}

export function sent(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { __sent: string[] }).__sent);
}

export async function typeInto(page: Page, site: Site, text: string): Promise<void> {
  const composer = page.locator(COMPOSER[site]);
  await composer.click();
  await composer.fill(text);
}

export function composerText(page: Page, site: Site): Promise<string> {
  return page.locator(COMPOSER[site]).evaluate((el) => (el instanceof HTMLTextAreaElement ? el.value : (el as HTMLElement).innerText).trim());
}
