/**
 * Plans read from the live process's own parts rather than its settings alone.
 *
 *   database-plan  the open store: its data directory (relative to the working directory when
 *                  inside it) and file name, SQLite pragmas as this connection reports them,
 *                  size, WAL size, the applied migrations against those this build ships
 *                  (core/migrations.ts)
 *   secret-plan    the secret reference schemes, each asked of the running SecretResolver
 *                  (core/secret-refs.ts): whether this service, so configured, resolves it; the
 *                  operator grants as counts; whether the reference map file and the metrics
 *                  token are set; where the signing keys live (signer custody itself is
 *                  /deployment/signer-plan)
 *   worker-plan    the registered workers (companion/workers.ts status()): name, interval,
 *                  running, last round and whether it failed (never its message); the
 *                  lifecycle state
 *   readiness      the same Readiness registry as /readyz (ops/readiness.ts), run now, with an
 *                  explanation and a remedy per check. Always 200: `ready` says the outcome,
 *                  as a deployment checklist a person reads; load balancers keep /readyz, whose
 *                  503 is what a probe needs.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AppDeps } from '../core/app-deps.ts';
import { pragmaValue } from '../core/db.ts';
import type { Db } from '../core/db.ts';
import { readMigrations } from '../core/migrations.ts';
import type { OpenApiDocument } from '../core/openapi.ts';
import { z } from '../core/router.ts';
import { PRODUCTION_KEY_FILE } from '../core/signer.ts';
import { SECRET_REF_SCHEMES, parseSecretRef } from '../core/secret-refs.ts';
import type { SqliteStore, Store } from '../core/stores.ts';
import { ProblemError } from '../core/errors.ts';
import { displayPath, serves } from './sources.ts';

export const DatabasePlan = z
  .object({
    engine: z.literal('sqlite'),
    data_dir: z.string(),
    file: z.string().openapi({ description: 'Relative to data_dir' }),
    sqlite_version: z.string(),
    pragmas: z.object({
      journal_mode: z.string(),
      synchronous: z.string(),
      foreign_keys: z.boolean(),
      busy_timeout_ms: z.number().int(),
      page_size: z.number().int(),
      page_count: z.number().int(),
      freelist_count: z.number().int(),
    }),
    size_bytes: z.number().int(),
    wal_bytes: z.number().int(),
    tables: z.number().int(),
    migrations: z.object({
      shipped: z.number().int(),
      applied: z.array(z.object({ version: z.number().int(), name: z.string(), applied_at: z.string() })),
      current: z.boolean(),
    }),
  })
  .openapi('DatabasePlan');

/** PRAGMA synchronous answers a number (https://sqlite.org/pragma.html#pragma_synchronous). */
const SYNCHRONOUS = ['OFF', 'NORMAL', 'FULL', 'EXTRA'];

/** What this build ships does not change while it runs: read once. */
let shippedMigrations: number | undefined;

/** The plan describes the embedded SQLite file; PostgreSQL has its own views for this. */
function sqliteOf(store: Store): SqliteStore {
  if ((store as Partial<SqliteStore>).engine !== 'sqlite') {
    throw new ProblemError({
      status: 409,
      code: 'conflict',
      detail: 'the database plan describes the embedded SQLite engine; this companion runs on PostgreSQL (SVC_DATABASE_URL), whose own views (pg_stat_database, pg_stat_activity) describe it',
    });
  }
  return store as SqliteStore;
}

export async function databasePlan(deps: AppDeps): Promise<z.infer<typeof DatabasePlan>> {
  const store = sqliteOf(deps.store);
  // Read between transactions, so sizes and counts never include uncommitted work.
  return store.withConnection((db) => planOf(store, db));
}

function planOf(store: SqliteStore, db: Db): z.infer<typeof DatabasePlan> {
  const num = (name: string) => Number(pragmaValue(db, name));
  const applied = db.prepare('SELECT version, name, applied_at FROM schema_migrations ORDER BY version').all() as { version: number; name: string; applied_at: string }[];
  shippedMigrations ??= readMigrations().length;
  const shipped = shippedMigrations;
  let walBytes = 0;
  try {
    walBytes = fs.statSync(`${store.file}-wal`).size;
  } catch {
    // No WAL file between checkpoints that truncated it.
  }
  return {
    engine: 'sqlite',
    data_dir: displayPath(path.dirname(store.file)),
    file: path.basename(store.file),
    sqlite_version: (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v,
    pragmas: {
      journal_mode: String(pragmaValue(db, 'journal_mode')),
      synchronous: SYNCHRONOUS[num('synchronous')] ?? String(pragmaValue(db, 'synchronous')),
      foreign_keys: num('foreign_keys') === 1,
      busy_timeout_ms: num('busy_timeout'),
      page_size: num('page_size'),
      page_count: num('page_count'),
      freelist_count: num('freelist_count'),
    },
    size_bytes: num('page_size') * num('page_count'),
    wal_bytes: walBytes,
    tables: (db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number }).n,
    migrations: { shipped, applied, current: applied.length === shipped },
  };
}

