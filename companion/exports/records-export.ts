/**
 * GET /tenant/exports/records (interface-spec Tenant exports): the tenant's sealed records in
 * stable chronological order, half-open on the signed recorded_at (from <= recorded_at < to),
 * one page per request, each record self-contained with its seal and a ready verify request.
 *
 * Paging is a keyset on (recorded_at, tenant_seq), the sealed_records_by_time index. The sealer
 * never stamps a record earlier than its tenant's log head (evidence/sealer.ts), so every seal
 * committed after a page was read sorts after that page: paging never skips or repeats a record
 * under concurrent writes. Each page's last position is fixed before the first row is written,
 * so rows committed while the page streams belong to the next page, never to both.
 *
 * Memory stays constant: rows are read in small keyset chunks, each chunk serialised and handed
 * to a ReadableStream only when the client pulls (backpressure), and no statement stays open
 * between chunks, so seals on the same connection never wait for a slow reader.
 *
 * Each record's line is built once (recordLine): the signed attestation, most of a record and
 * present twice (in evidence_packet and in verify_request), is spliced in as the stored text;
 * only the short fields around it are serialised, and each chunk is encoded to UTF-8 once.
 */
import { fromBase64Url, toBase64Url } from '../../shared/encoding.ts';
import { ProblemError } from '../core/errors.ts';
import { recordBodyJson } from '../evidence/record-view.ts';
import { evidenceHref } from '../evidence/sealer.ts';
import { OWNER_REVIEW_NOTICE } from './notice.ts';
import type { ExportRecordRow, ExportStore, RecordFilter, RecordPosition } from './store.ts';

/** Records per page; a client pages with next_cursor until a page comes back empty. */
export const EXPORT_PAGE_SIZE = 1000;
/** Rows read and serialised per pull of the stream. */
const CHUNK_ROWS = 50;

/** The whole log when from or to is omitted (recorded_at is RFC 3339 UTC with milliseconds). */
export const EARLIEST = '0000-01-01T00:00:00.000Z';
export const LATEST = '9999-12-31T23:59:59.999Z';

export const NDJSON = 'application/x-ndjson';

export interface RecordsQuery {
  from: string;
  to: string;
  after: RecordPosition | undefined;
  filter: RecordFilter;
}

const CURSOR_VERSION = 1;

/** Opaque to clients: base64url of the JSON array [version, recorded_at, tenant_seq]. */
export function encodeCursor(p: RecordPosition): string {
  return toBase64Url(new TextEncoder().encode(JSON.stringify([CURSOR_VERSION, p.recordedAt, p.tenantSeq])));
}

export function decodeCursor(cursor: string): RecordPosition {
  const refuse = () =>
    ProblemError.validation([{ in: 'query', path: '/cursor', message: 'not a cursor returned by this export; start without one', code: 'invalid_cursor' }]);
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(fromBase64Url(cursor)));
  } catch {
    throw refuse();
  }
  if (
    !Array.isArray(value) ||
    value.length !== 3 ||
    value[0] !== CURSOR_VERSION ||
    typeof value[1] !== 'string' ||
    !RFC3339_MS_UTC.test(value[1]) ||
    !Number.isSafeInteger(value[2]) ||
    (value[2] as number) < 0
  ) {
    throw refuse();
  }
  return { recordedAt: value[1], tenantSeq: value[2] as number };
}

const RFC3339_MS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * from/to as the stored form (RFC 3339 UTC with milliseconds), so the comparison in SQL is the
 * comparison of instants. Finer than milliseconds is refused rather than rounded: rounding
 * would move a half-open boundary onto or off a record.
 */
export function boundary(value: string, name: 'from' | 'to'): string {
  const m = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.(\d{1,9}))?(?:Z|[+-]\d{2}:\d{2})$/i.exec(value);
  const ms = m ? Date.parse(value) : Number.NaN;
  if (!m || Number.isNaN(ms) || (m[1] !== undefined && /[1-9]/.test(m[1].slice(3)))) {
    throw ProblemError.validation([
      { in: 'query', path: `/${name}`, message: 'expected an RFC 3339 timestamp with at most millisecond precision, e.g. 2025-01-01T00:00:00.000Z', code: 'invalid_timestamp' },
    ]);
  }
  return new Date(ms).toISOString();
}

