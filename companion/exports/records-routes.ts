/**
 * The records export and its coverage summary (interface-spec Tenant exports): every sealed
 * record of the tenant, page by page, each self-contained and verifiable offline.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { rfc3339 } from '../core/clock.ts';
import type { AppEnv } from '../core/router.ts';
import { defineRoute, jsonContent, z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import { SealedRecord } from '../evidence/schemas.ts';
import { anchoredCounts } from './anchoring-coverage.ts';
import { evidenceCoverage } from './coverage.ts';
import { NOTICE_HEADER, OWNER_REVIEW_NOTICE } from './notice.ts';
import { PREFIX_CHARS, bucketed, timelineRange } from './timeline.ts';
import { NDJSON, encodeCursor, jsonStream, ndjsonStream, recordsPage, recordsQuery } from './records-export.ts';

const Timestamp = (name: 'from' | 'to', description: string) =>
  z.string().max(40).optional().openapi({ param: { name, in: 'query' }, description, example: name === 'from' ? '2025-01-01T00:00:00.000Z' : '2025-02-01T00:00:00.000Z' });

const Filter = (name: 'pack' | 'kind' | 'decision', description: string) =>
  z.string().min(1).max(64).optional().openapi({ param: { name, in: 'query' }, description });

// .strict(): interface-spec Errors 422, an unknown parameter is rejected, never ignored.
const RecordsQuery = z
  .object({
    from: Timestamp('from', 'Inclusive lower bound on the signed recorded_at (RFC 3339, at most millisecond precision); default: the start of the log'),
    to: Timestamp('to', 'Exclusive upper bound on the signed recorded_at; default: no bound. Equal to from: an empty window, answered with an empty page; earlier than from: 422'),
    cursor: z.string().max(200).optional().openapi({ param: { name: 'cursor', in: 'query' }, description: 'next_cursor of the previous page; page until a page comes back empty' }),
    pack: Filter('pack', 'Only records of this pack (e.g. law, eu-ai-act)'),
    kind: Filter('kind', 'Only records of this seal kind (gate, record, review, policy, …)'),
    decision: Filter('decision', 'Only records with this decision (allow, needs_review, blocked; approved, rejected, escalated for reviews)'),
  })
  .strict();

const RecordsPage = z
  .object({
    notice: z.string(),
    from: z.string(),
    to: z.string(),
    records: z.array(SealedRecord),
    count: z.number().int(),
    next_cursor: z.string().nullable().openapi({ description: 'Cursor for the next page; null when this page is empty' }),
  })
  .openapi('RecordsExportPage');

const Counts = z.record(z.string(), z.number().int());
const PackCoverage = z
  .object({
    pack: z.string(),
    pack_kind: z.enum(['gate', 'record']),
    records: z.number().int(),
    first_recorded_at: z.string().nullable(),
    last_recorded_at: z.string().nullable(),
    decisions_by_kind: z.record(z.string(), Counts),
    records_by_event_type: Counts,
    reviews: Counts,
    anchoring: z.object({ anchored: z.number().int(), not_yet_anchored: z.number().int() }),
  })
  .openapi('PackCoverage');
const Summary = z
  .object({
    notice: z.string(),
    tenant_id: z.string(),
    records: z.number().int(),
    first_recorded_at: z.string().nullable(),
    last_recorded_at: z.string().nullable(),
    packs: z.array(PackCoverage),
  })
  .openapi('RecordsExportSummary');

const TimelineQuery = z
  .object({
    from: Timestamp('from', 'Inclusive lower bound on recorded_at; default: `to` less 14 days (bucket day) or 24 hours (bucket hour)'),
    to: Timestamp('to', 'Exclusive upper bound on recorded_at; default: the end of the current bucket'),
    bucket: z.enum(['hour', 'day']).optional().openapi({ param: { name: 'bucket', in: 'query' }, description: 'Bucket width (UTC); default day' }),
  })
  .strict();

const Timeline = z
  .object({
    notice: z.string(),
    from: z.string(),
    to: z.string(),
    bucket: z.enum(['hour', 'day']),
    decisions: z.array(z.string()).openapi({ description: 'Every decision that occurs in the range, sorted' }),
    buckets: z.array(z.object({ start: z.string(), counts: Counts })).openapi({ description: 'Every bucket of the range in order, empty ones included' }),
  })
  .openapi('DecisionTimeline');

export function mountRecordExports(router: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  const records = defineRoute({
    method: 'get',
    path: '/tenant/exports/records',
    operationId: 'listRecordsExport',
    tags: ['exports'],
    auth: deps.auth.keyOrSession('exports:read'),
    summary: 'Sealed records in chronological order, half-open on recorded_at, one page per call (JSON or NDJSON)',
    description:
      'from <= recorded_at < to on the signed recorded_at. Each record carries its evidence packet (with seal) and a ready verify_request. ' +
      'Send Accept: application/x-ndjson for one record per line; the next cursor is then in the Link header (rel="next") and X-Next-Cursor. ' +
      'The first page (no cursor) carries X-Total-Count: the records in the range when it was read.',
    request: { query: RecordsQuery },
    responses: {
      200: {
        description: 'One page of records',
        content: { 'application/json': { schema: RecordsPage }, [NDJSON]: { schema: z.string().openapi({ description: 'One exported record per line' }) } },
      },
    },
  });
  router.openapi(records, async (c) => {
    const q = recordsQuery(c.req.valid('query'));
    // The page ends at a record committed now (later seals sort after it): the wait for the
    // disk after every read (app.ts) covers all it will stream.
    const page = await recordsPage(deps.store.exports, c.var.auth.tenantId, q);
    const headers: Record<string, string> = { 'cache-control': 'no-store', [NOTICE_HEADER]: OWNER_REVIEW_NOTICE };
    // The first page says how many records the range holds now, so a client can show progress.
    if (!q.after) headers['x-total-count'] = String(await deps.store.exports.countRange(c.var.auth.tenantId, q.from, q.to, q.filter));
    if (page.end) {
      const cursor = encodeCursor(page.end);
      const filters = Object.fromEntries(Object.entries(q.filter).filter((e): e is [string, string] => e[1] !== undefined));
      const next = new URLSearchParams({ ...(c.req.query('from') ? { from: q.from } : {}), ...(c.req.query('to') ? { to: q.to } : {}), ...filters, cursor });
      headers['x-next-cursor'] = cursor;
      headers.link = `</tenant/exports/records?${next.toString()}>; rel="next"`; // RFC 8288
    }
    const ndjson = (c.req.header('accept') ?? '').includes(NDJSON);
    headers['content-type'] = ndjson ? NDJSON : 'application/json';
    return new Response(ndjson ? ndjsonStream(page) : jsonStream(page, q), { status: 200, headers }) as never;
  });

  const summary = defineRoute({
    method: 'get',
    path: '/tenant/exports/records/summary',
    operationId: 'getRecordsExportSummary',
    tags: ['exports'],
    auth: deps.auth.keyOrSession('exports:read'),
    summary: 'Per-pack coverage counts: decisions by kind, reviews, records by event type, anchored vs not yet',
    request: { query: z.object({}).strict() },
    responses: { 200: jsonContent(Summary, 'Coverage per pack') },
  });
  router.openapi(summary, async (c) => {
    const tenantId = c.var.auth.tenantId;
    const coverage = await evidenceCoverage(deps.store.exports, anchoredCounts(deps.store.anchoring, deps.store.exports), tenantId, rfc3339(deps.clock.now()));
    return c.json({ notice: OWNER_REVIEW_NOTICE, tenant_id: tenantId, ...coverage }, 200);
  });

  const timeline = defineRoute({
    method: 'get',
    path: '/tenant/exports/records/timeline',
    operationId: 'getRecordsExportTimeline',
    tags: ['exports'],
    auth: deps.auth.keyOrSession('exports:read'),
    summary: 'Gate decisions per hour or day by outcome, over at most 744 buckets (the console’s decisions chart)',
    request: { query: TimelineQuery },
    responses: { 200: jsonContent(Timeline, 'Counts per bucket and decision') },
  });
  router.openapi(timeline, async (c) => {
    const q = c.req.valid('query');
    const range = timelineRange(q, deps.clock.now());
    const rows = await deps.store.exports.decisionCounts(c.var.auth.tenantId, range.from, range.to, PREFIX_CHARS[range.bucket]);
    return c.json({ notice: OWNER_REVIEW_NOTICE, ...range, ...bucketed(rows, range) }, 200);
  });
}
