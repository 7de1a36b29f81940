/**
 * Gate decisions over time by outcome (GET /tenant/exports/records/timeline): what the tenant
 * console charts. Buckets are UTC hours or days, read as prefixes of the signed recorded_at.
 */
import { ProblemError } from '../core/errors.ts';
import { boundary } from './records-export.ts';

export type Bucket = 'hour' | 'day';
const WIDTH_MS: Record<Bucket, number> = { hour: 3_600_000, day: 86_400_000 };
const DEFAULT_SPAN: Record<Bucket, number> = { hour: 24, day: 14 };
/** recorded_at is RFC 3339 UTC with a fixed layout: its first 13 characters are the hour, 10 the day. */
export const PREFIX_CHARS = { hour: 13, day: 10 } as const satisfies Record<Bucket, number>;
/** A month of hours: enough for any chart, small enough to answer from one indexed range scan. */
export const MAX_BUCKETS = 744;

export interface TimelineRange {
  from: string;
  to: string;
  bucket: Bucket;
}

/** The range aligned outward to whole buckets, so every bucket shown is complete. */
export function timelineRange(q: { from?: string | undefined; to?: string | undefined; bucket?: Bucket | undefined }, now: Date): TimelineRange {
  const bucket = q.bucket ?? 'day';
  const width = WIDTH_MS[bucket];
  // By default the current bucket is the last one, so what just happened is shown.
  const toMs = q.to === undefined ? (Math.floor(now.getTime() / width) + 1) * width : Math.ceil(Date.parse(boundary(q.to, 'to')) / width) * width;
  const fromMs = Math.floor((q.from === undefined ? toMs - DEFAULT_SPAN[bucket] * width : Date.parse(boundary(q.from, 'from'))) / width) * width;
  if (toMs <= fromMs) {
    throw ProblemError.validation([{ in: 'query', path: '/to', message: 'must be later than from; the range is half-open', code: 'empty_range' }]);
  }
  if ((toMs - fromMs) / width > MAX_BUCKETS) {
    throw ProblemError.validation([{ in: 'query', path: '/from', message: `the range spans more than ${MAX_BUCKETS} ${bucket}s; narrow it or use bucket=day`, code: 'range_too_long' }]);
  }
  return { from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString(), bucket };
}

export function bucketed(rows: { bucket: string; decision: string; count: number }[], range: TimelineRange) {
  const buckets = new Map<string, { start: string; counts: Record<string, number> }>();
  for (let t = Date.parse(range.from); t < Date.parse(range.to); t += WIDTH_MS[range.bucket]) {
    const start = new Date(t).toISOString();
    buckets.set(start.slice(0, PREFIX_CHARS[range.bucket]), { start, counts: {} });
  }
  const decisions = new Set<string>();
  for (const r of rows) {
    decisions.add(r.decision);
    const b = buckets.get(r.bucket);
    if (b) b.counts[r.decision] = r.count;
  }
  return { decisions: [...decisions].sort(), buckets: [...buckets.values()] };
}