export function recordsQuery(q: { from?: string | undefined; to?: string | undefined; cursor?: string | undefined } & RecordFilter): RecordsQuery {
  const from = q.from === undefined ? EARLIEST : boundary(q.from, 'from');
  const to = q.to === undefined ? LATEST : boundary(q.to, 'to');
  // Half-open (interface-spec Tenant exports: from <= recorded_at < to): from equal to to is a
  // window that holds nothing, answered as an empty page, which a client exporting "since the
  // last run" meets whenever nothing happened. Only a window that ends before it starts is wrong.
  if (to < from) {
    throw ProblemError.validation([{ in: 'query', path: '/to', message: `must not be earlier than from (${from}); the range is half-open`, code: 'reversed_range' }]);
  }
  return { from, to, after: q.cursor === undefined ? undefined : decodeCursor(q.cursor), filter: { pack: q.pack, kind: q.kind, decision: q.decision } };
}

export interface RecordsPage {
  /** Position of the page's last record; undefined when the page is empty. */
  end: RecordPosition | undefined;
  /** The page's records, read lazily chunk by chunk: each record as the pieces of its JSON text. */
  chunks(): AsyncIterable<string[][]>;
}

export async function recordsPage(store: ExportStore, tenantId: string, q: RecordsQuery, pageSize = EXPORT_PAGE_SIZE): Promise<RecordsPage> {
  const end = await store.pageEnd(tenantId, q, pageSize);
  return {
    end,
    async *chunks() {
      if (!end) return;
      let after = q.after;
      for (;;) {
        // The store answers a whole chunk at once: no statement stays open across a yield.
        const rows = await store.records(tenantId, { from: q.from, after, end, filter: q.filter }, CHUNK_ROWS);
        const out: string[][] = [];
        for (const row of rows) out.push(recordPieces(row));
        if (out.length > 0) yield out;
        const last = rows[rows.length - 1];
        if (!last || out.length < CHUNK_ROWS) return;
        after = { recordedAt: last.recordedAt, tenantSeq: last.tenantSeq };
      }
    },
  };
}

/**
 * Keys recordBody writes itself; a details object naming one of them, or an array-index key
 * (which an object spread would move to the front), takes the general path.
 */
const BODY_KEYS = new Set([
  'action_key', 'vertical', 'pack', 'kind', 'decision', 'status', 'review_route', 'payload_hash',
  'recorded_at', 'tenant_seq', 'credits', 'evidence_packet', 'verify_request',
]);

const json = JSON.stringify;

/**
 * The record as GET /v1/records/{action_key} answers it (evidence/record-view.ts recordBody),
 * character for character what JSON.stringify(recordBody(row)) gives with the stored
 * attestation text in place: the same members in the same order.
 */
export function recordLine(row: ExportRecordRow): string {
  return recordPieces(row).join('');
}

/**
 * recordLine in pieces. Only the short fields around the attestation are serialised; the
 * attestation, most of the line and present twice, is a piece of its own as read, so a chunk
 * encodes it straight into the chunk's buffer (encodeChunk) without building the line first.
 */
function recordPieces(row: ExportRecordRow): string[] {
  const extra = detailsMembers(row.details);
  if (extra === undefined) return [recordBodyJson({ ...row, devKey: row.devKey === 1 })];
  const href = evidenceHref(row.vertical, row.actionKey);
  const head =
    `{"action_key":${json(row.actionKey)},"vertical":${json(row.vertical)},"pack":${json(row.pack)},"kind":${json(row.kind)},` +
    `"decision":${json(row.decision)},"status":${json(row.status)},"review_route":${json(row.reviewRoute)},` +
    `"payload_hash":${json(row.payloadHash)},"recorded_at":${json(row.recordedAt)},"tenant_seq":${row.tenantSeq},"credits":${row.credits}` +
    (extra ? `,${extra}` : '');
  const packet = `{"action_key":${json(row.actionKey)},"href":${json(href)},"status":${json(row.status)},"packet_hash":${json(row.packetHash)},` +
    `"seal":{"alg":"Ed25519","key_id":${json(row.keyId)},"dev_key":${row.devKey === 1},"attestation":`;
  const sealTail = `,"attestation_hash":${json(row.attestationHash)},"signature":${json(row.signature)}}`;
  return [
    `${head},"evidence_packet":${packet}`,
    row.attestation,
    `${sealTail}},"verify_request":${packet}`,
    row.attestation,
    `${sealTail},"decision":${json(row.decision)},"payload_hash":${json(row.payloadHash)},"review_route":${json(row.reviewRoute)}}}`,
  ];
}

