/**
 * ReviewContextStore over PostgreSQL (migrations/postgres/0021_review_context.sql): the
 * statements of ./sqlite-store.ts. postgres.js binds Uint8Arrays as bytea and reads bytea back
 * as Buffers (./rows.ts copies them out). Writes of several rows run `atomically`.
 *
 * Erasure here ends at the row: a deleted tuple's bytes stay in the table's pages until VACUUM
 * reclaims them (PostgreSQL "Routine Vacuuming"), which autovacuum does on its own schedule.
 */
import { atomically } from '../core/postgres/connect.ts';
import type { PgTransaction, Queryable } from '../core/postgres/connect.ts';
import { writeBehind } from '../core/postgres/write-behind.ts';
import { toContext, toKey, toSubmitter } from './rows.ts';
import type { ContextDbRow, KeyDbRow, SubmitterDbRow } from './rows.ts';
import type { ReviewContextStore } from './store.ts';

/** A seal batch's submitters in one statement, written behind (core/postgres/write-behind.ts). */
function recordSubmitters(sql: PgTransaction, rows: unknown[][]) {
  const column = (i: number) => sql.array(rows.map((row) => (row[i] === null ? null : String(row[i]))) as string[], 25);
  return sql`INSERT INTO review_context_submitters (tenant_id, action_key, principal_id, credential_id)
    SELECT * FROM unnest(${column(0)}::text[], ${column(1)}::text[], ${column(2)}::text[], ${column(3)}::text[])
    ON CONFLICT (tenant_id, action_key) DO NOTHING`;
}

export function createPostgresReviewContextStore(sql: Queryable): ReviewContextStore {
  return {
    async recordSubmitter(row) {
      const behind = writeBehind(sql);
      if (behind?.add('review_context_submitters', recordSubmitters, [row.tenantId, row.actionKey, row.principalId, row.credentialId])) return;
      await sql`INSERT INTO review_context_submitters (tenant_id, action_key, principal_id, credential_id)
        VALUES (${row.tenantId}, ${row.actionKey}, ${row.principalId}, ${row.credentialId}) ON CONFLICT (tenant_id, action_key) DO NOTHING`;
    },

    async findSubmitter(tenantId, actionKey) {
      const [r] = await sql<SubmitterDbRow[]>`SELECT * FROM review_context_submitters WHERE tenant_id = ${tenantId} AND action_key = ${actionKey}`;
      return r && toSubmitter(r);
    },

    async forgetAction(tenantId, actionKey) {
      await atomically(sql, async (tx) => {
        await tx`DELETE FROM review_contexts WHERE tenant_id = ${tenantId} AND action_key = ${actionKey}`;
        await tx`DELETE FROM review_context_submitters WHERE tenant_id = ${tenantId} AND action_key = ${actionKey}`;
      });
    },

    async addKey(row) {
      const inserted = await sql`INSERT INTO review_keys (id, tenant_id, person_id, public_key, label, created_at, last_used_at, revoked_at)
        VALUES (${row.id}, ${row.tenantId}, ${row.personId}, ${row.publicKey}, ${row.label}, ${row.createdAt}, NULL, NULL)
        ON CONFLICT (tenant_id, public_key) DO NOTHING`;
      return inserted.count === 1 ? 'added' : 'taken';
    },

    async listKeys(tenantId, personId) {
      return (await sql<KeyDbRow[]>`SELECT * FROM review_keys WHERE tenant_id = ${tenantId} AND person_id = ${personId} ORDER BY id`).map(toKey);
    },

    async activeKeys(tenantId) {
      return (await sql<KeyDbRow[]>`SELECT * FROM review_keys WHERE tenant_id = ${tenantId} AND revoked_at IS NULL ORDER BY id`).map(toKey);
    },

    revokeKey(tenantId, personId, keyId, at) {
      return atomically(sql, async (tx) => {
        const revoked = await tx`UPDATE review_keys SET revoked_at = ${at}
          WHERE tenant_id = ${tenantId} AND person_id = ${personId} AND id = ${keyId} AND revoked_at IS NULL`;
        if (revoked.count !== 1) return false;
        await tx`DELETE FROM review_contexts WHERE tenant_id = ${tenantId} AND review_key_id = ${keyId}`;
        return true;
      });
    },

    async touchKey(tenantId, keyId, at) {
      await sql`UPDATE review_keys SET last_used_at = ${at} WHERE tenant_id = ${tenantId} AND id = ${keyId}`;
    },

    async replaceContexts(tenantId, actionKey, rows) {
      await atomically(sql, async (tx) => {
        await tx`DELETE FROM review_contexts WHERE tenant_id = ${tenantId} AND action_key = ${actionKey}`;
        for (const r of rows) {
          await tx`INSERT INTO review_contexts (tenant_id, action_key, review_key_id, enc, ct, created_at)
            VALUES (${r.tenantId}, ${r.actionKey}, ${r.reviewKeyId}, ${r.enc}, ${r.ct}, ${r.createdAt})`;
        }
      });
    },

    async findContext(tenantId, actionKey, reviewKeyId) {
      const [r] = await sql<ContextDbRow[]>`SELECT * FROM review_contexts
        WHERE tenant_id = ${tenantId} AND action_key = ${actionKey} AND review_key_id = ${reviewKeyId}`;
      return r && toContext(r);
    },

    async countContexts(tenantId, actionKeys) {
      const out = new Map<string, number>();
      if (actionKeys.length === 0) return out;
      const rows = await sql<{ action_key: string; n: number }[]>`SELECT action_key, count(*)::int AS n FROM review_contexts
        WHERE tenant_id = ${tenantId} AND action_key = ANY(${[...new Set(actionKeys)]}) GROUP BY action_key`;
      for (const r of rows) out.set(r.action_key, r.n);
      return out;
    },

    async eraseContexts(tenantId, actionKey) {
      return (await sql`DELETE FROM review_contexts WHERE tenant_id = ${tenantId} AND action_key = ${actionKey}`).count;
    },

    async eraseOrphans(now, limit) {
      const erased = await sql`DELETE FROM review_contexts WHERE (tenant_id, action_key, review_key_id) IN (
          SELECT c.tenant_id, c.action_key, c.review_key_id FROM review_contexts c
          WHERE NOT EXISTS (SELECT 1 FROM review_items i WHERE i.tenant_id = c.tenant_id AND i.action_key = c.action_key
            AND i.status IN ('pending', 'escalated') AND i.expires_at > ${now})
          LIMIT ${limit})`;
      await sql`DELETE FROM review_context_submitters WHERE (tenant_id, action_key) IN (
          SELECT s.tenant_id, s.action_key FROM review_context_submitters s
          WHERE NOT EXISTS (SELECT 1 FROM review_items i WHERE i.tenant_id = s.tenant_id AND i.action_key = s.action_key
            AND i.status IN ('pending', 'escalated') AND i.expires_at > ${now})
          LIMIT ${limit})`;
      return erased.count;
    },
  };
}
