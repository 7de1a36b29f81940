/** SQLite implementation of EvidenceStore; statements are prepared once. */
import type { Db } from '../core/db.ts';
import type { EvidenceStore, IdempotentResponse, LogHead, SealedRecordRow, UsageRow } from './store.ts';

export interface RecordDbRow {
  tenant_id: string;
  tenant_seq: number;
  action_key: string;
  vertical: string;
  pack: string;
  kind: string;
  decision: string | null;
  status: string;
  review_route: string | null;
  payload_hash: string;
  packet_hash: string;
  attestation: string;
  attestation_hash: string;
  signature: string;
  key_id: string;
  dev_key: number;
  recorded_at: string;
  credits: number;
  details: string;
}

export const toRecord = (r: RecordDbRow): SealedRecordRow => ({
  tenantId: r.tenant_id,
  tenantSeq: r.tenant_seq,
  actionKey: r.action_key,
  vertical: r.vertical,
  pack: r.pack,
  kind: r.kind,
  decision: r.decision,
  status: r.status,
  reviewRoute: r.review_route,
  payloadHash: r.payload_hash,
  packetHash: r.packet_hash,
  attestation: r.attestation,
  attestationHash: r.attestation_hash,
  signature: r.signature,
  keyId: r.key_id,
  devKey: r.dev_key === 1,
  recordedAt: r.recorded_at,
  credits: r.credits,
  details: r.details,
});

export function createSqliteEvidenceStore(db: Db): EvidenceStore {
  const head = db.prepare<[string], { tenant_seq: number; attestation_hash: string; recorded_at: string }>(
    'SELECT tenant_seq, attestation_hash, recorded_at FROM sealed_records WHERE tenant_id = ? ORDER BY tenant_seq DESC LIMIT 1',
  );
  // Positional parameters: on the sealing hot path they bind measurably faster than named ones.
  const insert = db.prepare(`INSERT INTO sealed_records
    (tenant_id, tenant_seq, action_key, vertical, pack, kind, decision, status, review_route, payload_hash,
     packet_hash, attestation, attestation_hash, signature, key_id, dev_key, recorded_at, credits, details)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const find = db.prepare<[string, string], RecordDbRow>('SELECT * FROM sealed_records WHERE action_key = ? AND tenant_id = ?');
  const usage = db.prepare<[string], { actions_used: number; credits_used: number }>(
    'SELECT actions_used, credits_used FROM usage_counters WHERE tenant_id = ?',
  );
  const addUsage = db.prepare(`INSERT INTO usage_counters (tenant_id, actions_used, credits_used, updated_at)
    VALUES (?, ?, ?, ?)
    ON CONFLICT (tenant_id) DO UPDATE SET actions_used = actions_used + excluded.actions_used,
      credits_used = credits_used + excluded.credits_used, updated_at = excluded.updated_at`);
  const findIdem = db.prepare<[string, string, string], { request_hash: string; action_key: string; status: number; response: string }>(
    'SELECT request_hash, action_key, status, response FROM idempotency_keys WHERE tenant_id = ? AND scope = ? AND key_hash = ?',
  );
  const saveIdem = db.prepare(`INSERT INTO idempotency_keys
    (tenant_id, scope, key_hash, request_hash, action_key, status, response, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
  const insertEvent = db.prepare(`INSERT INTO events (id, tenant_id, type, dedupe_key, payload, created_at)
    VALUES (@id, @tenantId, @type, @dedupeKey, @payload, @createdAt) ON CONFLICT (dedupe_key) DO NOTHING`);
  const eventsAll = db.prepare<[string], { id: string; tenant_id: string; type: string; dedupe_key: string | null; payload: string; created_at: string }>(
    'SELECT * FROM events WHERE tenant_id = ? ORDER BY id',
  );

  return {
    logHead(tenantId): LogHead | undefined {
      const r = head.get(tenantId);
      return r && { tenantSeq: r.tenant_seq, attestationHash: r.attestation_hash, recordedAt: r.recorded_at };
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
    usage(tenantId): UsageRow {
      const r = usage.get(tenantId);
      return { actionsUsed: r?.actions_used ?? 0, creditsUsed: r?.credits_used ?? 0 };
    },
    addUsage(tenantId, actions, credits, at) {
      addUsage.run(tenantId, actions, credits, at);
    },
    findIdempotent(tenantId, scope, keyHash): IdempotentResponse | undefined {
      const r = findIdem.get(tenantId, scope, keyHash);
      return r && { requestHash: r.request_hash, actionKey: r.action_key, status: r.status, response: r.response };
    },
    saveIdempotent(tenantId, scope, keyHash, v, at) {
      saveIdem.run(tenantId, scope, keyHash, v.requestHash, v.actionKey, v.status, v.response, at);
    },
    insertEvent(row) {
      return insertEvent.run(row).changes === 1;
    },
    eventsFor(tenantId, type) {
      return eventsAll
        .all(tenantId)
        .filter((e) => type === undefined || e.type === type)
        .map((e) => ({ id: e.id, tenantId: e.tenant_id, type: e.type, dedupeKey: e.dedupe_key, payload: e.payload, createdAt: e.created_at }));
    },
  };
}