/** Recently seen details texts and their members as recordBody writes them. */
const detailsCache = new Map<string, string | undefined>();
const DETAILS_CACHE_SIZE = 512;

/**
 * The stored details' members as they follow `credits` in recordBody (`""` for none), or
 * undefined when the general path must build the line. Records of one pack and decision share
 * their details text (next step, catalog references), so the parse is remembered per text.
 */
function detailsMembers(text: string): string | undefined {
  if (text === '{}') return '';
  if (detailsCache.has(text)) return detailsCache.get(text);
  const details = JSON.parse(text) as Record<string, unknown>;
  const members = Object.keys(details).some((k) => BODY_KEYS.has(k) || /^(?:0|[1-9]\d*)$/.test(k)) ? undefined : json(details).slice(1, -1);
  if (detailsCache.size >= DETAILS_CACHE_SIZE) detailsCache.delete(detailsCache.keys().next().value!);
  detailsCache.set(text, members);
  return members;
}

/**
 * The records as UTF-8 with `sep` between them (and `before`, `after` around), in one buffer
 * sized exactly: every piece is encoded once, straight into place.
 */
function encodeChunk(records: string[][], sep: string, before = '', after = ''): Buffer {
  let size = Buffer.byteLength(before) + Buffer.byteLength(after) + Buffer.byteLength(sep) * Math.max(0, records.length - 1);
  for (const pieces of records) for (const piece of pieces) size += Buffer.byteLength(piece);
  const out = Buffer.allocUnsafe(size);
  let at = out.write(before);
  records.forEach((pieces, i) => {
    if (i > 0) at += out.write(sep, at);
    for (const piece of pieces) at += out.write(piece, at);
  });
  out.write(after, at);
  return out;
}

/** NDJSON (one record per line, https://github.com/ndjson/ndjson-spec). */
export function ndjsonStream(page: RecordsPage): ReadableStream<Uint8Array> {
  return pullStream(page.chunks(), (records, head) => encodeChunk(records, '\n', head, '\n'));
}

/** A JSON page object whose records array is streamed; count and next_cursor close it. */
export function jsonStream(page: RecordsPage, q: RecordsQuery): ReadableStream<Uint8Array> {
  let count = 0;
  let first = true;
  const head = `{"notice":${JSON.stringify(OWNER_REVIEW_NOTICE)},"from":${JSON.stringify(q.from)},"to":${JSON.stringify(q.to)},"records":[`;
  const tail = () => `],"count":${count},"next_cursor":${page.end ? JSON.stringify(encodeCursor(page.end)) : 'null'}}`;
  return pullStream(
    page.chunks(),
    (records, head) => {
      count += records.length;
      const out = encodeChunk(records, ',', first ? head : `${head},`);
      first = false;
      return out;
    },
    head,
    tail,
  );
}

/** `render` gets each chunk's records and the text to put before them (the head, once). */
function pullStream(
  chunks: AsyncIterable<string[][]>,
  render: (records: string[][], before: string) => Buffer,
  head = '',
  tail: () => string = () => '',
): ReadableStream<Uint8Array> {
  const it = chunks[Symbol.asyncIterator]();
  let started = false;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const text = started ? '' : head;
        started = true;
        const next = await it.next();
        if (next.done) {
          const end = text + tail();
          if (end) controller.enqueue(Buffer.from(end));
          controller.close();
          return;
        }
        controller.enqueue(render(next.value, text));
      },
      async cancel() {
        await it.return?.();
      },
    },
    // One chunk in flight: the reader's pace sets how much is ever held.
    { highWaterMark: 1 },
  );
}
