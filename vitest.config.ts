import { defineConfig } from 'vitest/config';
import { WxtVitest } from 'wxt/testing/vitest-plugin';

// Real crypto, real SQLite, real processes and a real browser: give slow CI machines room.
const timeouts = { testTimeout: 30_000, hookTimeout: 60_000 };

export default defineConfig({
  test: {
    projects: [
      {
        test: { name: 'main', include: ['test/**/*.test.ts'], exclude: ['test/extension/**', 'test/console/**'], ...timeouts },
      },
      {
        // The tenant console in real Chromium against the companion; each file builds the console.
        // A browser under a loaded CI machine takes its time: polls wait up to 10 s.
        test: { name: 'console', include: ['test/console/**/*.test.ts'], expect: { poll: { timeout: 10_000 } }, ...timeouts },
      },
      {
        // Extension unit tests: WXT's fake browser stands in for `browser` (wxt/testing).
        plugins: [WxtVitest()],
        test: { name: 'extension', include: ['test/extension/**/*.test.ts'], exclude: ['test/extension/e2e/**'], ...timeouts },
      },
      {
        // Real Chromium with the built extension against a real companion; the global setup
        // builds the extension once per run.
        test: {
          name: 'extension-e2e',
          include: ['test/extension/e2e/**/*.test.ts'],
          globalSetup: ['test/extension/e2e/global-setup.ts'],
          ...timeouts,
        },
      },
    ],
  },
});
