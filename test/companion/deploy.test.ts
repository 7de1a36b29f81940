/**
 * The service artefacts an admin deploys: the Dockerfile (linted with dockerfile-utils, and its
 * promises checked: multi-stage, non-root, data volume, HEALTHCHECK on /healthz) and the
 * example systemd unit (it starts the built entry point and outlasts the shutdown grace).
 */
import fs from 'node:fs';
import path from 'node:path';
import { validate } from 'dockerfile-utils';
import { describe, expect, it } from 'vitest';
import { CONFIG_DEFAULTS } from '../../companion/core/config.ts';
import { startNodeFlags } from '../../scripts/start-command.mjs';
import { REPO_ROOT } from '../helpers/vectors.ts';

const START_NODE_FLAGS = startNodeFlags();

const read = (file: string) => fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');

/** Instructions with their arguments, continuation lines joined, comments dropped. */
function instructions(dockerfile: string): { op: string; args: string }[] {
  return dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => ({ op: l.split(/\s+/)[0]!.toUpperCase(), args: l.slice(l.split(/\s+/)[0]!.length).trim() }));
}

describe('Dockerfile', () => {
  const text = read('Dockerfile');
  const ops = instructions(text);

  it('has no lint diagnostics and no syntax directive (the legacy builder must not pull a frontend)', () => {
    expect(validate(text)).toEqual([]);
    expect(text).not.toMatch(/^#\s*syntax=/m);
  });

  it('builds in one stage and runs from another, as a non-root user, with a data volume and a health check', () => {
    const froms = ops.filter((i) => i.op === 'FROM');
    expect(froms).toHaveLength(2);
    expect(froms[0]!.args).toMatch(/ AS build$/);
    const runtime = ops.slice(ops.indexOf(froms[1]!));
    // The native addon is built where the compilers are, never in the runtime image.
    expect(ops.slice(0, ops.indexOf(froms[1]!)).some((i) => i.op === 'RUN' && /npm rebuild better-sqlite3/.test(i.args))).toBe(true);
    // `npm ci --ignore-scripts` skips postinstall, so the image applies the dependency fixes itself.
    expect(ops.slice(0, ops.indexOf(froms[1]!)).some((i) => i.op === 'RUN' && /node scripts\/patch-dependencies\.mjs/.test(i.args))).toBe(true);
    expect(runtime.some((i) => i.op === 'RUN' && /apt-get|g\+\+/.test(i.args))).toBe(false);
    expect(runtime.find((i) => i.op === 'USER')?.args).toBe('node');
    expect(runtime.find((i) => i.op === 'VOLUME')?.args).toBe('["/data"]');
    expect(runtime.find((i) => i.op === 'ENV')?.args).toMatch(/SVC_DATA_DIR=\/data/);
    const health = runtime.find((i) => i.op === 'HEALTHCHECK')?.args ?? '';
    expect(health).toMatch(/--interval=\d+s/);
    expect(health).toMatch(/\/healthz/);
    expect(runtime.at(-1)).toEqual({ op: 'CMD', args: JSON.stringify(['node', ...START_NODE_FLAGS, 'dist/companion/main.js']).replaceAll(',', ', ') });
  });

  it('builds every production dependency that has an install script (npm ci --ignore-scripts skipped them all)', () => {
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { dev?: boolean; hasInstallScript?: boolean }> };
    const needed = Object.entries(lock.packages)
      .filter(([at, p]) => at !== '' && p.hasInstallScript && !p.dev)
      .map(([at]) => at.slice(at.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(needed).toContain('better-sqlite3');
    const rebuild = ops.find((i) => i.op === 'RUN' && /npm rebuild /.test(i.args))!.args;
    const rebuilt = /npm rebuild ((?:[@\w./-]+ ?)+)/.exec(rebuild)![1]!.trim().split(' ');
    expect(rebuilt.sort()).toEqual([...new Set(needed)].sort());
  });

  it('copies only paths that exist in the repository', () => {
    for (const i of ops.filter((x) => x.op === 'COPY' && !x.args.startsWith('--from'))) {
      for (const source of i.args.split(/\s+/).slice(0, -1)) expect(fs.existsSync(path.join(REPO_ROOT, source)), source).toBe(true);
    }
  });
});

describe('systemd unit', () => {
  const unit = read('deploy/action-gate.service');
  const value = (key: string) => unit.match(new RegExp(`^${key}=(.*)$`, 'm'))?.[1];

  it('starts the built entry point with plain node and gives shutdown longer than the grace period', () => {
    expect(value('ExecStart')).toBe(['/usr/bin/node', ...START_NODE_FLAGS, 'dist/companion/main.js'].join(' '));
    expect(value('KillSignal')).toBe('SIGTERM');
    expect(Number(value('TimeoutStopSec')) * 1000).toBeGreaterThan(CONFIG_DEFAULTS.shutdownGraceMs);
    expect(unit).toMatch(/^Environment=SVC_DATA_DIR=\/var\/lib\/action-gate$/m);
    expect(value('StateDirectory')).toBe('action-gate');
    expect(value('DynamicUser')).toBe('yes');
  });
});
