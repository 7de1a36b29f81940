/**
 * The PostgreSQL migration runner (companion/core/postgres/migrations.ts) on a real server:
 * applies every file once, changes nothing when run again, refuses a changed or unknown
 * history, and two companions starting at once on a fresh database apply each file exactly once.
 */
import postgres from 'postgres';
import type { Sql } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MigrationError, readMigrations } from '../../companion/core/migrations.ts';
import { POSTGRES_MIGRATIONS_DIR, runPostgresMigrations } from '../../companion/core/postgres/migrations.ts';
import { startPostgres } from '../helpers/postgres.ts';
import type { TestPostgres } from '../helpers/postgres.ts';

let pg: TestPostgres;
const clients: Sql[] = [];
let databases = 0;

beforeAll(() => {
  pg = startPostgres();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.end()));
  pg?.stop();
});

/** A fresh database, and `n` separate clients of it (as `n` companion processes would have). */
function freshDatabase(n = 1): Sql[] {
  const name = `svc_${++databases}`;
  pg.psql(`CREATE DATABASE ${name};`);
  return Array.from({ length: n }, () => {
    const sql = postgres({ host: pg.socketDir, port: 5432, user: 'postgres', database: name, max: 1, onnotice: () => {} });
    clients.push(sql);
    return sql;
  });
}

const shipped = readMigrations(POSTGRES_MIGRATIONS_DIR);

describe('PostgreSQL migrations runner', () => {
  it('applies every file in order once, and nothing when run again', async () => {
    const [sql] = freshDatabase();
    expect(await runPostgresMigrations(sql!)).toEqual(shipped.map((m) => m.version));
    expect(await runPostgresMigrations(sql!)).toEqual([]);
    const rows = await sql!`SELECT version, name, checksum FROM schema_migrations ORDER BY version`;
    expect(rows.map((r) => [Number(r.version), r.name, r.checksum])).toEqual(shipped.map((m) => [m.version, m.name, m.checksum]));
  });

  it('applies each file exactly once when two companions start at once', async () => {
    const [a, b] = freshDatabase(2);
    const [fromA, fromB] = await Promise.all([runPostgresMigrations(a!), runPostgresMigrations(b!)]);
    expect([...fromA, ...fromB].sort((x, y) => x - y)).toEqual(shipped.map((m) => m.version));
    expect(Number((await a!`SELECT count(*) AS n FROM schema_migrations`)[0]!.n)).toBe(shipped.length);
  });

  it('refuses a file changed after it was applied, and a migration this build does not know', async () => {
    const [sql] = freshDatabase();
    await runPostgresMigrations(sql!);
    const changed = shipped.map((m, i) => (i === 2 ? { ...m, checksum: '0'.repeat(64) } : m));
    await expect(runPostgresMigrations(sql!, changed)).rejects.toThrow(MigrationError);
    await expect(runPostgresMigrations(sql!, changed)).rejects.toThrow(/0003_policy\.sql changed after it was applied/);
    await expect(runPostgresMigrations(sql!, shipped.slice(0, -1))).rejects.toThrow(/does not know/);
  });

  it('leaves nothing of a file that fails: its transaction rolls back with its row', async () => {
    const [sql] = freshDatabase();
    const broken = [...shipped.slice(0, 1), { version: 2, name: 'broken', sql: 'CREATE TABLE half_done (id bigint); SELECT no_such_function();', checksum: 'b'.repeat(64) }];
    await expect(runPostgresMigrations(sql!, broken)).rejects.toThrow(/no_such_function/);
    expect((await sql!`SELECT to_regclass('half_done') AS t`)[0]!.t).toBeNull();
    expect((await sql!`SELECT version FROM schema_migrations`).map((r) => Number(r.version))).toEqual([1]);
  });
});
