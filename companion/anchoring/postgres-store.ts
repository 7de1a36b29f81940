/**
 * PostgreSQL implementation of AnchoringStore (migrations/postgres/0005, 0014): the same
 * statements as the SQLite store (./sqlite-store.ts), rows mapped by the same functions and the
 * same node store rules (./rows.ts: a tenant log's four lowest levels are computed from its
 * records' attestation hashes; the epoch log, "#epochs", stores every level).
 *
 * Where it differs:
 * - setTenantLogSize is one upsert (INSERT ... ON CONFLICT DO UPDATE) where SQLite tries the
 *   UPDATE first and inserts when it changed nothing: two companions giving a tenant its first
 *   leaf at once cannot both insert. (Seals of one tenant are serialised anyway by the tenant
 *   row lock the evidence store's logHead takes; see ../evidence/postgres-store.ts.)
 * - insertEpoch writes the epoch, its leaves and the tenants' anchored sizes atomically (a
 *   savepoint inside the caller's transaction), the leaves in one statement from a JSON array
 *   rather than a statement per leaf, so an epoch of many tenants is three round trips and no
 *   parameter limit applies. Concurrency: two companions closing the same period both compute
 *   epoch_seq = last + 1 and insert it; the PRIMARY KEY (epoch_seq) and UNIQUE (period_end)
 *   make the second wait for the first and then fail with a unique violation, so exactly one
 *   epoch is written and the loser's whole transaction rolls back (nothing to lock: the
 *   constraint is the arbiter, as SQLite's single writer plus the same constraint is there).
 *   The anchored sizes move in one conditional UPDATE (anchored_size < new size), so they
 *   never go back whatever order two epochs commit in; when one epoch names a tenant twice,
 *   the larger size wins, as SQLite's row-by-row updates leave it.
 * - logsBehind has no ORDER BY in either engine; its order is not part of the interface.
 *
 * The trees' caches (../anchoring/stored-tree.ts) are shared by stores with the same
 * `treeCacheKey`. By default each store built here has its own, so a store built per
 * transaction starts with empty caches: correct when several companions append to one
 * database, at the cost of reading a log's right edge on its first append in each transaction.
 * Passing one key (the pool, say) for the pool's store and every transaction's shares them as
 * the SQLite engine does, which is only right when this process is the only writer: a leaf this
 * process appended and rolled back at the size another process then committed stays cached.
 */
import type { PgTransaction, Queryable } from '../core/postgres/connect.ts';
import { batchReads } from '../core/postgres/batch-reads.ts';
import type { TenantPrefetch } from '../core/postgres/batch-reads.ts';
import { writeBehind } from '../core/postgres/write-behind.ts';
import { atomically } from '../core/postgres/connect.ts';
import { TENANT_LOG_UNSTORED_LEVELS, isTenantLog, toBehind, toEpoch, toLeaf, toLog, toRecordLeaf } from './rows.ts';
import type { BehindDbRow, EpochDbRow, LeafDbRow, LogDbRow, RecordLeafDbRow } from './rows.ts';
import type { AnchoringStore } from './store.ts';
import { createPostgresTimestampStore } from './timestamps-store.ts';
import { createPostgresWitnessStore } from './witness-store.ts';

export interface PostgresAnchoringStoreOptions {
  /** Shared by the stores whose trees should share caches (NodeStore.treeCacheKey); default: this store's own. */
  treeCacheKey?: object;
}

/** The advisory lock key epoch closers take (lockEpochClose): an arbitrary constant, used for nothing else. */
export const EPOCH_CLOSE_LOCK_KEY = 7_401_002;

/** A seal batch's new tree nodes in one statement (core/postgres/write-behind.ts), as text arrays. */
function insertNodes(sql: PgTransaction, rows: unknown[][]) {
  const column = (i: number) => sql.array(rows.map((row) => String(row[i])), 25);
  return sql`INSERT INTO merkle_nodes (log_id, level, idx, hash)
    SELECT log_id, level::bigint, idx::bigint, decode(hash, 'hex') FROM unnest(${column(0)}::text[], ${column(1)}::text[], ${column(2)}::text[], ${column(3)}::text[])
      AS v(log_id, level, idx, hash)`;
}

/** A tenant log's right edge as a seal batch read it ahead: stored nodes by "level/idx", and the last unstored leaves. */
interface Edge {
  nodes: Map<string, Uint8Array>;
  /** Attestation hashes of leaves [from, from + leaves.length). */
  from: number;
  leaves: Uint8Array[];
}

