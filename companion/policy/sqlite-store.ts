/** SQLite implementation of PolicyStore (migration 0003_policy.sql); statements are prepared once. */
import type { Sync } from '../core/async-store.ts';
import type { Db } from '../core/db.ts';
import { toRow } from './rows.ts';
import type { VersionDbRow } from './rows.ts';
import type { PolicyStore } from './store.ts';

export function createSqlitePolicyStore(db: Db): Sync<PolicyStore> {
  // The primary key (tenant_id, policy_pack, version) serves all three: one index seek each.
  const current = db.prepare<[string, string], VersionDbRow>(
    'SELECT * FROM policy_versions WHERE tenant_id = ? AND policy_pack = ? ORDER BY version DESC LIMIT 1',
  );
  const insert = db.prepare(`INSERT INTO policy_versions
    (tenant_id, policy_pack, version, digest, previous_digest, document, actor, created_at, action_key)
    VALUES (@tenantId, @policyPack, @version, @digest, @previousDigest, @document, @actor, @createdAt, @actionKey)
    ON CONFLICT (tenant_id, policy_pack, version) DO NOTHING`);
  const list = db.prepare<[string, string, number, number], VersionDbRow>(
    'SELECT * FROM policy_versions WHERE tenant_id = ? AND policy_pack = ? AND version < ? ORDER BY version DESC LIMIT ?',
  );

  return {
    current(tenantId, policyPack) {
      const r = current.get(tenantId, policyPack);
      return r && toRow(r);
    },
    insertVersion(row) {
      return insert.run(row).changes === 1;
    },
    listVersions(tenantId, policyPack, { limit, beforeVersion }) {
      return list.all(tenantId, policyPack, beforeVersion ?? Number.MAX_SAFE_INTEGER, limit).map(toRow);
    },
  };
}
