/**
 * PolicyStore over PostgreSQL (migrations/postgres/0003_policy.sql): the statements of
 * ./sqlite-store.ts. The primary key (tenant_id, policy_pack, version) serves all three.
 *
 * Appends are decided by that key: of two concurrent appends of one version, on any companion,
 * the second waits for the first to commit and then fails. It fails as a JavaScript error, not
 * as a failed statement (ON CONFLICT DO NOTHING, then a count of nothing), because a failed
 * statement aborts the whole PostgreSQL transaction, while in SQLite the caller's transaction
 * stays usable after a constraint error, as it does here. Rows are never updated or deleted
 * (triggers refuse it), so no read here needs a lock.
 */
import type { Queryable } from '../core/postgres/connect.ts';
import { toRow } from './rows.ts';
import type { VersionDbRow } from './rows.ts';
import type { PolicyStore } from './store.ts';

export function createPostgresPolicyStore(sql: Queryable): PolicyStore {
  return {
    async current(tenantId, policyPack) {
      const [r] = await sql<VersionDbRow[]>`SELECT * FROM policy_versions WHERE tenant_id = ${tenantId} AND policy_pack = ${policyPack}
        ORDER BY version DESC LIMIT 1`;
      return r && toRow(r);
    },

    async insertVersion(row) {
      const inserted = await sql`INSERT INTO policy_versions
          (tenant_id, policy_pack, version, digest, previous_digest, document, actor, created_at, action_key)
        VALUES (${row.tenantId}, ${row.policyPack}, ${row.version}, ${row.digest}, ${row.previousDigest}, ${row.document},
          ${row.actor}, ${row.createdAt}, ${row.actionKey})
        ON CONFLICT (tenant_id, policy_pack, version) DO NOTHING`;
      return inserted.count === 1;
    },

    async listVersions(tenantId, policyPack, { limit, beforeVersion }) {
      const rows = await sql<VersionDbRow[]>`SELECT * FROM policy_versions WHERE tenant_id = ${tenantId} AND policy_pack = ${policyPack}
        ${beforeVersion === undefined ? sql`` : sql`AND version < ${beforeVersion}`}
        ORDER BY version DESC LIMIT ${limit}`;
      return rows.map(toRow);
    },
  };
}
