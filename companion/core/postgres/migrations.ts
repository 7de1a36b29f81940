/**
 * The PostgreSQL engine's schema: the files of companion/migrations/postgres/, numbered and
 * named as SQLite's (../migrations.ts), applied by the same rules: what is missing, in order,
 * each file in its own transaction together with its `schema_migrations` row; an applied file
 * that changed since, or a migration this build does not know, refuses the start (a database
 * a newer release migrated is named as such, with what to do: core/migrations.ts).
 *
 * Several companions may start at once on one database (the scale-out engine's point): each
 * transaction first takes the same transaction-level advisory lock (PostgreSQL "Advisory
 * Locks"), so they apply one at a time, and each re-reads what is applied under the lock.
 */
import path from 'node:path';
import type { Sql, TransactionSql } from 'postgres';
import { checkHistory, MIGRATIONS_DIR, readMigrations } from '../migrations.ts';
import type { AppliedRow, Migration } from '../migrations.ts';

export const POSTGRES_MIGRATIONS_DIR = path.join(MIGRATIONS_DIR, 'postgres');

/** The advisory lock key held while migrating: an arbitrary constant, used for nothing else. */
export const MIGRATION_LOCK_KEY = 7_401_001;

/** The applied history, read under the lock (which the transaction then holds to its end). */
async function lockedHistory(tx: TransactionSql): Promise<AppliedRow[]> {
  await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
  await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    bigint PRIMARY KEY,
    name       text NOT NULL,
    checksum   text NOT NULL,
    applied_at text NOT NULL
  )`;
  const rows = await tx<{ version: string; name: string; checksum: string }[]>`SELECT version, name, checksum FROM schema_migrations ORDER BY version`;
  return rows.map((r) => ({ version: Number(r.version), name: r.name, checksum: r.checksum }));
}

/** Applies what is missing, in order; returns the versions this call applied. */
export async function runPostgresMigrations(sql: Sql, migrations: Migration[] = readMigrations(POSTGRES_MIGRATIONS_DIR), now: () => Date = () => new Date()): Promise<number[]> {
  const pending = await sql.begin(async (tx) => {
    const rows = await lockedHistory(tx);
    const [{ name }] = await tx<[{ name: string }]>`SELECT current_database() AS name`;
    checkHistory(rows, migrations, `the PostgreSQL database ${JSON.stringify(name)}`);
    return migrations.filter((m) => !rows.some((r) => r.version === m.version));
  });
  const applied: number[] = [];
  for (const migration of pending) {
    await sql.begin(async (tx) => {
      // Another companion may have applied it since the history was read.
      if ((await lockedHistory(tx)).some((r) => r.version === migration.version)) return;
      await tx.unsafe(migration.sql).simple();
      await tx`INSERT INTO schema_migrations (version, name, checksum, applied_at)
        VALUES (${migration.version}, ${migration.name}, ${migration.checksum}, ${now().toISOString()})`;
      applied.push(migration.version);
    });
  }
  return applied;
}
