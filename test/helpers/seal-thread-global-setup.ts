/**
 * The sealing thread bundled once per run (./seal-thread-bundle.ts) for a project whose test
 * contexts each start a sealing thread (test/companion/helpers.ts passes it to openDeps):
 * built again before each re-run in watch mode, so a test never runs a thread older than the
 * sources, and removed when the run ends.
 */
import fs from 'node:fs';
import type { TestProject } from 'vitest/node';
import { buildSealThreadBundle } from './seal-thread-bundle.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The bundle's file URL; unset in projects without this setup (threads then start from source). */
    sealThreadEntry: string | undefined;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const built: string[] = [];
  const rebuild = async () => {
    const { entry, dir } = await buildSealThreadBundle();
    for (const old of built.splice(0)) fs.rmSync(old, { recursive: true, force: true });
    built.push(dir);
    project.provide('sealThreadEntry', entry);
  };
  await rebuild();
  project.onTestsRerun(rebuild);
  return () => {
    for (const dir of built.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  };
}
