/**
 * Readiness: can this instance serve traffic right now? A small registry of named checks;
 * each capability that owns a dependency (the database, the signer, a background worker)
 * registers one, and GET /readyz runs them all and names each that fails.
 *
 *   deps.readiness.register('outbox_worker', () => worker.alive() ? ok() : failed('no heartbeat for 30 s'));
 *
 * A check is cheap (a probe, not a workload) and never throws on purpose: a thrown error
 * counts as a failure whose detail is the error's class only, so no internal message or caller
 * value reaches the unauthenticated probe.
 */
import { createPublicKey, verify } from 'node:crypto';
import type { Keyring } from '../core/keyring.ts';
import type { Lifecycle } from '../core/lifecycle.ts';
import type { WorkerStatus } from '../core/worker-status.ts';
import { readMigrations } from '../core/migrations.ts';
import type { PostgresStore } from '../core/stores.ts';
import type { SqliteStore } from '../core/stores.ts';
import { POSTGRES_MIGRATIONS_DIR } from '../core/postgres/migrations.ts';

export type CheckResult = { ok: true } | { ok: false; detail: string };
export type ReadinessCheck = () => CheckResult | Promise<CheckResult>;

export const ok = (): CheckResult => ({ ok: true });
export const failed = (detail: string): CheckResult => ({ ok: false, detail });

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, CheckResult>;
}

export class Readiness {
  readonly #checks = new Map<string, ReadinessCheck>();

  /** Names are stable identifiers (they appear in /readyz bodies and alerts). */
  register(name: string, check: ReadinessCheck): void {
    if (!/^[a-z][a-z0-9_]{0,63}$/.test(name)) throw new Error(`readiness check name ${JSON.stringify(name)} must be snake_case`);
    if (this.#checks.has(name)) throw new Error(`readiness check ${name} is already registered`);
    this.#checks.set(name, check);
  }

  /** The registered checks' names, in registration order. */
  names(): string[] {
    return [...this.#checks.keys()];
  }

  async run(): Promise<ReadinessReport> {
    const entries = await Promise.all(
      [...this.#checks].map(async ([name, check]): Promise<[string, CheckResult]> => {
        try {
          return [name, await check()];
        } catch (err) {
          return [name, failed(`check threw ${err instanceof Error ? err.name : typeof err}`)];
        }
      }),
    );
    const checks = Object.fromEntries(entries);
    return { ready: entries.every(([, r]) => r.ok), checks };
  }
}

/**
 * The database accepts writes: a write statement that changes no row still opens a write
 * transaction, so a read-only file, a read-only connection or a full lock fails here, while
 * nothing is written. The probe waits for the connection (store.withConnection) so it never
 * runs inside a seal's or anyone else's open transaction.
 */
export function databaseWritable(store: Pick<SqliteStore, 'withConnection' | 'walSync'>): ReadinessCheck {
  return () =>
    store.withConnection((db) => {
      if (!db.open) return failed('the database connection is closed');
      // After a failed fsync nothing more is sealed until a restart (core/wal-sync.ts).
      if (store.walSync.failure) return failed(`${store.walSync.failure.message}; restart the service`);
      try {
        db.transaction(() => db.prepare('UPDATE schema_migrations SET version = version WHERE 0').run())();
        return ok();
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        return failed(`the database refused a write (${typeof code === 'string' ? code : 'error'})`);
      }
    });
}

/** Every migration this build ships has been applied, and none this build does not know. */
export function migrationsCurrent(store: Pick<SqliteStore, 'withConnection'>, migrationsDir?: string): ReadinessCheck {
  const shipped = readMigrations(migrationsDir).length;
  return () =>
    store.withConnection((db) => {
      if (!db.open) return failed('the database connection is closed');
      const { applied } = db.prepare('SELECT count(*) AS applied FROM schema_migrations').get() as { applied: number };
      return applied === shipped ? ok() : failed(`${applied} of ${shipped} migrations applied`);
    });
}

/** The PostgreSQL database accepts writes: not a standby, and a no-op write commits. */
export function postgresWritable(store: Pick<PostgresStore, 'sql'>): ReadinessCheck {
  return async () => {
    try {
      await store.sql.begin((tx) => tx`UPDATE schema_migrations SET version = version WHERE false`);
      return ok();
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      return failed(`the database refused a write (${typeof code === 'string' ? code : 'unreachable'})`);
    }
  };
}

/** Every PostgreSQL migration this build ships has been applied, and none this build does not know. */
export function postgresMigrationsCurrent(store: Pick<PostgresStore, 'sql'>): ReadinessCheck {
  const shipped = readMigrations(POSTGRES_MIGRATIONS_DIR).length;
  return async () => {
    try {
      const [row] = await store.sql<{ applied: number }[]>`SELECT count(*)::int AS applied FROM schema_migrations`;
      return row?.applied === shipped ? ok() : failed(`${row?.applied ?? 0} of ${shipped} migrations applied`);
    } catch {
      return failed('the database is unreachable');
    }
  };
}

const PROBE = new TextEncoder().encode('svc readiness probe');

/** Each signing key signs, and its signature verifies under the published key. */
/**
 * A managed key (HSM, cloud KMS) answers each Sign over the network, billed and rate-limited:
 * a probe that passed is trusted this long, so an orchestrator polling /readyz every few
 * seconds costs one Sign a minute. A failed probe is never remembered: the next one signs.
 */
export const MANAGED_PROBE_TTL_MS = 60_000;

export function signersUsable(keyring: Keyring, nowMs: () => number = Date.now): ReadinessCheck {
  const passedAt = new Map<string, number>();
  return () => {
    for (const [name, signer] of [['sandbox', keyring.sandbox], ['production', keyring.production]] as const) {
      const managed = signer.custody.managed;
      if (managed && nowMs() - (passedAt.get(signer.keyId) ?? -Infinity) < MANAGED_PROBE_TTL_MS) continue;
      passedAt.delete(signer.keyId);
      const signature = signer.sign(PROBE);
      const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(signer.publicKey).toString('base64url') }, format: 'jwk' });
      if (!verify(null, PROBE, key, signature)) return failed(`the ${name} signing key produced a signature that does not verify`);
      if (managed) passedAt.set(signer.keyId, nowMs());
    }
    return ok();
  };
}

/**
 * Every background worker runs once the service has started them (companion/workers.ts) and
 * its last round did not fail. Before start (in-process tests, `createApp` alone) there is
 * nothing to expect yet.
 */
export function workersAlive(lifecycle: Lifecycle, workers: { status(): WorkerStatus[] }): ReadinessCheck {
  return () => {
    if (lifecycle.state !== 'started') return ok();
    const down = workers.status().filter((w) => !w.running || w.lastError !== null);
    if (down.length === 0) return ok();
    return failed(down.map((w) => `${w.name}: ${w.running ? 'last round failed' : 'not running'}`).join('; '));
  };
}
