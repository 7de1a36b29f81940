/**
 * The Action Gate browser extension: WXT, Manifest V3, one source tree for Chrome and
 * Firefox. `npm run build:extension` writes .output/chrome-mv3 (load it unpacked in
 * chrome://extensions); `npm run build:extension:firefox` writes .output/firefox-mv3.
 */
import { defineConfig } from 'wxt';
import { HOST_PERMISSIONS } from './extension/utils/adapters/hosts.ts';
import { noRawHtml } from './scripts/no-raw-html.ts';

const ICONS = { 16: 'icons/icon-16.png', 32: 'icons/icon-32.png', 48: 'icons/icon-48.png', 128: 'icons/icon-128.png' };

export default defineConfig({
  srcDir: 'extension',
  outDir: '.output',
  publicDir: 'extension/public',
  // Explicit imports everywhere: a reader (and tsc on a fresh clone, without .wxt/) sees where
  // every name comes from.
  imports: false,
  manifestVersion: 3,
  manifest: ({ browser }) => ({
    name: 'Action Gate',
    description: 'Holds AI-tool actions until your organisation\'s gate answers, and verifies every sealed decision.',
    permissions: ['storage', 'scripting', 'alarms'],
    // The AI sites' composers and the companion on loopback; anything else (a remote companion,
    // an internal tool) is asked for from the options page when the admin configures it.
    host_permissions: [...HOST_PERMISSIONS],
    optional_host_permissions: ['https://*/*', 'http://*/*'],
    icons: ICONS,
    // Managed deployment: Chrome enterprise policy and Firefox policies.json deliver the
    // organisation's settings into storage.managed under this schema (utils/settings.ts).
    storage: { managed_schema: 'managed-schema.json' },
    action: { default_title: 'Action Gate', default_icon: ICONS },
    // The newest APIs used: Element.checkVisibility({ visibilityProperty }) (Chrome 121,
    // Firefox 122) and world "MAIN" content scripts (Chrome 111, Firefox 128).
    ...(browser === 'firefox' ? {} : { minimum_chrome_version: '121' }),
    ...(browser === 'firefox'
      ? {
          browser_specific_settings: {
            gecko: {
              id: 'action-gate@extension.invalid',
              // data_collection_permissions needs Firefox 140 (142 on Android); world "MAIN"
              // content scripts (128) and checkVisibility options (122) come before.
              strict_min_version: '140.0',
              // Redacted text typed into AI sites goes to the organisation's own gate service.
              data_collection_permissions: { required: ['websiteContent'] },
            },
            gecko_android: { strict_min_version: '142.0' },
          },
        }
      : {}),
  }),
  vite: () => ({
    // Nothing the extension shows may become markup (scripts/no-raw-html.ts).
    plugins: [noRawHtml()],
    // Chromium refuses a content script that is "not UTF-8" when the minifier emits a literal
    // U+FFFF (Dexie's String.fromCharCode(65535)); ASCII output escapes it
    // (shared/notes/extension-testing.md, "Building").
    build: { rolldownOptions: { output: { charset: 'ascii' } } },
    oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  }),
});
