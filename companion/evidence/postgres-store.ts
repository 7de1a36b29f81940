/**
 * PostgreSQL implementation of EvidenceStore (table sealed_records, migrations/postgres/0002).
 * Rows map to SealedRecordRow exactly as in the SQLite store (by ./rows.ts: the columns and
 * their types are the same, bigint arriving as a number).
 *
 * Where it differs: the log head. Under SQLite one writer seals at a time, so the head a sealer
 * reads is still the head when it appends tenant_seq = head + 1. Here several companions seal
 * for one tenant at once, so inside a transaction `logHead` first locks the tenant's row
 * (`SELECT ... FROM tenants ... FOR NO KEY UPDATE`) and only then reads the head, in a second
 * statement:
 * a concurrent sealer of the same tenant waits at that lock until this transaction ends, and its
 * own head read (a new statement, so a new READ COMMITTED snapshot) then sees this transaction's
 * records. The lock is held to COMMIT or ROLLBACK, so the tenant's chain stays gapless and never
 * forks (no unique violation on (tenant_id, tenant_seq), no two records with one prev hash).
 * Sealers of different tenants do not wait for each other. The lock must be taken before the
 * read: one statement locking and reading would read with the snapshot taken before the wait.
 * For the same reason the transaction must be READ COMMITTED (PostgreSQL's default, which the
 * store's transactions use): under REPEATABLE READ the head read would see the old snapshot.
 * (Taken inside a savepoint that later rolls back, the lock is released with it; the sealer
 * then reads the head again, locking again, before it appends.) A transaction that seals for
 * several tenants holds each tenant's lock from its first logHead to its end, so two such
 * transactions taking the same tenants in opposite orders deadlock: PostgreSQL then fails one
 * of the waiting statements ("deadlock detected") after deadlock_timeout; the sealer takes
 * them in one order (by id, evidence/sealer.ts) to avoid it. On the pool (no transaction) `logHead` is a plain read: nothing
 * can be appended on its strength, and a lock would end at once with the statement's own
 * transaction. NO KEY UPDATE rather than UPDATE: sealers still wait for each other, but rows
 * that merely reference the tenant (idempotency keys, deliveries, reviews) can be inserted by
 * others meanwhile.
 */
import type { PgTransaction, Queryable } from '../core/postgres/connect.ts';
import { batchReads } from '../core/postgres/batch-reads.ts';
import { writeBehind } from '../core/postgres/write-behind.ts';
import { toLogHead, toRecord } from './rows.ts';
import type { HeadDbRow, RecordDbRow } from './rows.ts';
import type { EvidenceStore, LogHead } from './store.ts';

/**
 * A seal batch's records in one statement (core/postgres/write-behind.ts): each column as one
 * text array, cast back to its type, so the statement is the same, and prepared once, for any
 * number of rows.
 */
function insertRecords(sql: PgTransaction, rows: unknown[][]) {
  const column = (i: number) => sql.array(rows.map((row) => (row[i] === null ? null : String(row[i]))) as string[], 25);
  return sql`INSERT INTO sealed_records
    (tenant_id, tenant_seq, action_key, vertical, pack, kind, decision, status, review_route, payload_hash,
     packet_hash, attestation, attestation_hash, signature, key_id, dev_key, recorded_at, credits, details)
    SELECT tenant_id, tenant_seq::bigint, action_key, vertical, pack, kind, decision, status, review_route, payload_hash,
           packet_hash, attestation, attestation_hash, signature, key_id, dev_key::bigint, recorded_at, credits::bigint, details
      FROM unnest(${column(0)}::text[], ${column(1)}::text[], ${column(2)}::text[], ${column(3)}::text[], ${column(4)}::text[],
                  ${column(5)}::text[], ${column(6)}::text[], ${column(7)}::text[], ${column(8)}::text[], ${column(9)}::text[],
                  ${column(10)}::text[], ${column(11)}::text[], ${column(12)}::text[], ${column(13)}::text[], ${column(14)}::text[],
                  ${column(15)}::text[], ${column(16)}::text[], ${column(17)}::text[], ${column(18)}::text[])
           WITH ORDINALITY
        AS v(tenant_id, tenant_seq, action_key, vertical, pack, kind, decision, status, review_route, payload_hash,
             packet_hash, attestation, attestation_hash, signature, key_id, dev_key, recorded_at, credits, details, n)
     ORDER BY n`;
}

export function createPostgresEvidenceStore(sql: Queryable): EvidenceStore {
  // A transaction's Queryable can open savepoints; the pool cannot.
  const inTransaction = 'savepoint' in sql;
  return {
    async logHead(tenantId): Promise<LogHead | undefined> {
      // Both statements are written at once (one round trip): the connection runs them in
      // order, and the read, a statement of its own, takes its snapshot once the lock is held.
      const lock = inTransaction ? sql`SELECT id FROM tenants WHERE id = ${tenantId} FOR NO KEY UPDATE`.execute() : undefined;
      const head = sql<HeadDbRow[]>`SELECT tenant_seq, attestation_hash, recorded_at FROM sealed_records
        WHERE tenant_id = ${tenantId} ORDER BY tenant_seq DESC LIMIT 1`.execute();
      // The reads the batch's seals of this tenant make next go out in the same round trip.
      batchReads(sql)?.tenant(tenantId);
      const [, [r]] = await Promise.all([lock, head]);
      return r && toLogHead(r);
    },
    async insertRecord(r) {
      const behind = writeBehind(sql);
      if (behind?.add('sealed_records', insertRecords, [
          r.tenantId, r.tenantSeq, r.actionKey, r.vertical, r.pack, r.kind, r.decision, r.status, r.reviewRoute, r.payloadHash,
          r.packetHash, r.attestation, r.attestationHash, r.signature, r.keyId, r.devKey ? 1 : 0, r.recordedAt, r.credits, r.details,
        ])) return;
      await sql`INSERT INTO sealed_records
        (tenant_id, tenant_seq, action_key, vertical, pack, kind, decision, status, review_route, payload_hash,
         packet_hash, attestation, attestation_hash, signature, key_id, dev_key, recorded_at, credits, details)
        VALUES (${r.tenantId}, ${r.tenantSeq}, ${r.actionKey}, ${r.vertical}, ${r.pack}, ${r.kind}, ${r.decision}, ${r.status},
          ${r.reviewRoute}, ${r.payloadHash}, ${r.packetHash}, ${r.attestation}, ${r.attestationHash}, ${r.signature}, ${r.keyId},
          ${r.devKey ? 1 : 0}, ${r.recordedAt}, ${r.credits}, ${r.details})`;
    },
    async findRecord(tenantId, actionKey) {
      const [r] = await sql<RecordDbRow[]>`SELECT * FROM sealed_records WHERE action_key = ${actionKey} AND tenant_id = ${tenantId}`;
      return r && toRecord(r);
    },
  };
}
