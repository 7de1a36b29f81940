/**
 * scripts/patch-dependencies.mjs: the fixes to installed dependencies that their released
 * versions lack (the PostgreSQL driver's write after a closed connection, which
 * database-outage.test.ts shows ending the process without it). They are in the installed tree
 * (postinstall ran), they apply to the released text exactly once, and an upgrade that changes
 * the version or the text stops the install instead of dropping the fix.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyFixes, FIXES } from '../../scripts/patch-dependencies.mjs';
import { REPO_ROOT } from '../helpers/vectors.ts';
import { makeTempDir } from './helpers.ts';

const NODE_MODULES = path.join(REPO_ROOT, 'node_modules');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A node_modules with each fixed package's package.json and file as released: the fixes undone. */
function releasedTree(): string {
  const root = makeTempDir('svc-deps-');
  dirs.push(root);
  for (const fix of FIXES) {
    const dir = path.join(root, fix.package);
    fs.mkdirSync(path.dirname(path.join(dir, fix.file)), { recursive: true });
    fs.copyFileSync(path.join(NODE_MODULES, fix.package, 'package.json'), path.join(dir, 'package.json'));
    let text = fs.readFileSync(path.join(NODE_MODULES, fix.package, fix.file), 'utf8');
    for (const edit of fix.edits) text = text.replace(edit.replace, edit.find);
    fs.writeFileSync(path.join(dir, fix.file), text);
  }
  return root;
}

describe('dependency fixes', () => {
  it('are in the installed tree already', () => {
    expect(applyFixes(NODE_MODULES)).toEqual([]);
  });

  it('apply to the released text, giving the installed file, and a second run changes nothing', () => {
    const root = releasedTree();
    for (const fix of FIXES) expect(fs.readFileSync(path.join(root, fix.package, fix.file), 'utf8')).not.toContain(fix.edits[0]!.replace);
    expect(applyFixes(root)).toHaveLength(FIXES.length);
    for (const fix of FIXES) {
      expect(fs.readFileSync(path.join(root, fix.package, fix.file), 'utf8')).toBe(fs.readFileSync(path.join(NODE_MODULES, fix.package, fix.file), 'utf8'));
    }
    expect(applyFixes(root)).toEqual([]);
  });

  it('stop the install when the version is not the one a fix is for', () => {
    const root = releasedTree();
    const fix = FIXES[0]!;
    const manifest = path.join(root, fix.package, 'package.json');
    fs.writeFileSync(manifest, JSON.stringify({ ...JSON.parse(fs.readFileSync(manifest, 'utf8')), version: '99.0.0' }));
    expect(() => applyFixes(root)).toThrow(`${fix.package} is 99.0.0, but scripts/patch-dependencies.mjs has a fix for ${fix.version}`);
  });

  it('stop the install when the text to fix is not there', () => {
    const root = releasedTree();
    const fix = FIXES[0]!;
    const file = path.join(root, fix.package, fix.file);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(fix.edits[0]!.find, '// rewritten upstream\n'));
    expect(() => applyFixes(root)).toThrow('the text to fix is not found exactly once');
  });
});
