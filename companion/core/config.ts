/**
 * Companion configuration from the environment (DESIGN.md §2), with `--flag` twins for the
 * values an operator most often overrides on the command line. Parsing is pure: no I/O, so a
 * test can build any configuration from plain objects. Every invalid value is reported at
 * once, then startup stops: a half-understood configuration never serves requests.
 */
import path from 'node:path';

export interface Config {
  /** TCP port; 0 asks the OS for a free one (tests). */
  port: number;
  host: string;
  /** Absolute path of the data directory (SQLite file, production signing key). */
  dataDir: string;
  /** Roll-up epoch cadence (DESIGN.md §4); hourly by default. */
  epochSeconds: number;
  /** Operator setting: allow http://127.0.0.1 webhook receivers (interface-spec Events 7). */
  webhookAllowLoopback: boolean;
  /** The explicit external-send flag: without it route dispatches are never posted out. */
  outboxExternalSend: boolean;
  /** Largest request body accepted; bigger bodies answer 413 problem+json. */
  maxBodyBytes: number;
  /** How long shutdown waits for in-flight requests before closing their connections. */
  shutdownGraceMs: number;
  /** Review window: a paused action unanswered this long expires and fails closed (reviews/state.ts). */
  reviewTimeoutSeconds: number;
  /** How long an idempotency key replays its first answer; after it the key is forgotten (idempotency/). */
  idempotencyTtlSeconds: number;
}

export const CONFIG_DEFAULTS = {
  port: 8787,
  host: '127.0.0.1',
  dataDir: './.svc-data',
  epochSeconds: 3600,
  maxBodyBytes: 1024 * 1024,
  shutdownGraceMs: 10_000,
  reviewTimeoutSeconds: 72 * 3600,
  idempotencyTtlSeconds: 24 * 3600,
} as const;

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Command-line twins of environment variables. */
const FLAGS: Record<string, string> = {
  '--port': 'PORT',
  '--host': 'HOST',
  '--data-dir': 'SVC_DATA_DIR',
};

export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  argv: readonly string[] = process.argv.slice(2),
  cwd: string = process.cwd(),
): Config {
  const problems: string[] = [];
  const merged: Record<string, string | undefined> = { ...env, ...parseFlags(argv, problems) };

  const config: Config = {
    port: integer(merged, 'PORT', CONFIG_DEFAULTS.port, 0, 65_535, problems),
    host: host(merged, problems),
    dataDir: path.resolve(cwd, nonEmpty(merged, 'SVC_DATA_DIR', CONFIG_DEFAULTS.dataDir, problems)),
    epochSeconds: integer(merged, 'SVC_EPOCH_SECONDS', CONFIG_DEFAULTS.epochSeconds, 1, 86_400, problems),
    webhookAllowLoopback: flag(merged, 'SVC_WEBHOOK_ALLOW_LOOPBACK', problems),
    outboxExternalSend: flag(merged, 'SVC_OUTBOX_EXTERNAL_SEND', problems),
    maxBodyBytes: integer(merged, 'SVC_MAX_BODY_BYTES', CONFIG_DEFAULTS.maxBodyBytes, 1024, 64 * 1024 * 1024, problems),
    shutdownGraceMs: integer(merged, 'SVC_SHUTDOWN_GRACE_MS', CONFIG_DEFAULTS.shutdownGraceMs, 0, 600_000, problems),
    reviewTimeoutSeconds: integer(merged, 'SVC_REVIEW_TIMEOUT_SECONDS', CONFIG_DEFAULTS.reviewTimeoutSeconds, 60, 365 * 86_400, problems),
    idempotencyTtlSeconds: integer(merged, 'SVC_IDEMPOTENCY_TTL_SECONDS', CONFIG_DEFAULTS.idempotencyTtlSeconds, 60, 365 * 86_400, problems),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

function parseFlags(argv: readonly string[], problems: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg : arg.slice(0, eq);
    const envName = FLAGS[name];
    if (envName === undefined) {
      problems.push(`unknown argument ${JSON.stringify(arg)}; expected one of ${Object.keys(FLAGS).join(', ')}`);
      continue;
    }
    const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
    if (value === undefined) {
      problems.push(`${name} expects a value`);
      continue;
    }
    out[envName] = value;
  }
  return out;
}

function integer(
  src: Record<string, string | undefined>,
  name: string,
  fallback: number,
  min: number,
  max: number,
  problems: string[],
): number {
  const raw = src[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max) {
    problems.push(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
    return fallback;
  }
  return Number(raw);
}

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['', '0', 'false', 'no', 'off']);

/** Boolean operator switches: anything but a recognised spelling is an error, never "off". */
function flag(src: Record<string, string | undefined>, name: string, problems: string[]): boolean {
  const raw = (src[name] ?? '').trim().toLowerCase();
  if (TRUE.has(raw)) return true;
  if (FALSE.has(raw)) return false;
  problems.push(`${name} must be 1 or 0 (or true/false), got ${JSON.stringify(src[name])}`);
  return false;
}

function nonEmpty(
  src: Record<string, string | undefined>,
  name: string,
  fallback: string,
  problems: string[],
): string {
  const raw = src[name];
  if (raw === undefined) return fallback;
  if (raw.trim() === '') {
    problems.push(`${name} must not be empty`);
    return fallback;
  }
  return raw;
}

function host(src: Record<string, string | undefined>, problems: string[]): string {
  const value = nonEmpty(src, 'HOST', CONFIG_DEFAULTS.host, problems).trim();
  // A host name or an IP literal; a URL or a port here is a common slip worth catching early.
  if (!/^[A-Za-z0-9.:-]+$/.test(value) || value.includes('://')) {
    problems.push(`HOST must be a host name or IP address, got ${JSON.stringify(src.HOST)}`);
  }
  return value;
}
