/**
 * Companion processes (companion-process.ts) on one PostgreSQL database, `gate`, on a server of
 * the test file's own (postgres.ts): started before its tests, stopped after them, the
 * companions killed after each test. Tenants are written as rows once a companion has applied
 * the schema; their logs are read back with psql, not through any code of ours.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { generateApiKey } from '../../companion/core/auth.ts';
import { cleanupCompanions } from './companion-process.ts';
import { startPostgres } from './postgres.ts';
import type { TestPostgres } from './postgres.ts';
import { logEntries, TENANT_LOG_SQL } from './tenant-log.ts';
import type { LogEntry, LogRow } from './tenant-log.ts';

/** A law decision that pauses for review and seals: the load these tests send. */
export const GATE = {
  pack: 'law',
  proposed_action: 'Draft a reply to opposing counsel about the discovery schedule in matter 42.',
  law_context: { matter_band: 'moderate', tool_id: 'drafting-assistant', doctrine_anchor: 'competence', jurisdiction: 'US-NY' },
};

export interface GateDatabase {
  /** The running server. */
  server(): TestPostgres;
  /** SVC_DATABASE_URL for a companion on `gate`. */
  url(): string;
  /** A production tenant (no sandbox allowance) and its key. */
  productionTenant(tenantId: string): { tenantId: string; apiKey: string };
  /** The tenant's log in tenant_seq order. */
  tenantLog(tenantId: string): LogEntry[];
}

/** Registers the file's hooks; call it at the top of the file or of a describe block. */
export function gateDatabase(): GateDatabase {
  let pg: TestPostgres | undefined;
  beforeAll(() => {
    pg = startPostgres();
    pg.psql('CREATE DATABASE gate');
  }, 60_000);
  afterAll(() => pg?.stop());
  afterEach(() => cleanupCompanions());
  const server = () => {
    if (!pg) throw new Error('the PostgreSQL server starts in beforeAll');
    return pg;
  };
  return {
    server,
    url: () => `postgres:///gate?host=${encodeURIComponent(server().socketDir)}&user=postgres`,
    productionTenant(tenantId) {
      const key = generateApiKey('production');
      const at = new Date().toISOString();
      server().psql(`\\c gate
        INSERT INTO tenants (id, kind, display_name, retain_statutory_metadata, created_at, updated_at) VALUES ('${tenantId}', 'production', '${tenantId}', 0, '${at}', '${at}');
        INSERT INTO api_keys (id, tenant_id, key_sha256, prefix, last_four, created_at) VALUES ('key_${tenantId}', '${tenantId}', '\\x${Buffer.from(key.hash).toString('hex')}', '${key.prefix}', '${key.lastFour}', '${at}');`);
      return { tenantId, apiKey: key.key };
    },
    tenantLog(tenantId) {
      const json = server().psql(`\\c gate
        SELECT coalesce(json_agg(row_to_json(l)), '[]') FROM (${TENANT_LOG_SQL.replace('?', `'${tenantId}'`)}) l;`);
      return logEntries(JSON.parse(json.trim().split('\n').at(-1)!) as LogRow[]);
    },
  };
}
