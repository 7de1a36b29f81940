/**
 * Numbered, transactional, re-runnable schema migrations (STYLE.md, after graphile-worker).
 *
 * Files are `companion/migrations/NNNN_name.sql`, numbered upwards from 0001. Numbers are handed
 * out per line of work, so one may be missing while its branch is unmerged; each number is
 * used once and they apply in order. Each runs
 * in its own BEGIN IMMEDIATE transaction together with its row in `schema_migrations`, so a
 * migration is applied entirely or not at all, and two processes starting at once serialise
 * on the write lock instead of both applying it. Running the set again changes nothing.
 * An applied migration whose file later changed (checksum) stops startup: history is fixed.
 * Each file has its PostgreSQL counterpart of the same name in `companion/migrations/postgres/`
 * (test/companion/postgres-schema.test.ts keeps the two schemas the same).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './db.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));

const FILE_PATTERN = /^(\d{4})_([a-z0-9_]+)\.sql$/;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** SHA-256 hex of the file with line ends normalised to LF. */
  checksum: string;
}

export class MigrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationError';
  }
}

/**
 * The database holds a schema version above every one this build ships: a newer release wrote
 * it. Running older code on it could misread or overwrite what the newer schema means, so the
 * start is refused (main.ts exits 2 with this one line) and nothing is changed.
 */
export class NewerDatabaseError extends MigrationError {
  readonly databaseVersion: number;
  readonly knownVersion: number;

  constructor(where: string, databaseVersion: number, knownVersion: number) {
    super(
      `${where} was written by a newer version of the service (schema ${pad(databaseVersion)}, which this build does not know; it knows up to ${pad(knownVersion)}): upgrade the service, or restore a backup made by this version`,
    );
    this.name = 'NewerDatabaseError';
    this.databaseVersion = databaseVersion;
    this.knownVersion = knownVersion;
  }
}

const pad = (version: number) => String(version).padStart(4, '0');

export function readMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const migrations: Migration[] = [];
  for (const file of fs.readdirSync(dir).sort()) {
    if (!file.endsWith('.sql')) continue;
    const m = FILE_PATTERN.exec(file);
    if (!m) throw new MigrationError(`migration file ${file} must be named NNNN_name.sql (lowercase, digits, _)`);
    const sql = fs.readFileSync(path.join(dir, file), 'utf8').replace(/\r\n/g, '\n');
    migrations.push({
      version: Number(m[1]),
      name: m[2]!,
      sql,
      checksum: createHash('sha256').update(sql).digest('hex'),
    });
  }
  migrations.forEach((mig, i) => {
    const previous = i === 0 ? 0 : migrations[i - 1]!.version;
    if (mig.version <= previous || mig.version < 1) {
      throw new MigrationError(`expected migration numbers to rise from 0001 without repeats, found ${String(mig.version).padStart(4, '0')}_${mig.name}.sql after ${String(previous).padStart(4, '0')}`);
    }
  });
  return migrations;
}

export interface AppliedRow {
  version: number;
  name: string;
  checksum: string;
}

/** Applies what is missing, in order; returns the versions applied by this call. */
export function runMigrations(db: Db, migrations: Migration[] = readMigrations(), now: () => Date = () => new Date()): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    checksum   TEXT NOT NULL,
    applied_at TEXT NOT NULL
  ) STRICT`);
  const appliedRows = db.prepare<[], AppliedRow>('SELECT version, name, checksum FROM schema_migrations ORDER BY version');
  const record = db.prepare('INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)');

  const before = appliedRows.all();
  checkHistory(before, migrations, `the database at ${db.name}`);
  const done = new Set(before.map((r) => r.version));
  const applied: number[] = [];
  for (const migration of migrations.filter((m) => !done.has(m.version))) {
    const apply = db.transaction(() => {
      // Re-read under the write lock: another process may have applied it meanwhile.
      if (appliedRows.all().some((r) => r.version === migration.version)) return;
      db.exec(migration.sql);
      record.run(migration.version, migration.name, migration.checksum, now().toISOString());
      db.pragma(`user_version = ${migration.version}`);
      applied.push(migration.version);
    });
    apply.immediate();
  }
  return applied;
}

/**
 * Refuses a database whose applied history this build does not know or whose files changed
 * since. `where` names the database in the message ("the database at /var/lib/…/companion.db").
 */
export function checkHistory(rows: AppliedRow[], migrations: Migration[], where = 'the database'): void {
  const known = new Map(migrations.map((m) => [m.version, m]));
  const newestKnown = migrations.at(-1)?.version ?? 0;
  const newestApplied = rows.reduce((max, r) => Math.max(max, r.version), 0);
  // Checked before the rows one by one, so a newer database gets the line that says what to do.
  if (newestApplied > newestKnown) throw new NewerDatabaseError(where, newestApplied, newestKnown);
  for (const row of rows) {
    const m = known.get(row.version);
    if (!m) {
      // A number below this build's newest that it lacks: a migration of a line of work this
      // build does not include (numbers are handed out per line of work; see above).
      throw new MigrationError(`${where} has migration ${pad(row.version)}_${row.name} that this build does not know; it was made by another version of the service`);
    }
    if (m.checksum !== row.checksum) {
      throw new MigrationError(`migration ${String(row.version).padStart(4, '0')}_${row.name}.sql changed after it was applied; add a new migration instead`);
    }
  }
}
