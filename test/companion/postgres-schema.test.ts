/**
 * The PostgreSQL migrations (companion/migrations/postgres/) against the SQLite ones they
 * express, on a real PostgreSQL server: every file applies in order, each in its own
 * transaction; both engines end with the same tables, columns in the same order with the same
 * nullability, the same named indexes and triggers; and the triggers behave alike.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../companion/store.ts';
import type { SqliteStore } from '../../companion/store.ts';
import { startPostgres } from '../helpers/postgres.ts';
import type { TestPostgres } from '../helpers/postgres.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';
import { makeTempDir } from './helpers.ts';

const SQLITE_DIR = path.join(REPO_ROOT, 'companion', 'migrations');
const POSTGRES_DIR = path.join(SQLITE_DIR, 'postgres');
const sqlFiles = (dir: string) => fs.readdirSync(dir).filter((f) => f.endsWith('.sql')).sort();

let pg: TestPostgres;
let sqlite: SqliteStore;
let dataDir: string;

beforeAll(() => {
  pg = startPostgres();
  for (const file of sqlFiles(POSTGRES_DIR)) pg.psql(`BEGIN;\n${fs.readFileSync(path.join(POSTGRES_DIR, file), 'utf8')}\nCOMMIT;`);
  dataDir = makeTempDir();
  sqlite = openSqliteStore({ dataDir });
});

afterAll(() => {
  sqlite?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  pg?.stop();
});

const rows = (out: string) => out.split('\n').filter((l) => l !== '');

interface Column {
  name: string;
  notNull: boolean;
}

function sqliteTables(): Map<string, Column[]> {
  const names = sqlite.db
    .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' ORDER BY name")
    .all()
    .map((r) => r.name);
  return new Map(
    names.map((table) => {
      const cols = sqlite.db.prepare<[], { name: string; notnull: number; pk: number }>(`SELECT name, "notnull", pk FROM pragma_table_info('${table}') ORDER BY cid`).all();
      // A PRIMARY KEY column is NOT NULL in PostgreSQL whatever it says; SQLite's legacy rule
      // lets a non-integer key hold NULL unless declared otherwise, which no write here relies on.
      return [table, cols.map((c) => ({ name: c.name, notNull: c.notnull === 1 || c.pk > 0 }))];
    }),
  );
}

function postgresTables(): Map<string, Column[]> {
  const out = new Map<string, Column[]>();
  for (const line of rows(pg.psql("SELECT table_name, column_name, is_nullable FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position"))) {
    const [table, name, nullable] = line.split('|') as [string, string, string];
    if (!out.has(table)) out.set(table, []);
    out.get(table)!.push({ name, notNull: nullable === 'NO' });
  }
  return out;
}

describe('PostgreSQL migrations', () => {
  it('has one file for each SQLite migration, with the same number and name', () => {
    expect(sqlFiles(POSTGRES_DIR)).toEqual(sqlFiles(SQLITE_DIR));
  });

  it('ends with the same tables, and in each the same columns in order with the same nullability', () => {
    const expected = sqliteTables();
    expect(expected.size).toBeGreaterThan(20);
    expect(Object.fromEntries(postgresTables())).toEqual(Object.fromEntries(expected));
  });

  it('ends with the same named indexes and triggers', () => {
    const names = (type: string) =>
      sqlite.db
        .prepare<[string], { name: string }>("SELECT name FROM sqlite_master WHERE type = ? AND sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .all(type)
        .map((r) => r.name);
    // Constraint-backed indexes (primary keys, UNIQUE) are named by each engine its own way.
    const pgIndexes = rows(pg.psql("SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND indexname NOT LIKE '%\\_pkey' AND indexname NOT LIKE '%\\_key' ORDER BY indexname"));
    expect(pgIndexes).toEqual(names('index'));
    expect(rows(pg.psql("SELECT DISTINCT trigger_name FROM information_schema.triggers WHERE trigger_schema = 'public' ORDER BY trigger_name"))).toEqual(names('trigger'));
  });

  it('keeps policy versions append-only and bumps the credential version on key changes, as SQLite does', () => {
    const now = '2026-01-01T00:00:00.000Z';
    pg.psql(`INSERT INTO tenants (id, kind, display_name, created_at, updated_at) VALUES ('ten_pg', 'sandbox', 'PG', '${now}', '${now}');
      INSERT INTO api_keys (id, tenant_id, key_sha256, prefix, last_four, created_at) VALUES ('key_pg', 'ten_pg', decode(repeat('ab', 32), 'hex'), 'svc_test_', 'abcd', '${now}');
      UPDATE api_keys SET status = 'revoked', revoked_at = '${now}' WHERE id = 'key_pg';`);
    expect(pg.psql('SELECT version FROM credential_version').trim()).toBe('1');

    const hash = 'a'.repeat(64);
    pg.psql(`INSERT INTO sealed_records (tenant_id, tenant_seq, action_key, vertical, pack, kind, status, payload_hash, packet_hash, attestation, attestation_hash, signature, key_id, dev_key, recorded_at, credits, details)
        VALUES ('ten_pg', 0, 'law:policy:1', 'law', 'law', 'policy', 'sealed', '${hash}', '${hash}', '{}', '${hash}', 'sig', 'kid', 1, '${now}', 0, '{}');
      INSERT INTO policy_versions (tenant_id, policy_pack, version, digest, document, actor, created_at, action_key)
        VALUES ('ten_pg', 'law', 1, '${hash}', '{}', 'key_pg', '${now}', 'law:policy:1');`);
    expect(() => pg.psql("UPDATE policy_versions SET actor = 'someone else'")).toThrow(/append-only/);
    expect(() => pg.psql('DELETE FROM policy_versions')).toThrow(/append-only/);
    expect(pg.psql('SELECT actor FROM policy_versions').trim()).toBe('key_pg');
  });
});
