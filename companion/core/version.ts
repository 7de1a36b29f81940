/**
 * The companion's release version: package.json's `version`, found by walking up from this
 * file, so the source (companion/core/) and the build (dist/companion/core/) read the same one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findPackageVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'action-gate' && typeof pkg.version === 'string') return pkg.version;
    }
    const parent = path.dirname(dir);
    if (parent === dir) return '0.0.0-unknown';
    dir = parent;
  }
}

export const SERVICE_VERSION = findPackageVersion();
