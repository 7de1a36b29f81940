/**
 * What witnessing needs from storage (migration 0023), part of AnchoringStore so each
 * transaction's anchoring view carries it: the add-checkpoint jobs (one per closed epoch and
 * witness, a leased job table: core/jobs/queue.ts), the size each witness last cosigned per
 * checkpoint origin, and the verified cosignature lines. SQLite and PostgreSQL implementations
 * below share the row mapping.
 */
import type { Sync } from '../core/async-store.ts';
import type { Db } from '../core/db.ts';
import type { Queryable } from '../core/postgres/connect.ts';
import type { JobRow } from '../core/jobs/queue.ts';

/** A witness_submissions row as both engines return it. */
export interface WitnessSubmissionRow extends JobRow<'done'> {
  witness: string;
  epoch_seq: number;
  outcome: 'cosigned' | 'superseded' | null;
  created_at: string;
}

export interface CosignatureRow {
  epochSeq: number;
  keyName: string;
  keyIdHex: string;
  witness: string;
  cosignedAt: number;
  line: string;
  storedAt: string;
}

interface CosignatureDbRow {
  epoch_seq: number;
  key_name: string;
  key_id: string;
  witness: string;
  cosigned_at: number;
  line: string;
  stored_at: string;
}

const toCosignature = (r: CosignatureDbRow): CosignatureRow => ({
  epochSeq: r.epoch_seq,
  keyName: r.key_name,
  keyIdHex: r.key_id,
  witness: r.witness,
  cosignedAt: r.cosigned_at,
  line: r.line,
  storedAt: r.stored_at,
});

export interface WitnessStore {
  /** One pending submission per witness for the epoch (an existing one is left as it is). */
  enqueueWitnessSubmissions(rows: readonly { id: string; witness: string; epochSeq: number; runAt: number; createdAt: string }[]): Promise<void>;
  witnessSubmissions(epochSeq: number): Promise<WitnessSubmissionRow[]>;
  setWitnessSubmissionOutcome(id: string, outcome: 'cosigned' | 'superseded'): Promise<void>;
  /** The tree size the witness last cosigned for the origin, as far as this service knows (0: none). */
  witnessSize(witness: string, origin: string): Promise<number>;
  setWitnessSize(witness: string, origin: string, size: number, at: string): Promise<void>;
  /** Stores verified cosignature lines; a line already stored for (epoch, key) is kept. */
  insertCosignatures(rows: readonly CosignatureRow[]): Promise<void>;
  /** The epoch's cosignatures, by key name. */
  cosignatures(epochSeq: number): Promise<CosignatureRow[]>;
}

export function createSqliteWitnessStore(db: Db): Sync<WitnessStore> {
  const enqueue = db.prepare(`INSERT INTO witness_submissions (id, witness, epoch_seq, status, run_at, created_at)
    VALUES (?, ?, ?, 'pending', ?, ?) ON CONFLICT (witness, epoch_seq) DO NOTHING`);
  const submissions = db.prepare<[number], WitnessSubmissionRow>('SELECT * FROM witness_submissions WHERE epoch_seq = ? ORDER BY witness');
  const outcome = db.prepare('UPDATE witness_submissions SET outcome = ? WHERE id = ?');
  const size = db.prepare<[string, string], { size: number }>('SELECT size FROM witness_states WHERE witness = ? AND origin = ?');
  const setSize = db.prepare(`INSERT INTO witness_states (witness, origin, size, updated_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (witness, origin) DO UPDATE SET size = excluded.size, updated_at = excluded.updated_at`);
  const insert = db.prepare(`INSERT INTO epoch_cosignatures (epoch_seq, key_name, key_id, witness, cosigned_at, line, stored_at)
    VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (epoch_seq, key_name, key_id) DO NOTHING`);
  const list = db.prepare<[number], CosignatureDbRow>('SELECT * FROM epoch_cosignatures WHERE epoch_seq = ? ORDER BY key_name, key_id');
  return {
    enqueueWitnessSubmissions(rows) {
      for (const r of rows) enqueue.run(r.id, r.witness, r.epochSeq, r.runAt, r.createdAt);
    },
    witnessSubmissions: (epochSeq) => submissions.all(epochSeq),
    setWitnessSubmissionOutcome(id, o) {
      outcome.run(o, id);
    },
    witnessSize: (witness, origin) => size.get(witness, origin)?.size ?? 0,
    setWitnessSize(witness, origin, s, at) {
      setSize.run(witness, origin, s, at);
    },
    insertCosignatures(rows) {
      for (const r of rows) insert.run(r.epochSeq, r.keyName, r.keyIdHex, r.witness, r.cosignedAt, r.line, r.storedAt);
    },
    cosignatures: (epochSeq) => list.all(epochSeq).map(toCosignature),
  };
}

export function createPostgresWitnessStore(sql: Queryable): WitnessStore {
  return {
    async enqueueWitnessSubmissions(rows) {
      for (const r of rows) {
        await sql`INSERT INTO witness_submissions (id, witness, epoch_seq, status, run_at, created_at)
          VALUES (${r.id}, ${r.witness}, ${r.epochSeq}, 'pending', ${r.runAt}, ${r.createdAt}) ON CONFLICT (witness, epoch_seq) DO NOTHING`;
      }
    },
    witnessSubmissions: async (epochSeq) => [...(await sql<WitnessSubmissionRow[]>`SELECT * FROM witness_submissions WHERE epoch_seq = ${epochSeq} ORDER BY witness`)],
    async setWitnessSubmissionOutcome(id, o) {
      await sql`UPDATE witness_submissions SET outcome = ${o} WHERE id = ${id}`;
    },
    async witnessSize(witness, origin) {
      const [r] = await sql<{ size: number }[]>`SELECT size FROM witness_states WHERE witness = ${witness} AND origin = ${origin}`;
      return r?.size ?? 0;
    },
    async setWitnessSize(witness, origin, s, at) {
      await sql`INSERT INTO witness_states (witness, origin, size, updated_at) VALUES (${witness}, ${origin}, ${s}, ${at})
        ON CONFLICT (witness, origin) DO UPDATE SET size = excluded.size, updated_at = excluded.updated_at`;
    },
    async insertCosignatures(rows) {
      for (const r of rows) {
        await sql`INSERT INTO epoch_cosignatures (epoch_seq, key_name, key_id, witness, cosigned_at, line, stored_at)
          VALUES (${r.epochSeq}, ${r.keyName}, ${r.keyIdHex}, ${r.witness}, ${r.cosignedAt}, ${r.line}, ${r.storedAt})
          ON CONFLICT (epoch_seq, key_name, key_id) DO NOTHING`;
      }
    },
    cosignatures: async (epochSeq) => (await sql<CosignatureDbRow[]>`SELECT * FROM epoch_cosignatures WHERE epoch_seq = ${epochSeq} ORDER BY key_name, key_id`).map(toCosignature),
  };
}
