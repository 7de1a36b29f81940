/**
 * Storage of epoch timestamps (migration 0022): the request rows, a leased job table
 * (core/jobs/queue.ts) written in the epoch's close transaction, and the verified tokens. Part of
 * AnchoringStore (./store.ts), so a close transaction and the job worker's storing
 * transaction reach it through `tx.anchoring`. Both engines' statements are here, beside each
 * other, so they cannot drift apart.
 */
import type { Sync } from '../core/async-store.ts';
import type { Db } from '../core/db.ts';
import type { JobRow } from '../core/jobs/queue.ts';
import type { Queryable } from '../core/postgres/connect.ts';

/** A row of epoch_timestamp_requests: one epoch, one time-stamp authority. */
export interface TimestampRequestRow extends JobRow<'timestamped'> {
  epoch_seq: number;
  tsa_url: string;
  created_at: string;
}

export interface NewTimestampRequest {
  id: string;
  epochSeq: number;
  tsaUrl: string;
  /** Unix ms: due at once. */
  runAt: number;
  createdAt: string;
}

/** A verified token, as stored. */
export interface EpochTimestampRow {
  epochSeq: number;
  tsaUrl: string;
  genTime: string;
  /** The TimeStampToken, DER. */
  token: Uint8Array;
  storedAt: string;
}

export interface TimestampStore {
  /** In the close transaction: one pending request per authority (an existing pair is left alone). */
  enqueueTimestampRequests(rows: readonly NewTimestampRequest[]): Promise<void>;
  /** Stores a verified token; a second token from the same authority for the epoch is ignored. */
  insertTimestamp(row: EpochTimestampRow): Promise<void>;
  /** The epoch's tokens, by authority URL, and how many authorities it was sent to. */
  epochTimestamps(epochSeq: number): Promise<{ tokens: EpochTimestampRow[]; requested: number }>;
}

interface TokenDbRow {
  epoch_seq: number;
  tsa_url: string;
  gen_time: string;
  token: Buffer;
  stored_at: string;
}

const toToken = (r: TokenDbRow): EpochTimestampRow => ({
  epochSeq: r.epoch_seq,
  tsaUrl: r.tsa_url,
  genTime: r.gen_time,
  token: new Uint8Array(r.token.buffer, r.token.byteOffset, r.token.byteLength),
  storedAt: r.stored_at,
});

export function createSqliteTimestampStore(db: Db): Sync<TimestampStore> {
  const enqueue = db.prepare(`INSERT INTO epoch_timestamp_requests (id, epoch_seq, tsa_url, status, attempt_count, run_at, created_at)
    VALUES (?, ?, ?, 'pending', 0, ?, ?) ON CONFLICT (epoch_seq, tsa_url) DO NOTHING`);
  const insert = db.prepare(`INSERT INTO epoch_timestamps (epoch_seq, tsa_url, gen_time, token, stored_at)
    VALUES (?, ?, ?, ?, ?) ON CONFLICT (epoch_seq, tsa_url) DO NOTHING`);
  const tokens = db.prepare<[number], TokenDbRow>('SELECT * FROM epoch_timestamps WHERE epoch_seq = ? ORDER BY tsa_url');
  const requested = db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM epoch_timestamp_requests WHERE epoch_seq = ?');
  return {
    enqueueTimestampRequests(rows) {
      for (const r of rows) enqueue.run(r.id, r.epochSeq, r.tsaUrl, r.runAt, r.createdAt);
    },
    insertTimestamp(r) {
      insert.run(r.epochSeq, r.tsaUrl, r.genTime, Buffer.from(r.token), r.storedAt);
    },
    epochTimestamps: (epochSeq) => ({ tokens: tokens.all(epochSeq).map(toToken), requested: requested.get(epochSeq)?.n ?? 0 }),
  };
}

export function createPostgresTimestampStore(sql: Queryable): TimestampStore {
  return {
    async enqueueTimestampRequests(rows) {
      for (const r of rows) {
        await sql`INSERT INTO epoch_timestamp_requests (id, epoch_seq, tsa_url, status, attempt_count, run_at, created_at)
          VALUES (${r.id}, ${r.epochSeq}, ${r.tsaUrl}, 'pending', 0, ${r.runAt}, ${r.createdAt}) ON CONFLICT (epoch_seq, tsa_url) DO NOTHING`;
      }
    },
    async insertTimestamp(r) {
      await sql`INSERT INTO epoch_timestamps (epoch_seq, tsa_url, gen_time, token, stored_at)
        VALUES (${r.epochSeq}, ${r.tsaUrl}, ${r.genTime}, ${Buffer.from(r.token)}, ${r.storedAt}) ON CONFLICT (epoch_seq, tsa_url) DO NOTHING`;
    },
    async epochTimestamps(epochSeq) {
      const rows = await sql<TokenDbRow[]>`SELECT * FROM epoch_timestamps WHERE epoch_seq = ${epochSeq} ORDER BY tsa_url`;
      const [n] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM epoch_timestamp_requests WHERE epoch_seq = ${epochSeq}`;
      return { tokens: rows.map(toToken), requested: n?.n ?? 0 };
    },
  };
}