const edgeKey = (tenantId: string) => `tenant log edge\n${tenantId}`;
const UNSTORED_WIDTH = 2 ** TENANT_LOG_UNSTORED_LEVELS;
const bytes = (b: Buffer) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength);

/**
 * A seal batch reads the tenant log's right edge with the tenant's lock and log head
 * (core/postgres/batch-reads.ts): the log's next leaf is the head's tenant_seq + 1 = size, and
 * its first append reads the frontier of that size (anchoring/stored-tree.ts): one stored node
 * per set bit of size at level 4 or above, idx = (size >> level) - 1, and below that the last
 * size mod 16 leaves, from which the unstored levels are hashed. One statement computes size
 * from the head as the head read does and selects both; nodes and leaves never change once
 * committed, so what it read holds for the transaction (a node it did not find is asked for).
 */
export const prefetchEdge: TenantPrefetch = (sql, tenantId, reads) => {
  const query = sql<{ level: number; idx: number; hash: Buffer }[]>`WITH s AS (
      SELECT coalesce((SELECT tenant_seq + 1 FROM sealed_records WHERE tenant_id = ${tenantId} ORDER BY tenant_seq DESC LIMIT 1), 0) AS size)
    SELECT f.level, n.idx, n.hash FROM s CROSS JOIN generate_series(${TENANT_LOG_UNSTORED_LEVELS}::int, 40) AS f (level)
      JOIN merkle_nodes n ON n.log_id = ${tenantId} AND n.level = f.level AND n.idx = (s.size >> f.level) - 1
     WHERE (s.size >> f.level) & 1 = 1
    UNION ALL
    SELECT -1, r.tenant_seq, decode(r.attestation_hash, 'hex') FROM s JOIN sealed_records r
        ON r.tenant_id = ${tenantId} AND r.tenant_seq >= s.size - s.size % ${UNSTORED_WIDTH} AND r.tenant_seq < s.size
    ORDER BY 1, 2`;
  query.execute();
  const edge = Promise.resolve(query).then((rows): Edge => {
    const nodes = new Map<string, Uint8Array>();
    const leaves: Uint8Array[] = [];
    let from = 0;
    for (const r of rows) {
      if (r.level >= 0) nodes.set(`${r.level}/${r.idx}`, bytes(r.hash));
      else {
        if (leaves.length === 0) from = r.idx;
        leaves.push(bytes(r.hash));
      }
    }
    return { nodes, from, leaves };
  });
  reads.put(edgeKey(tenantId), edge, 'fixed');
};

/**
 * A seal batch's tenant-log sizes in one statement, written behind: one row per tenant (its
 * last size; ON CONFLICT DO UPDATE may not touch a row twice in one statement).
 */
function setSizes(sql: PgTransaction, rows: unknown[][]) {
  const byTenant = new Map<string, { size: number; at: string }>();
  for (const [tenantId, size, at] of rows as [string, number, string][]) byTenant.set(tenantId, { size, at });
  const list = [...byTenant.values()];
  return sql`INSERT INTO tenant_logs (tenant_id, size, last_recorded_at)
    SELECT tenant_id, size::bigint, at FROM unnest(${sql.array([...byTenant.keys()], 25)}::text[],
      ${sql.array(list.map((t) => String(t.size)), 25)}::text[], ${sql.array(list.map((t) => t.at), 25)}::text[]) AS v(tenant_id, size, at)
    ON CONFLICT (tenant_id) DO UPDATE SET size = excluded.size, last_recorded_at = excluded.last_recorded_at`;
}

