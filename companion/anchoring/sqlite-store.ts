/** SQLite implementation of AnchoringStore (migration 0005); statements are prepared once. */
import type { Sync } from '../core/async-store.ts';
import type { Db } from '../core/db.ts';
import { TENANT_LOG_UNSTORED_LEVELS, isTenantLog, toBehind, toEpoch, toLeaf, toLog, toRecordLeaf } from './rows.ts';
import type { BehindDbRow, EpochDbRow, LeafDbRow, LogDbRow, RecordLeafDbRow } from './rows.ts';
import type { AnchoringStore } from './store.ts';
import { createSqliteTimestampStore } from './timestamps-store.ts';
import { createSqliteWitnessStore } from './witness-store.ts';

export function createSqliteAnchoringStore(db: Db): Sync<AnchoringStore> {
  const getNode = db.prepare<[string, number, number], { hash: Buffer }>('SELECT hash FROM merkle_nodes WHERE log_id = ? AND level = ? AND idx = ?');
  const putNode = db.prepare('INSERT INTO merkle_nodes (log_id, level, idx, hash) VALUES (?, ?, ?, ?)');
  const leafCount = db.prepare<[string], { n: number | null }>('SELECT max(idx) + 1 AS n FROM merkle_nodes WHERE log_id = ? AND level = 0');
  const leafData = db.prepare<[string, number, number], [string]>(
    'SELECT attestation_hash FROM sealed_records WHERE tenant_id = ? AND tenant_seq >= ? AND tenant_seq < ? ORDER BY tenant_seq',
  ).raw();
  const level = db.prepare<[string, number], [Buffer]>('SELECT hash FROM merkle_nodes WHERE log_id = ? AND level = ? ORDER BY idx').raw();
  const logSize = db.prepare<[string], { size: number }>('SELECT size FROM tenant_logs WHERE tenant_id = ?');
  const logState = db.prepare<[string], { size: number; anchored_size: number; last_recorded_at: string }>('SELECT size, anchored_size, last_recorded_at FROM tenant_logs WHERE tenant_id = ?');
  // Every seal moves its log's size: after a log's first leaf that is an UPDATE of an existing
  // row, one seek, where an upsert first tries (and fails) the insert.
  const updateLogSize = db.prepare('UPDATE tenant_logs SET size = ?, last_recorded_at = ? WHERE tenant_id = ?');
  const insertLog = db.prepare('INSERT INTO tenant_logs (tenant_id, size, last_recorded_at) VALUES (?, ?, ?)');
  const setAnchored = db.prepare('UPDATE tenant_logs SET anchored_size = ? WHERE tenant_id = ? AND anchored_size < ?');
  const unanchored = db.prepare<[], LogDbRow>(
    'SELECT tenant_id, size, anchored_size, last_recorded_at FROM tenant_logs WHERE size > anchored_size ORDER BY tenant_id',
  );
  // Per tenant, max(tenant_seq) is one probe of UNIQUE (tenant_id, tenant_seq): O(tenants).
  const behind = db.prepare<[], BehindDbRow>(`
    SELECT tenant_id, records, size FROM (
      SELECT t.id AS tenant_id,
             coalesce((SELECT max(tenant_seq) + 1 FROM sealed_records AS s WHERE s.tenant_id = t.id), 0) AS records,
             coalesce((SELECT size FROM tenant_logs AS l WHERE l.tenant_id = t.id), 0) AS size
        FROM tenants AS t)
     WHERE records > size`);
  const recordLeaves = db.prepare<[string, number, number], RecordLeafDbRow>(
    'SELECT attestation_hash, recorded_at FROM sealed_records WHERE tenant_id = ? AND tenant_seq >= ? AND tenant_seq < ? ORDER BY tenant_seq',
  );
  // One probe of sealed_records_by_time (tenant_id, recorded_at, tenant_seq), read backwards
  // from the boundary. (max(tenant_seq) would scan every earlier record: the range on
  // recorded_at stops SQLite's min/max shortcut.) The sealer stamps a tenant's records in
  // log order, so the last one before the boundary holds the highest tenant_seq.
  const before = db.prepare<[string, string], { seq: number }>(
    'SELECT tenant_seq AS seq FROM sealed_records WHERE tenant_id = ? AND recorded_at < ? ORDER BY recorded_at DESC, tenant_seq DESC LIMIT 1',
  );
  const first = db.prepare<[], { at: string | null }>('SELECT min(recorded_at) AS at FROM sealed_records');
  const last = db.prepare<[], EpochDbRow>('SELECT * FROM epochs ORDER BY epoch_seq DESC LIMIT 1');
  const one = db.prepare<[number], EpochDbRow>('SELECT * FROM epochs WHERE epoch_seq = ?');
  const page = db.prepare<[number, number], EpochDbRow>('SELECT * FROM epochs WHERE epoch_seq > ? ORDER BY epoch_seq LIMIT ?');
  const leaves = db.prepare<[number], LeafDbRow>('SELECT * FROM epoch_leaves WHERE epoch_seq = ? ORDER BY leaf_index');
  const anchoring = db.prepare<[string, number], LeafDbRow>(
    'SELECT * FROM epoch_leaves WHERE tenant_id = ? AND tenant_size > ? ORDER BY tenant_size LIMIT 1',
  );
  const anchoredBefore = db.prepare<[string, number], { size: number | null }>(
    'SELECT max(tenant_size) AS size FROM epoch_leaves WHERE tenant_id = ? AND tenant_size < ?',
  );
  const insertEpoch = db.prepare(`INSERT INTO epochs
    (epoch_seq, period_start, period_end, cadence_seconds, tenant_count, canonical_root, prev_epoch_digest, epoch_digest,
     anchored_at, header, signature, key_id, checkpoint) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const insertLeaf = db.prepare('INSERT INTO epoch_leaves (epoch_seq, leaf_index, tenant_id, tenant_size, tenant_chain_root) VALUES (?, ?, ?, ?, ?)');

  return {
    // RFC 3161 timestamp requests and tokens (./timestamps-store.ts).
    ...createSqliteTimestampStore(db),
    // Witness submissions, witnesses' sizes and cosignatures (./witness-store.ts).
    ...createSqliteWitnessStore(db),
    // One key per store built here: the outside view and the transactions' views that
    // store.ts lifts from it share the trees' caches (stored-tree.ts).
    treeCacheKey: {},
    getNode(logId, level, idx) {
      const r = getNode.get(logId, level, idx);
      return r && new Uint8Array(r.hash.buffer, r.hash.byteOffset, r.hash.byteLength);
    },
    putNode(logId, level, idx, hash) {
      putNode.run(logId, level, idx, hash);
    },
    leafCount: (logId) => (isTenantLog(logId) ? (logSize.get(logId)?.size ?? 0) : (leafCount.get(logId)?.n ?? 0)),
    levelNodes: (logId, l) => level.all(logId, l).map(([hash]) => hash),
    lowestStoredLevel: (logId) => (isTenantLog(logId) ? TENANT_LOG_UNSTORED_LEVELS : 0),
    leafData: (logId, from, to) => leafData.all(logId, from, to).map(([hex]) => Buffer.from(hex, 'hex')),
    tenantLogSize: (tenantId) => logSize.get(tenantId)?.size ?? 0,
    tenantLog(tenantId) {
      const r = logState.get(tenantId);
      return r && { tenantId, size: r.size, anchoredSize: r.anchored_size, lastRecordedAt: r.last_recorded_at };
    },
    setTenantLogSize(tenantId, size, lastRecordedAt) {
      if (updateLogSize.run(size, lastRecordedAt, tenantId).changes === 0) insertLog.run(tenantId, size, lastRecordedAt);
    },
    unanchoredLogs: () => unanchored.all().map(toLog),
    logsBehind: () => behind.all().map(toBehind),
    recordLeaves: (tenantId, from, to) => recordLeaves.all(tenantId, from, to).map(toRecordLeaf),
    recordsBefore(tenantId, at) {
      const r = before.get(tenantId, at);
      return r ? r.seq + 1 : 0;
    },
    firstRecordedAt: () => first.get()?.at ?? undefined,
    lastEpoch() {
      const r = last.get();
      return r && toEpoch(r);
    },
    epoch(epochSeq) {
      const r = one.get(epochSeq);
      return r && toEpoch(r);
    },
    epochs: (after, limit) => page.all(after, limit).map(toEpoch),
    epochLeaves: (epochSeq) => leaves.all(epochSeq).map(toLeaf),
    anchoringLeaf(tenantId, tenantSeq) {
      const r = anchoring.get(tenantId, tenantSeq);
      return r && toLeaf(r);
    },
    anchoredBefore: (tenantId, size) => anchoredBefore.get(tenantId, size)?.size ?? 0,
    lockEpochClose() {},
    insertEpoch(e, rows) {
      insertEpoch.run(
        e.epochSeq, e.periodStart, e.periodEnd, e.cadenceSeconds, e.tenantCount, e.canonicalRoot, e.prevEpochDigest, e.epochDigest,
        e.anchoredAt, e.header, e.signature, e.keyId, e.checkpoint,
      );
      for (const l of rows) {
        insertLeaf.run(l.epochSeq, l.leafIndex, l.tenantId, l.tenantSize, l.tenantChainRoot);
        setAnchored.run(l.tenantSize, l.tenantId, l.tenantSize);
      }
    },
  };
}