export const SecretPlan = z
  .object({
    schemes: z.array(z.object({ scheme: z.string(), resolvable: z.boolean(), granted_references: z.number().int() })),
    grants: z.object({ tenants: z.number().int(), references: z.number().int() }),
    reference_map_file: z.object({ set: z.boolean(), readable: z.boolean() }),
    metrics_token: z.enum(['set', 'unset']),
    signing_keys: z.object({
      sandbox_key_id: z.string(),
      production_key_id: z.string(),
      production_key_file: z.string(),
      custody: z.object({ plan: z.string(), served: z.boolean() }),
    }),
    rule: z.string(),
  })
  .openapi('SecretPlan');

export function secretPlan(deps: AppDeps, document: OpenApiDocument): z.infer<typeof SecretPlan> {
  const { config, keyring } = deps;
  // The grants in force now: SVC_SECRET_GRANTS_FILE may have been re-read since start (SIGHUP).
  const refs = deps.secrets.grantedReferences();
  let readable = false;
  if (config.secretRefMapFile !== undefined) {
    try {
      fs.accessSync(config.secretRefMapFile, fs.constants.R_OK);
      readable = true;
    } catch {
      readable = false;
    }
  }
  return {
    schemes: SECRET_REF_SCHEMES.map((scheme) => ({
      scheme: `${scheme}://`,
      resolvable: deps.secrets.provides(scheme),
      granted_references: refs.filter((r) => parseSecretRef(r)?.scheme === scheme).length,
    })),
    grants: deps.secrets.grantCounts(),
    reference_map_file: { set: config.secretRefMapFile !== undefined, readable },
    metrics_token: config.metricsToken === undefined ? 'unset' : 'set',
    signing_keys: {
      sandbox_key_id: keyring.sandbox.keyId,
      production_key_id: keyring.production.keyId,
      production_key_file: displayPath(`${config.dataDir}/${PRODUCTION_KEY_FILE}`),
      custody: { plan: '/deployment/signer-plan', served: serves(document, 'GET', '/deployment/signer-plan') },
    },
    rule: 'references, counts and key ids only: no secret value, grant list or reference path is ever shown',
  };
}

export const WorkerPlan = z
  .object({
    lifecycle: z.string(),
    workers: z.array(
      z.object({ name: z.string(), interval_ms: z.number().int().nullable(), running: z.boolean(), last_round_at: z.string().nullable(), last_round_failed: z.boolean() }),
    ),
  })
  .openapi('WorkerPlan');

export function workerPlan(deps: AppDeps): z.infer<typeof WorkerPlan> {
  return {
    lifecycle: deps.lifecycle.state,
    workers: deps.workers.status().map((w) => ({
      name: w.name,
      interval_ms: w.intervalMs ?? null,
      running: w.running,
      last_round_at: w.lastTickAt,
      // Whether, not why: an error message may carry internals, and this map is public (as /readyz).
      last_round_failed: w.lastError !== null,
    })),
  };
}

/** What each check of ops/readiness.ts (and deps.ts) means, and what to do when it fails. */
const EXPLANATIONS: Record<string, { checks: string; when_failing: string }> = {
  database_writable: {
    checks: 'the SQLite database accepts a write transaction, and its write-ahead log can be made durable (no fsync has failed)',
    when_failing: 'check the data directory is writable by the service user, the disk is not full, and no other process holds the write lock; after a failed fsync, check the disk and restart the service',
  },
  migrations_current: {
    checks: 'every migration this build ships is applied, and none it does not know',
    when_failing: 'restart the service (migrations run at start); a database from a newer build needs that build',
  },
  signer_usable: {
    checks: 'the sandbox and production keys each sign, and the signature verifies under the published key',
    when_failing: 'check the production key file in the data directory (mode 0600, readable by the service user) or the configured key service',
  },
  workers_alive: {
    checks: 'once started, every background worker runs and its last round did not fail',
    when_failing: 'read the service log for the named worker\'s failure; /deployment/worker-plan shows which workers run and when each last finished a round',
  },
};

export const DeploymentReadiness = z
  .object({
    ready: z.boolean(),
    probe: z.string(),
    checks: z.array(z.object({ name: z.string(), ok: z.boolean(), detail: z.string().nullable(), checks: z.string(), when_failing: z.string() })),
  })
  .openapi('DeploymentReadiness');

export async function deploymentReadiness(deps: AppDeps): Promise<z.infer<typeof DeploymentReadiness>> {
  const report = await deps.readiness.run();
  return {
    ready: report.ready,
    probe: '/readyz',
    checks: Object.entries(report.checks).map(([name, result]) => ({
      name,
      ok: result.ok,
      detail: result.ok ? null : result.detail,
      ...(EXPLANATIONS[name] ?? { checks: `the ${name.replace(/_/g, ' ')} check registered by its capability`, when_failing: 'read the detail, then that capability\'s section of the README' }),
    })),
  };
}
