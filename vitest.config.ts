import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Real crypto, real SQLite and real processes: give slow CI machines room.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
