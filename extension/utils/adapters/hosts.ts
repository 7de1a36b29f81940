/**
 * Where the content script runs by default and which companion origins need no extra grant.
 * Plain data with no imports, so wxt.config.ts can read it at build time.
 */

/** The AI web apps the built-in adapters know. */
export const AI_SITE_MATCHES = [
  'https://chatgpt.com/*',
  'https://chat.openai.com/*',
  'https://claude.ai/*',
  'https://gemini.google.com/*',
  'https://copilot.microsoft.com/*',
] as const;

/**
 * Loopback: internal tools and the companion in its default place (`npm start` serves
 * http://127.0.0.1:8787). Chromium match patterns ignore the port, so these cover every port.
 */
export const LOOPBACK_MATCHES = ['http://127.0.0.1/*', 'http://localhost/*'] as const;

/**
 * Where the manifest's content scripts run: only the AI sites an adapter serves. Internal tools
 * (loopback among them) get the content scripts at runtime, and only once an admin mapped them
 * (background/mapped-sites.ts), so an ordinary page on localhost is never touched.
 */
export const CONTENT_SCRIPT_MATCHES: readonly string[] = [...AI_SITE_MATCHES];

/** Hosts granted at install: the AI sites, and loopback for the companion's default place and mapped local tools. */
export const HOST_PERMISSIONS: readonly string[] = [...AI_SITE_MATCHES, ...LOOPBACK_MATCHES];
