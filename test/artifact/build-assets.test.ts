/**
 * The build ships every file its code reads at run time. The sources are scanned for what they
 * reach through import.meta.url (test/artifact/runtime-asset-scan.ts); each such file must be
 * compiled by tsc or declared in scripts/runtime-assets.mjs, which `npm run build` copies; and
 * dist/, built from this checkout by the run's global setup, must hold every one of them, byte
 * for byte. A file forgotten here is a 500 under `npm start` that tests of the sources never see.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_ASSETS, COPIED_ASSETS, OTHER_META_URL_USES, SOURCE_ONLY } from '../../scripts/runtime-assets.mjs';
import { REPO_ROOT } from '../helpers/vectors.ts';
import { requireBuild } from './compiled-service.ts';
import { checkBuild, scanSources, undeclaredReferences } from './runtime-asset-scan.ts';

const DIST = path.join(REPO_ROOT, 'dist');
const temps: string[] = [];
afterEach(() => {
  for (const d of temps.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-assets-'));
  temps.push(d);
  return d;
}

const scan = scanSources(REPO_ROOT);

describe('the runtime assets the sources read', () => {
  it('finds the files the sources load beside themselves (export schemas, migrations, worker entries)', () => {
    const targets = scan.references.map((r) => `${r.file} -> ${r.target}`);
    expect(targets).toEqual(
      expect.arrayContaining([
        'companion/exports/schema-profiles.ts -> companion/exports/schemas',
        'companion/core/migrations.ts -> companion/migrations',
        'companion/core/signers/aws-kms.ts -> companion/core/signers/aws-kms-worker.mjs',
        'companion/seal-thread/threaded-sealer.ts -> companion/seal-thread/thread.js',
        'companion/seal-thread/threaded-sealer.ts -> companion/seal-thread/thread-from-source.mjs',
      ]),
    );
  });

  it('each is compiled by tsc, declared in scripts/runtime-assets.mjs, or declared as loaded from source only', () => {
    expect(undeclaredReferences(REPO_ROOT, scan.references)).toEqual([]);
  });

  it('flags a file a module starts to read beside itself that nobody declared', () => {
    const root = tempDir();
    fs.mkdirSync(path.join(root, 'companion', 'reports'), { recursive: true });
    fs.writeFileSync(path.join(root, 'companion', 'reports', 'template.ts'), "export const T = new URL('./template.html', import.meta.url);\n");
    fs.writeFileSync(path.join(root, 'companion', 'reports', 'template.html'), '<p></p>\n');
    const { references } = scanSources(root, ['companion/reports/template.ts']);
    expect(undeclaredReferences(root, references)).toEqual([{ file: 'companion/reports/template.ts', line: 1, target: 'companion/reports/template.html' }]);
  });

  it('every other use of import.meta is declared with what it reaches, and every declaration is still used', () => {
    expect([...scan.otherUses.keys()].sort()).toEqual(OTHER_META_URL_USES.map((u) => u.file).sort());
    const assetPaths = [...COPIED_ASSETS, ...BUILT_ASSETS].map((a) => a.path);
    for (const use of OTHER_META_URL_USES) if (use.reaches !== null) expect(assetPaths, use.file).toContain(use.reaches);
  });

  it('every declared asset exists and is read by the module it names', () => {
    for (const asset of [...COPIED_ASSETS, ...SOURCE_ONLY]) expect(fs.existsSync(path.join(REPO_ROOT, asset.path)), asset.path).toBe(true);
    for (const asset of [...COPIED_ASSETS, ...BUILT_ASSETS]) {
      const reached =
        scan.references.some((r) => r.file === asset.readBy && (r.target === asset.path || r.target.startsWith(`${asset.path}/`))) ||
        OTHER_META_URL_USES.some((u) => u.file === asset.readBy && u.reaches === asset.path);
      expect(reached, `${asset.path} read by ${asset.readBy}`).toBe(true);
    }
  });
});

describe('dist/, as `npm run build` makes it', () => {
  beforeAll(requireBuild);

  it('holds every runtime asset, byte for byte, and every module a URL names', () => {
    expect(checkBuild(REPO_ROOT, DIST, scan.references)).toEqual([]);
  });

  it('is found wanting when companion/exports/schemas is missing from it', () => {
    const copy = tempDir();
    fs.cpSync(DIST, copy, { recursive: true });
    fs.rmSync(path.join(copy, 'companion', 'exports', 'schemas'), { recursive: true, force: true });
    const problems = checkBuild(REPO_ROOT, copy, scan.references);
    expect(problems).toContain('dist/companion/exports/schemas/dcat-us-1.1/catalog.json is missing (read by companion/exports/schema-profiles.ts)');
    expect(problems.filter((p) => p.startsWith('dist/companion/exports/schemas is missing (companion/exports/schema-profiles.ts:'))).toHaveLength(1);
  });
});
