/**
 * Entry point (`npm start`): configuration → data directory, database and keys → app →
 * HTTP on HOST:PORT (DESIGN.md §2). SIGTERM/SIGINT shut down gracefully: stop accepting,
 * finish in-flight requests, stop background work, close the database, exit 0.
 * Nothing imports this file.
 */
import { createApp } from './app.ts';
import { ConfigError, loadConfig } from './core/config.ts';
import { createJsonLogger, errorFields } from './core/log.ts';
import { startServer } from './core/server.ts';
import { closeDeps, openDeps } from './deps.ts';

async function main(): Promise<void> {
  const log = createJsonLogger();
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`action-gate companion: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }

  const deps = openDeps(config, { log });
  const app = createApp(deps);
  const running = await startServer(app, { host: config.host, port: config.port, graceMs: config.shutdownGraceMs, log });
  process.stdout.write(`action-gate companion listening on ${running.url} (data: ${config.dataDir})\n`);
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
}

main().catch((err: unknown) => {
  process.stderr.write(`action-gate companion failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
