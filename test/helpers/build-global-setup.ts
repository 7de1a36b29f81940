/**
 * The build `npm start` runs (dist/), made from the checkout once before any test file of the
 * run reads it: the artifact tests (test/artifact/) and test/companion/service.test.ts start
 * the compiled service, and a build inside one of them would race the others reading dist/.
 * `scripts/build.mjs --if-changed` skips the build when dist/ was already made from these exact
 * sources (its digest in dist/.build-inputs.sha256), as after `npm ci`, whose `prepare` builds.
 *
 * A failed build (say, a type error) does not stop the run: the tests of the build fail with
 * its output (requireBuild() in test/artifact/compiled-service.ts); the others run as usual.
 */
import { spawnSync } from 'node:child_process';
import type { TestProject } from 'vitest/node';
import { REPO_ROOT } from './vectors.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Why `npm run build` failed for this run, or null when dist/ is built from the checkout. */
    distBuildError: string | null;
  }
}

export default function setup(project: TestProject): void {
  const build = spawnSync(process.execPath, ['scripts/build.mjs', '--if-changed'], { cwd: REPO_ROOT, encoding: 'utf8' });
  const failed = build.status !== 0 || build.error !== undefined;
  project.provide('distBuildError', failed ? `npm run build failed (${build.error?.message ?? `exit ${build.status}`}):\n${build.stdout}${build.stderr}`.slice(-4000) : null);
}