export function createPostgresAnchoringStore(sql: Queryable, options: PostgresAnchoringStoreOptions = {}): AnchoringStore {
  return {
    // RFC 3161 timestamp requests and tokens (./timestamps-store.ts).
    ...createPostgresTimestampStore(sql),
    // Witness submissions, witnesses' sizes and cosignatures (./witness-store.ts).
    ...createPostgresWitnessStore(sql),
    treeCacheKey: options.treeCacheKey ?? {},
    async getNode(logId, level, idx) {
      const edge = batchReads(sql)?.get<Edge>(edgeKey(logId));
      const ahead = edge && (await edge).nodes.get(`${level}/${idx}`);
      if (ahead) return ahead;
      const [r] = await sql<{ hash: Buffer }[]>`SELECT hash FROM merkle_nodes WHERE log_id = ${logId} AND level = ${level} AND idx = ${idx}`;
      return r && new Uint8Array(r.hash.buffer, r.hash.byteOffset, r.hash.byteLength);
    },
    async putNode(logId, level, idx, hash) {
      const behind = writeBehind(sql);
      if (behind?.add('merkle_nodes', insertNodes, [logId, level, idx, Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).toString('hex')])) return;
      await sql`INSERT INTO merkle_nodes (log_id, level, idx, hash) VALUES (${logId}, ${level}, ${idx}, ${hash})`;
    },
    async leafCount(logId) {
      if (isTenantLog(logId)) {
        const [r] = await sql<{ size: number }[]>`SELECT size FROM tenant_logs WHERE tenant_id = ${logId}`;
        return r?.size ?? 0;
      }
      const [r] = await sql<{ n: number | null }[]>`SELECT max(idx) + 1 AS n FROM merkle_nodes WHERE log_id = ${logId} AND level = 0`;
      return r?.n ?? 0;
    },
    async levelNodes(logId, level) {
      const rows = await sql<{ hash: Buffer }[]>`SELECT hash FROM merkle_nodes WHERE log_id = ${logId} AND level = ${level} ORDER BY idx`;
      return rows.map((r) => r.hash);
    },
    lowestStoredLevel: async (logId) => (isTenantLog(logId) ? TENANT_LOG_UNSTORED_LEVELS : 0),
    async leafData(logId, from, to) {
      const edge = batchReads(sql)?.get<Edge>(edgeKey(logId));
      if (edge) {
        const e = await edge;
        if (from >= e.from && to <= e.from + e.leaves.length) return e.leaves.slice(from - e.from, to - e.from);
      }
      const rows = await sql<{ attestation_hash: string }[]>`SELECT attestation_hash FROM sealed_records
        WHERE tenant_id = ${logId} AND tenant_seq >= ${from} AND tenant_seq < ${to} ORDER BY tenant_seq`;
      return rows.map((r) => Buffer.from(r.attestation_hash, 'hex'));
    },
    async tenantLogSize(tenantId) {
      const [r] = await sql<{ size: number }[]>`SELECT size FROM tenant_logs WHERE tenant_id = ${tenantId}`;
      return r?.size ?? 0;
    },
    async tenantLog(tenantId) {
      const [r] = await sql<LogDbRow[]>`SELECT tenant_id, size, anchored_size, last_recorded_at FROM tenant_logs WHERE tenant_id = ${tenantId}`;
      return r && toLog(r);
    },
    async setTenantLogSize(tenantId, size, lastRecordedAt) {
      const behind = writeBehind(sql);
      if (behind?.add('tenant_logs', setSizes, [tenantId, size, lastRecordedAt])) return;
      await sql`INSERT INTO tenant_logs (tenant_id, size, last_recorded_at) VALUES (${tenantId}, ${size}, ${lastRecordedAt})
        ON CONFLICT (tenant_id) DO UPDATE SET size = excluded.size, last_recorded_at = excluded.last_recorded_at`;
    },
    async unanchoredLogs() {
      const rows = await sql<LogDbRow[]>`SELECT tenant_id, size, anchored_size, last_recorded_at FROM tenant_logs
        WHERE size > anchored_size ORDER BY tenant_id`;
      return rows.map(toLog);
    },
    async logsBehind() {
      // Per tenant, max(tenant_seq) is one probe of UNIQUE (tenant_id, tenant_seq): O(tenants).
      const rows = await sql<BehindDbRow[]>`
        SELECT tenant_id, records, size FROM (
          SELECT t.id AS tenant_id,
                 coalesce((SELECT max(tenant_seq) + 1 FROM sealed_records AS s WHERE s.tenant_id = t.id), 0) AS records,
                 coalesce((SELECT size FROM tenant_logs AS l WHERE l.tenant_id = t.id), 0) AS size
            FROM tenants AS t) AS counts
         WHERE records > size`;
      return rows.map(toBehind);
    },
    async recordLeaves(tenantId, from, to) {
      const rows = await sql<RecordLeafDbRow[]>`SELECT attestation_hash, recorded_at FROM sealed_records
        WHERE tenant_id = ${tenantId} AND tenant_seq >= ${from} AND tenant_seq < ${to} ORDER BY tenant_seq`;
      return rows.map(toRecordLeaf);
    },
    async recordsBefore(tenantId, at) {
      // One probe of sealed_records_by_time (tenant_id, recorded_at, tenant_seq), read backwards
      // from the boundary, as in SQLite: the sealer stamps a tenant's records in log order.
      const [r] = await sql<{ seq: number }[]>`SELECT tenant_seq AS seq FROM sealed_records
        WHERE tenant_id = ${tenantId} AND recorded_at < ${at} ORDER BY recorded_at DESC, tenant_seq DESC LIMIT 1`;
      return r ? r.seq + 1 : 0;
    },
    async firstRecordedAt() {
      const [r] = await sql<{ at: string | null }[]>`SELECT min(recorded_at) AS at FROM sealed_records`;
      return r?.at ?? undefined;
    },
    async lastEpoch() {
      const [r] = await sql<EpochDbRow[]>`SELECT * FROM epochs ORDER BY epoch_seq DESC LIMIT 1`;
      return r && toEpoch(r);
    },
    async epoch(epochSeq) {
      const [r] = await sql<EpochDbRow[]>`SELECT * FROM epochs WHERE epoch_seq = ${epochSeq}`;
      return r && toEpoch(r);
    },
    async epochs(after, limit) {
      const rows = await sql<EpochDbRow[]>`SELECT * FROM epochs WHERE epoch_seq > ${after} ORDER BY epoch_seq LIMIT ${limit}`;
      return rows.map(toEpoch);
    },
    async epochLeaves(epochSeq) {
      const rows = await sql<LeafDbRow[]>`SELECT * FROM epoch_leaves WHERE epoch_seq = ${epochSeq} ORDER BY leaf_index`;
      return rows.map(toLeaf);
    },
    async anchoringLeaf(tenantId, tenantSeq) {
      const [r] = await sql<LeafDbRow[]>`SELECT * FROM epoch_leaves
        WHERE tenant_id = ${tenantId} AND tenant_size > ${tenantSeq} ORDER BY tenant_size LIMIT 1`;
      return r && toLeaf(r);
    },
    async anchoredBefore(tenantId, size) {
      const [r] = await sql<{ size: number | null }[]>`SELECT max(tenant_size) AS size FROM epoch_leaves
        WHERE tenant_id = ${tenantId} AND tenant_size < ${size}`;
      return r?.size ?? 0;
    },
    async lockEpochClose() {
      await sql`SELECT pg_advisory_xact_lock(${EPOCH_CLOSE_LOCK_KEY})`;
    },
    async insertEpoch(e, rows) {
      await atomically(sql, async (tx) => {
        await tx`INSERT INTO epochs
          (epoch_seq, period_start, period_end, cadence_seconds, tenant_count, canonical_root, prev_epoch_digest, epoch_digest,
           anchored_at, header, signature, key_id, checkpoint)
          VALUES (${e.epochSeq}, ${e.periodStart}, ${e.periodEnd}, ${e.cadenceSeconds}, ${e.tenantCount}, ${e.canonicalRoot},
            ${e.prevEpochDigest}, ${e.epochDigest}, ${e.anchoredAt}, ${e.header}, ${e.signature}, ${e.keyId}, ${e.checkpoint})`;
        if (rows.length === 0) return;
        // One jsonb parameter (the driver serialises it), however many leaves.
        const leaves = tx.json(rows.map((l) => ({
          epoch_seq: l.epochSeq, leaf_index: l.leafIndex, tenant_id: l.tenantId, tenant_size: l.tenantSize, tenant_chain_root: l.tenantChainRoot,
        })));
        await tx`INSERT INTO epoch_leaves (epoch_seq, leaf_index, tenant_id, tenant_size, tenant_chain_root)
          SELECT epoch_seq, leaf_index, tenant_id, tenant_size, tenant_chain_root
            FROM jsonb_to_recordset(${leaves})
                 AS v(epoch_seq bigint, leaf_index bigint, tenant_id text, tenant_size bigint, tenant_chain_root text)`;
        await tx`UPDATE tenant_logs AS t SET anchored_size = v.size
          FROM (SELECT tenant_id, max(tenant_size) AS size
                  FROM jsonb_to_recordset(${leaves}) AS l(tenant_id text, tenant_size bigint)
                 GROUP BY tenant_id) AS v
         WHERE t.tenant_id = v.tenant_id AND t.anchored_size < v.size`;
      });
    },
  };
}
