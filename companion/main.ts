/**
 * Entry point (`npm start`, which runs the build in dist/ with plain node): configuration →
 * data directory, database and keys → app → HTTP on HOST:PORT (DESIGN.md §2). SIGTERM/SIGINT
 * shut down gracefully: stop accepting, finish in-flight requests, stop background work,
 * close the database, exit 0. SIGHUP re-reads the secret grants and reference map. A bad
 * setting, or a file, folder or reference a setting names that cannot be used, exits 2 with
 * one line each. Nothing imports this file.
 */
import { parseArgs } from 'node:util';
import { createApp } from './app.ts';
import { COMMAND_OPTIONS, ConfigError, loadConfig, settingsHelp } from './core/config.ts';
import type { SignerCustody } from './core/signer.ts';
import type { Config } from './core/config.ts';
import { createJsonLogger, errorFields } from './core/log.ts';
import { DataFilesError } from './core/db.ts';
import { NewerDatabaseError } from './core/migrations.ts';
import { StoreKekError } from './core/secrets/store-kek.ts';
import { API_VERSION } from './core/openapi.ts';
import { startServer } from './core/server.ts';
import { settingProblems } from './core/settings-check.ts';
import { SERVICE_VERSION } from './core/version.ts';
import { closeDeps, openDeps } from './deps.ts';
import { hotPathFront } from './http/hot-path.ts';

const USAGE = `usage: npm start -- [options]      (or: node dist/companion/main.js [options])

Runs the Action Gate companion. Every setting is an environment variable; most have a flag,
which wins over the variable.

options:
  -h, --help     print this help and exit
  -v, --version  print the version and exit

settings (variable, flag, default, meaning):
${settingsHelp()}
`;

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  // --help and --version answer even beside an invalid setting.
  const { values } = parseArgs({ args: argv, options: COMMAND_OPTIONS, strict: false });
  if (values.help) return void process.stdout.write(USAGE);
  if (values.version) return void process.stdout.write(`action-gate companion ${SERVICE_VERSION} (interface ${API_VERSION})\n`);

  let config: Config;
  try {
    config = loadConfig(process.env, argv);
    // Files, folders and references the settings name, looked at once (core/settings-check.ts).
    const problems = await settingProblems(config);
    if (problems.length > 0) throw new ConfigError(problems);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`action-gate companion: ${err.message}\n(see --help)\n`);
      process.exit(2);
    }
    throw err;
  }

  const log = createJsonLogger({ level: config.logLevel });
  const deps = await openDeps(config, { log, processMetrics: true });
  const app = createApp(deps);
  // The gate, proposed-action and record routes are answered in front of the app (http/hot-path.ts).
  const front = hotPathFront(deps);
  const running = await startServer(app, { host: config.host, port: config.port, graceMs: config.shutdownGraceMs, log, front });
  await deps.lifecycle.start();
  let shuttingDown = false;
  const shutdown = async (signal: NodeJS.Signals) => {
    if (shuttingDown) return;
    shuttingDown = true;
    // close() stops listening synchronously, so once this line is logged no new connection
    // is accepted; in-flight requests still complete.
    const drained = running.close();
    log.info('shutting down', { signal });
    try {
      await drained;
      await closeDeps(deps);
      log.info('stopped', { signal });
      process.exit(0);
    } catch (err) {
      log.error('shutdown failed', errorFields(err));
      process.exit(1);
    }
  };
  process.on('SIGTERM', (s) => void shutdown(s));
  process.on('SIGINT', (s) => void shutdown(s));
  // SIGHUP re-reads SVC_SECRET_GRANTS_FILE and SVC_SECRET_REF_MAP_FILE (core/secret-refs.ts):
  // a new tenant's grant needs no restart. A file that cannot be used keeps the previous one.
  process.on('SIGHUP', () => {
    const r = deps.secrets.reload();
    if (r.ok) log.info('secrets reloaded', { tenants: r.grantTenants, reason: `${r.grantReferences} granted reference(s), ${r.mapEntries} reference map entries` });
    // The problem starts with the setting's name and never holds a value.
    else log.error('secrets reload failed; the previous grants and reference map stay in force', { reason: r.problem });
  });

  // The banner comes last: whoever waits for it (a supervisor, a test) may signal at once, and
  // the handlers above must already be in place.
  const keyIds = [deps.keyring.sandbox.keyId, deps.keyring.production.keyId];
  process.stdout.write(banner(running.url, config, keyIds, deps.keyring.production.custody));
  log.info('started', { version: SERVICE_VERSION, url: running.url, data_dir: config.dataDir, key_ids: keyIds });
}

/** For the person who just ran `npm start`: where it is, what it holds, what to do next. */
function banner(url: string, config: Config, [sandboxKid, productionKid]: string[], custody: SignerCustody): string {
  const held = custody.managed ? `held by ${custody.kind}` : `in a ${custody.kind}, NOT a managed key service: see /deployment/signer-plan`;
  return [
    `action-gate companion listening on ${url} (data: ${config.dataDir})`,
    `  version ${SERVICE_VERSION}, interface ${API_VERSION}; log level ${config.logLevel}; metrics ${config.metricsToken ? 'need a token' : 'open'} at ${url}/metrics`,
    `  signing keys: sandbox ${sandboxKid} (public dev key), production ${productionKid} (${held})`,
    `  next: create a sandbox tenant and its API key:`,
    `    curl -s -X POST ${url}/signup/checkout -H 'content-type: application/json' -d '{"email":"you@example.com"}'`,
    `  then sign in to the tenant console with that key: ${url}/console`,
    '',
  ].join('\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`action-gate companion failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  // A database a newer release wrote, a data directory that cannot be made private, or stored
  // secrets sealed under a key-encryption key not configured, is a setting problem, like a bad
  // setting: exit 2.
  process.exit(err instanceof NewerDatabaseError || err instanceof DataFilesError || err instanceof StoreKekError ? 2 : 1);
});
