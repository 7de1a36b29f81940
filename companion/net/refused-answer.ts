/**
 * A receiver's answer other than 2xx, as the failed attempt a job queue stores: its status, and
 * when the receiver asked to be tried again. Retry-After (RFC 9110 §10.2.3) counts on 429 (RFC
 * 6585 §4: a rate limit, as chat platforms' APIs answer) and 503; a retry never comes sooner
 * than it asks, nor later than the queue's cap (core/jobs/queue.ts).
 */
import type { OutboundResponse } from './outbound-http.ts';

export function refusedAnswer(res: OutboundResponse, now: Date): { ok: false; error: string; retryAfterMs?: number } {
  const error = `HTTP ${res.status}${res.status >= 300 && res.status < 400 ? ' (redirects are not followed)' : ''}`;
  const wait = res.status === 429 || res.status === 503 ? retryAfterMs(res.retryAfter, now) : undefined;
  return wait === undefined ? { ok: false, error } : { ok: false, error: `${error}, retry after ${Math.ceil(wait / 1000)} s`, retryAfterMs: wait };
}

/** Retry-After as milliseconds from `now`: delay-seconds, or an HTTP-date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now: Date): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  // An HTTP-date names its day and ends in GMT (RFC 9110 §5.6.7); Date.parse alone takes "5".
  const at = Date.parse(text);
  if (!/ GMT$/.test(text) || Number.isNaN(at)) return undefined;
  return Math.max(0, at - now.getTime());
}
