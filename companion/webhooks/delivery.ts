/**
 * One delivery attempt (interface-spec Events rules 3–7): look up the target's URL and keys,
 * sign the stored body bytes with a fresh timestamp and the same evt_ id as every earlier
 * attempt, POST through the guarded client, and call any 2xx a delivery.
 *
 * Keys: a minted secret's derived key, plus the previous one during a rotation overlap (both
 * signatures are sent, newest first); or the value of the target's secret_ref, resolved now
 * (Events rule 5: the resolved value is the key itself).
 */
import { createHmac } from 'node:crypto';
import { ID_HEADER, EVENT_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../shared/webhook-signature.ts';
import { buildStandardHeaders } from '../../shared/webhook-standard.ts';
import type { Clock } from '../core/clock.ts';
import { SealedSecretError } from '../core/secrets/envelope.ts';
import type { ClaimedJob } from '../core/jobs/queue.ts';
import type { JobOutcome } from '../core/jobs/worker.ts';
import type { IntegrationStore } from '../integrations/store.ts';
import type { SecretResolver } from '../core/secret-refs.ts';
import { OutboundError } from '../net/outbound-http.ts';
import type { OutboundHttp } from '../net/outbound-http.ts';
import { refusedAnswer } from '../net/refused-answer.ts';
import type { WebhookConfig } from './config.ts';
import type { DeliveryRow, WebhookStore } from './store.ts';

export const USER_AGENT = 'action-gate-webhooks/0.1';

export interface DeliveryDeps {
  webhooks: WebhookStore;
  integrations: IntegrationStore;
  secrets: SecretResolver;
  outbound: OutboundHttp;
  clock: Clock;
}

export type SigningKeys = { ok: true; keys: string[] } | { ok: false; error: string };

/** The keys that sign for a target right now, newest first. */
export async function signingKeys(deps: Pick<DeliveryDeps, 'webhooks' | 'secrets'>, tenantId: string, target: string, secretRef: string | null, at: Date): Promise<SigningKeys> {
  if (secretRef !== null) {
    const r = await deps.secrets.resolve(tenantId, secretRef);
    return r.ok ? { ok: true, keys: [r.value] } : { ok: false, error: `secret_ref unresolvable (${r.provider}: ${r.error})` };
  }
  let keys: string[];
  try {
    keys = (await deps.webhooks.activeKeys(tenantId, target, at.toISOString())).map((k) => k.key);
  } catch (err) {
    // A sealed key that does not open (core/secrets/envelope.ts) waits like an unresolvable
    // secret_ref: the message names the row and the KEK id, never a value.
    if (err instanceof SealedSecretError) return { ok: false, error: `signing key unreadable (${err.message})` };
    throw err;
  }
  return keys.length > 0 ? { ok: true, keys } : { ok: false, error: 'no signing key' };
}

/** What signEvent (shared/webhook-signature.ts) accepts as an id: no dot, which separates the signed parts. */
const EVENT_ID = /^evt_[A-Za-z0-9_-]{1,200}$/;

/**
 * interface-spec Events rule 3: v1 = lowercase hex HMAC-SHA256 of `<timestamp>.<id>.<raw body>`,
 * keyed by the UTF-8 bytes of the key string. The same MAC as shared/ signEvent, taken by
 * node:crypto straight from the strings (UTF-8 both) with OpenSSL writing the hex: signEvent
 * copies each part into bytes and writes the hex in JavaScript, about twice the CPU a delivery.
 * test/companion/webhook-signing.test.ts checks the two agree.
 */
export function eventSignature(key: string, id: string, timestamp: number, body: string): string {
  if (!EVENT_ID.test(id)) throw new TypeError('expected an evt_ id without dots');
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new TypeError('expected a timestamp in whole Unix seconds');
  return createHmac('sha256', key).update(`${timestamp}.${id}.`).update(body).digest('hex');
}

/** Every header of one attempt, per the target's signature scheme. */
export function deliveryHeaders(row: Pick<DeliveryRow, 'id' | 'event' | 'body'>, keys: readonly string[], scheme: WebhookConfig['signature_scheme'], timestamp: number): Record<string, string> {
  if (scheme === 'standard-webhooks') {
    return { ...buildStandardHeaders({ keys, id: row.id, timestamp, body: row.body }), [EVENT_HEADER]: row.event, 'User-Agent': USER_AGENT };
  }
  // Events rule 3: t=<ts>,v1=<hex>; one v1 per key while a rotation overlaps.
  const v1 = keys.map((key) => `v1=${eventSignature(key, row.id, timestamp, row.body)}`);
  return {
    'Content-Type': 'application/json',
    [EVENT_HEADER]: row.event,
    [ID_HEADER]: row.id,
    [TIMESTAMP_HEADER]: String(timestamp),
    [SIGNATURE_HEADER]: [`t=${timestamp}`, ...v1].join(','),
    'User-Agent': USER_AGENT,
  };
}

/** What every attempt to one target needs: where to POST, how to sign, with which keys. */
type TargetSettings = { ok: true; config: WebhookConfig; keys: string[] } | { ok: false; error: string };

async function targetSettings(deps: DeliveryDeps, row: DeliveryRow, now: Date): Promise<TargetSettings> {
  const integration = await deps.integrations.find(row.tenant_id, 'webhook', row.target);
  if (!integration) return { ok: false, error: 'the webhook target no longer exists' };
  const keys = await signingKeys(deps, row.tenant_id, row.target, integration.secretRef, now);
  return keys.ok ? { ok: true, config: JSON.parse(integration.config) as WebhookConfig, keys: keys.keys } : keys;
}

/**
 * The deliveries of one claim share `shared` (JobWorker): each target's settings and keys are
 * read once, at the first of its attempts in the claim.
 */
export async function attemptDelivery(deps: DeliveryDeps, job: ClaimedJob<DeliveryRow>, signal: AbortSignal, shared: Map<string, unknown>): Promise<JobOutcome> {
  const row = job.row;
  const now = deps.clock.now();
  const targetKey = `${row.tenant_id}/${row.target}`;
  // The lookup itself is shared: the claim's attempts start together, before any has its answer.
  let pending = shared.get(targetKey) as Promise<TargetSettings> | undefined;
  if (!pending) shared.set(targetKey, (pending = targetSettings(deps, row, now)));
  const target = await pending;
  if (!target.ok) return { ok: false, error: target.error };
  const config = target.config;
  const headers = deliveryHeaders(row, target.keys, config.signature_scheme, Math.floor(now.getTime() / 1000));
  try {
    const res = await deps.outbound.post({ url: config.url, headers, body: row.body, signal });
    if (res.status >= 200 && res.status < 300) return { ok: true };
    return refusedAnswer(res, deps.clock.now());
  } catch (err) {
    if (err instanceof OutboundError) return { ok: false, error: `${err.code}: ${err.message}` };
    throw err;
  }
}
