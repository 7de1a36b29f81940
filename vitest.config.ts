import { defineConfig } from 'vitest/config';
import { WxtVitest } from 'wxt/testing/vitest-plugin';

// Real crypto, real SQLite, real processes and a real browser: give slow CI machines room.
const timeouts = { testTimeout: 30_000, hookTimeout: 60_000 };

/**
 * `npm run test:quick` (`vitest run --project main --mode quick`), for the edit loop: the main
 * project without the files that test the build in dist/ or drive whole companion processes
 * through crashes, outages and loads, or whose subject is PostgreSQL itself. `npm test` runs
 * them all, as CI does.
 */
const LEFT_OUT_OF_QUICK = [
  'test/artifact/**', // the compiled service started as npm start starts it
  'test/companion/service.test.ts', // npm start, and the README's session against it
  'test/cli/svc-admin.test.ts', // backup and restore of a compiled service under load
  'test/companion/upgrades.test.ts', // earlier releases' databases opened by the build
  'test/companion/at-rest.test.ts', // file modes of the data directory, on the compiled service
  'test/companion/anchoring-process.test.ts', // kill -9 during an epoch close of 4,000 tenants
  'test/companion/database-outage.test.ts', // PostgreSQL stopped, cut and read-only under load
  'test/companion/postgres-*.test.ts', // the PostgreSQL engine itself and its scale-out
  'test/companion/anchoring-independent-postgres.test.ts', // timestamps and witnesses on PostgreSQL, kill -9
  'test/companion/webhooks-crash.test.ts', // deliveries across crashed processes
  'test/companion/seal-thread.test.ts', // sealing threads from source, killed, and kill -9
  // A companion process from source (node --import tsx companion/main.ts) in every case:
  'test/companion/server.test.ts', // the entry point: restarts, keys, signals
  'test/companion/http-flow.test.ts', // the README's newcomer path, and a hard kill
  'test/companion/hostile-process.test.ts', // hostile bytes against the node adapter
  'test/cli/export-cli.test.ts', // the export CLI against a running companion
  'test/cli/verify-proofs-cli.test.ts', // the verifier's anchoring commands against one
  'test/companion/settings-fail-fast.test.ts', // a process started with each bad setting
];

export default defineConfig(({ mode }) => ({
  test: {
    projects: [
      {
        // The global setup builds dist/ once (when the sources changed) for the tests of the build.
        test: {
          name: 'main',
          include: ['test/**/*.test.ts'],
          exclude: ['test/extension/**', 'test/console/**', ...(mode === 'quick' ? LEFT_OUT_OF_QUICK : [])],
          // None of the quick files reads dist/.
          globalSetup: mode === 'quick' ? [] : ['test/helpers/build-global-setup.ts'],
          // Quick runs trade isolation for time: on two cores vitest's default is one worker
          // (cores - 1), and each file re-imported the whole app, about a third of the run. Two
          // workers that keep their module cache across files halve it; the files share no
          // module state (no mocks, unique environment names). `npm test` keeps both defaults.
          ...(mode === 'quick' ? { isolate: false, maxWorkers: 2 } : {}),
          ...timeouts,
        },
      },
      {
        // The API test files, run a second time on PostgreSQL (test/companion/helpers.ts: a
        // database per test context on one server for the run). They reach the database only
        // through the API, the capability stores and the context's engine-neutral sql(), dump()
        // and storedBytes(). Left out: the files about the SQLite engine itself (its file, WAL,
        // checkpoints, read-only switch, the database plan). The store contract tests
        // (test/companion/store-contract/) hold every store to both engines.
        test: {
          name: 'api-on-postgres',
          include: [
            'test/companion/law-mirror.test.ts',
            'test/companion/law-engine.test.ts',
            'test/companion/strict-json.test.ts',
            'test/companion/vertical-rules.test.ts',
            'test/companion/packs.test.ts',
            'test/companion/request-bounds.test.ts',
            'test/companion/exports-records.test.ts',
            'test/companion/gate.test.ts',
            'test/companion/records.test.ts',
            'test/companion/hot-path.test.ts',
            'test/companion/evidence.test.ts',
            'test/companion/evidence-packets.test.ts',
            'test/companion/idempotency.test.ts',
            'test/companion/policy.test.ts',
            'test/companion/account-sessions.test.ts',
            'test/companion/principals.test.ts',
            'test/companion/device-grant.test.ts',
            'test/companion/oidc-sign-in.test.ts',
            'test/companion/api-keys.test.ts',
            'test/companion/reviews.test.ts',
            'test/companion/review-rules.test.ts',
            'test/companion/review-principals.test.ts',
            'test/companion/account.test.ts',
            'test/companion/account-upgrade.test.ts',
            'test/companion/account-stripe.test.ts',
            'test/companion/errors.test.ts',
            'test/companion/hostile-input.test.ts',
            'test/companion/exports-documents.test.ts',
            'test/companion/anchoring.test.ts',
            'test/companion/epoch-timestamps.test.ts',
            'test/companion/witness.test.ts',
            'test/companion/routing-dispatch.test.ts',
            'test/companion/routing-callbacks.test.ts',
            'test/companion/credentials.test.ts',
            'test/companion/workers.test.ts',
            'test/companion/console-api.test.ts',
            'test/companion/openapi.test.ts',
            'test/companion/signer.test.ts',
            'test/companion/signer-plan.test.ts',
            'test/companion/signer-kms.test.ts',
            'test/companion/signer-pkcs11.test.ts',
            'test/companion/webhooks.test.ts',
            'test/companion/store-encryption.test.ts',
            'test/companion/routing-ticks.test.ts',
          ],
          env: { SVC_TEST_DATABASE: 'postgres' },
          globalSetup: ['test/helpers/postgres-global-setup.ts'],
          ...timeouts,
        },
      },
      {
        // The API test files about sealing, run a second time with the sealing thread on
        // (companion/seal-thread/), as the service runs by default; the main project seals on
        // the request thread, since a thread takes about a second to start from source. Here
        // each thread starts from a bundle of the same sources, built once by the global setup.
        test: {
          name: 'api-on-seal-thread',
          include: [
            'test/companion/gate.test.ts',
            'test/companion/records.test.ts',
            'test/companion/hot-path.test.ts',
            'test/companion/evidence.test.ts',
            'test/companion/evidence-packets.test.ts',
            'test/companion/idempotency.test.ts',
            'test/companion/reviews.test.ts',
            'test/companion/anchoring.test.ts',
            'test/companion/webhooks.test.ts',
            'test/companion/routing-dispatch.test.ts',
            'test/companion/errors.test.ts',
            'test/companion/hostile-input.test.ts',
            'test/companion/workers.test.ts',
          ],
          env: { SVC_TEST_SEAL_THREAD: '1' },
          globalSetup: ['test/helpers/seal-thread-global-setup.ts'],
          ...timeouts,
        },
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
        // Real Chromium and Firefox ESR with the packaged extension against a real companion;
        // the global setup zips it as shipped (wxt zip) and unpacks it once per run.
        test: {
          name: 'extension-e2e',
          include: ['test/extension/e2e/**/*.test.ts'],
          globalSetup: ['test/extension/e2e/global-setup.ts'],
          ...timeouts,
        },
      },
    ],
  },
}));
