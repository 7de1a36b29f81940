/**
 * The packages the global setup made and unpacked (`wxt zip`: Chrome first, `wxt zip -b
 * firefox` from the same code), checked as shipped: MV3 manifests with the permissions the extension needs and no more, and every script
 * pure ASCII, since Chromium refuses a content script it does not read as UTF-8
 * (shared/notes/extension-testing.md, "Building").
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../helpers/vectors.ts';
import { extensionPackages } from './harness/packages.ts';

const PACKAGES = extensionPackages();
/** The unpacked package of each build target. */
const DIRS: Record<string, string> = { 'chrome-mv3': PACKAGES.chrome.dir, 'firefox-mv3': PACKAGES.firefox.dir };

function manifest(target: string): any {
  return JSON.parse(fs.readFileSync(path.join(DIRS[target]!, 'manifest.json'), 'utf8'));
}

function scripts(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js')).map((f) => path.join(dir, f));
}

describe.each(['chrome-mv3', 'firefox-mv3'])('%s', (target) => {
  it('the package holds the build, file for file, and nothing else: no source maps, no sources', () => {
    const pkg = target === 'chrome-mv3' ? PACKAGES.chrome : PACKAGES.firefox;
    const build = path.join(REPO_ROOT, '.output', target);
    const built = fs.readdirSync(build, { recursive: true, encoding: 'utf8' }).filter((f) => fs.statSync(path.join(build, f)).isFile()).map((f) => f.split(path.sep).join('/')).sort();
    expect(pkg.files).toEqual(built);
    for (const f of pkg.files) expect(fs.readFileSync(path.join(pkg.dir, f)).equals(fs.readFileSync(path.join(build, f))), f).toBe(true);
    expect(pkg.files.filter((f) => /\.(map|ts|tsx)$/.test(f))).toEqual([]);
    expect(pkg.files).toContain('manifest.json');
  });

  it('writes no raw HTML anywhere: no innerHTML assignment in any script (scripts/no-raw-html.ts)', () => {
    for (const file of scripts(DIRS[target]!)) expect(fs.readFileSync(file, 'utf8'), path.relative(DIRS[target]!, file)).not.toMatch(/\.innerHTML\s*=[^=]/);
  });

  it('is Manifest V3 with storage, scripting and alarms (the reviewer badge), the AI sites and loopback, and optional hosts', () => {
    const m = manifest(target);
    expect(m.manifest_version).toBe(3);
    expect(m.permissions.sort()).toEqual(['alarms', 'scripting', 'storage']);
    expect(m.host_permissions).toEqual(expect.arrayContaining(['https://chatgpt.com/*', 'https://claude.ai/*', 'https://gemini.google.com/*', 'https://copilot.microsoft.com/*', 'http://127.0.0.1/*']));
    expect(m.optional_host_permissions).toEqual(['https://*/*', 'http://*/*']);
    // Content scripts only where an adapter applies: the AI sites. Loopback and internal tools
    // get them at runtime, once an admin maps them (background/mapped-sites.ts).
    const aiSites = ['https://chat.openai.com/*', 'https://chatgpt.com/*', 'https://claude.ai/*', 'https://copilot.microsoft.com/*', 'https://gemini.google.com/*'];
    expect(m.content_scripts).toEqual([
      { matches: aiSites, run_at: 'document_start', js: ['content-scripts/content.js'] },
      { matches: aiSites, run_at: 'document_start', js: ['content-scripts/page-world.js'], world: 'MAIN' },
    ]);
    expect(m.action.default_popup).toBe('popup.html');
    expect(m.options_ui.page).toBe('options.html');
  });

  it('has icons at 16, 32, 48 and 128 px for the manifest and the toolbar action, each of its size', () => {
    const m = manifest(target);
    for (const icons of [m.icons, m.action.default_icon]) {
      expect(Object.keys(icons).sort()).toEqual(['128', '16', '32', '48']);
      for (const [size, file] of Object.entries(icons)) {
        const png = fs.readFileSync(path.join(DIRS[target]!, file as string));
        // PNG IHDR: width and height are the big-endian words at bytes 16 and 20.
        expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([Number(size), Number(size)]);
      }
    }
  });

  it('ships ASCII-only scripts', () => {
    const files = scripts(DIRS[target]!);
    expect(files.length).toBeGreaterThan(3);
    for (const file of files) {
      const bytes = fs.readFileSync(file);
      const offending = bytes.findIndex((b) => b > 0x7f);
      expect(offending, `${path.relative(DIRS[target]!, file)} has a non-ASCII byte at ${offending}`).toBe(-1);
    }
  });
});

it('Chrome runs the background as a service worker; Firefox as an event page with a gecko id', () => {
  expect(manifest('chrome-mv3').background).toEqual({ service_worker: 'background.js' });
  const firefox = manifest('firefox-mv3');
  expect(firefox.background).toEqual({ scripts: ['background.js'] });
  expect(firefox.browser_specific_settings.gecko.id).toBe('action-gate@extension.invalid');
});

it('declares the minimum browser versions of what it uses (checkVisibility options: Chrome 121; data_collection_permissions: Firefox 140, Android 142)', () => {
  expect(manifest('chrome-mv3').minimum_chrome_version).toBe('121');
  const gecko = manifest('firefox-mv3').browser_specific_settings;
  expect(gecko.gecko.strict_min_version).toBe('140.0');
  expect(gecko.gecko_android.strict_min_version).toBe('142.0');
  expect(manifest('chrome-mv3').storage).toEqual({ managed_schema: 'managed-schema.json' });
});

it('the Firefox package passes web-ext lint (Mozilla addons-linter) with no errors and no warnings', () => {
  const out = execFileSync(path.join(REPO_ROOT, 'node_modules', '.bin', 'web-ext'), ['lint', '--source-dir', PACKAGES.firefox.dir, '--output', 'json', '--no-input'], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  const report = JSON.parse(out) as { errors: unknown[]; warnings: { code: string; file: string }[]; notices: unknown[] };
  expect(report.errors).toEqual([]);
  // Preact's raw-HTML branch, the one thing the linter used to flag, is removed at build time
  // (scripts/no-raw-html.ts).
  expect(report.warnings.map((w) => `${w.code} ${w.file}`)).toEqual([]);
}, 60_000);
