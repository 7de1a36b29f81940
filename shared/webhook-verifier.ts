/**
 * The receiver's side of an event webhook, in one call: give it the request's headers, the
 * exact raw body bytes and the signing secret(s) you were shown; it picks the scheme from the
 * headers (the service's `X-Service-Signature: t=…,v1=…`, or Standard Webhooks'
 * `webhook-signature`), checks the timestamp window and the MAC in constant time, and returns
 * the delivery id to dedupe on. Browser-safe; usable from any receiver written in TypeScript.
 *
 *   const r = verifyWebhook({ headers: req.headers, rawBody, secrets: ['whsec_…'] });
 *   if (!r.ok) return reply(400);          // r.code says why
 *   if (seen(r.id)) return reply(200);     // redelivery: same id, already handled
 *
 * Secrets: a minted `whsec_` secret (its key is derived per Events rule 5), or the value your
 * secret_ref resolves to (used as the key as is). For Standard Webhooks mode pass the
 * `standard_webhooks_secret` you were shown.
 */
import { fromUtf8 } from './encoding.ts';
import { isSvcError } from './errors.ts';
import type { WebhookErrorCode } from './webhook-signature.ts';
import { EVENT_HEADER, ID_HEADER, SIGNATURE_HEADER, SIGNING_SECRET_PREFIX, TIMESTAMP_HEADER, assertEventSignature, deriveWebhookKey } from './webhook-signature.ts';
import { STANDARD_ID_HEADER, STANDARD_SIGNATURE_HEADER, STANDARD_TIMESTAMP_HEADER, assertStandardWebhook, standardKeyFromSecret } from './webhook-standard.ts';

export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookInput {
  headers: HeaderSource;
  rawBody: Uint8Array | string;
  /** Current and, during a rotation, previous secrets. */
  secrets: readonly string[];
  /** Unix seconds; defaults to the clock. */
  now?: number;
  toleranceSeconds?: number;
}

export type VerifiedWebhook =
  | { ok: true; scheme: 'service' | 'standard-webhooks'; id: string; timestamp: number; event: string | undefined; payload: unknown }
  | { ok: false; code: WebhookErrorCode; message: string };

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (k.toLowerCase() === lower) return Array.isArray(v) ? v.join(', ') : v;
  }
  return undefined;
}

export function verifyWebhook(input: VerifyWebhookInput): VerifiedWebhook {
  try {
    if (input.secrets.length === 0) throw new TypeError('expected at least one secret');
    const serviceSignature = header(input.headers, SIGNATURE_HEADER);
    const standardSignature = header(input.headers, STANDARD_SIGNATURE_HEADER);
    let id: string;
    let timestamp: string;
    let scheme: 'service' | 'standard-webhooks';
    if (serviceSignature !== undefined) {
      scheme = 'service';
      id = header(input.headers, ID_HEADER) ?? '';
      timestamp = header(input.headers, TIMESTAMP_HEADER) ?? '';
      assertEventSignature({
        keys: input.secrets.map((s) => (s.startsWith(SIGNING_SECRET_PREFIX) ? deriveWebhookKey(s) : s)),
        id,
        ...(timestamp === '' ? {} : { timestamp }),
        signature: serviceSignature,
        body: input.rawBody,
        ...(input.now === undefined ? {} : { now: input.now }),
        ...(input.toleranceSeconds === undefined ? {} : { toleranceSeconds: input.toleranceSeconds }),
      });
      timestamp = /(?:^|,)\s*t=(\d+)/.exec(serviceSignature)![1]!;
    } else if (standardSignature !== undefined) {
      scheme = 'standard-webhooks';
      id = header(input.headers, STANDARD_ID_HEADER) ?? '';
      timestamp = header(input.headers, STANDARD_TIMESTAMP_HEADER) ?? '';
      assertStandardWebhook({
        keys: input.secrets.map(standardKeyFromSecret),
        id,
        timestamp,
        signature: standardSignature,
        body: input.rawBody,
        ...(input.now === undefined ? {} : { now: input.now }),
        ...(input.toleranceSeconds === undefined ? {} : { toleranceSeconds: input.toleranceSeconds }),
      });
    } else {
      return { ok: false, code: 'WEBHOOK_HEADER_MALFORMED', message: `expected a ${SIGNATURE_HEADER} or ${STANDARD_SIGNATURE_HEADER} header` };
    }
    const text = typeof input.rawBody === 'string' ? input.rawBody : fromUtf8(input.rawBody);
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      return { ok: false, code: 'WEBHOOK_HEADER_MALFORMED', message: 'the signed body is not JSON' };
    }
    const event = header(input.headers, EVENT_HEADER) ?? (payload as { event?: string } | null)?.event;
    return { ok: true, scheme, id, timestamp: Number(timestamp), event, payload };
  } catch (err) {
    if (isSvcError(err)) return { ok: false, code: err.code as WebhookErrorCode, message: err.message };
    throw err;
  }
}
