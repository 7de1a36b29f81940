/** SQLite implementation of EvidenceStore; statements are prepared once. */
import type { Sync } from '../core/async-store.ts';
import type { Db } from '../core/db.ts';
import { toLogHead, toRecord } from './rows.ts';
import type { HeadDbRow, RecordDbRow } from './rows.ts';
import type { EvidenceStore, LogHead } from './store.ts';

export function createSqliteEvidenceStore(db: Db): Sync<EvidenceStore> {
  const head = db.prepare<[string], HeadDbRow>(
    'SELECT tenant_seq, attestation_hash, recorded_at FROM sealed_records WHERE tenant_id = ? ORDER BY tenant_seq DESC LIMIT 1',
  );
  // Positional parameters: on the sealing hot path they bind measurably faster than named ones.
  const insert = db.prepare(`INSERT INTO sealed_records
    (tenant_id, tenant_seq, action_key, vertical, pack, kind, decision, status, review_route, payload_hash,
     packet_hash, attestation, attestation_hash, signature, key_id, dev_key, recorded_at, credits, details)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const find = db.prepare<[string, string], RecordDbRow>('SELECT * FROM sealed_records WHERE action_key = ? AND tenant_id = ?');

  return {
    logHead(tenantId): LogHead | undefined {
      const r = head.get(tenantId);
      return r && toLogHead(r);
    },
    insertRecord(r) {
      insert.run(
        r.tenantId, r.tenantSeq, r.actionKey, r.vertical, r.pack, r.kind, r.decision, r.status, r.reviewRoute, r.payloadHash,
        r.packetHash, r.attestation, r.attestationHash, r.signature, r.keyId, r.devKey ? 1 : 0, r.recordedAt, r.credits, r.details,
      );
    },
    findRecord(tenantId, actionKey) {
      const r = find.get(actionKey, tenantId);
      return r && toRecord(r);
    },
  };
}
