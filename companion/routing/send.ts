/**
 * One send attempt of a route dispatch (interface-spec States and transitions: "outbox worker
 * run with the explicit external-send flag; route enabled, channel config and resolvable
 * secret present → sent"). Only the route outbox worker calls this, and it runs only under
 * SVC_OUTBOX_EXTERNAL_SEND=1; every request goes through the guarded client.
 *
 * Per channel, with the secret resolved now (never stored):
 *   workflow  config.url / trigger_url; Authorization: Bearer <secret_ref value> by default,
 *             or auth_type hmac: X-Service-Signature: sha256=<hex HMAC-SHA256(value, body)>
 *   chat      config.url (default chat.postMessage); Authorization: Bearer <secret_ref value>
 *   webhook   the target's URL; X-Service-Signature: sha256=<hex HMAC-SHA256(signing key, body)>
 *             (interface-spec Events rule 8: told apart from events by the sha256= prefix)
 */
import { createHmac } from 'node:crypto';
import type { Clock } from '../core/clock.ts';
import type { ClaimedJob } from '../core/jobs/queue.ts';
import type { JobOutcome } from '../core/jobs/worker.ts';
import type { SecretResolver } from '../core/secret-refs.ts';
import type { IntegrationStore } from '../integrations/store.ts';
import { OutboundError } from '../net/outbound-http.ts';
import type { OutboundHttp } from '../net/outbound-http.ts';
import { refusedAnswer } from '../net/refused-answer.ts';
import { signingKeys } from '../webhooks/delivery.ts';
import type { WebhookStore } from '../webhooks/store.ts';
import { CHAT_DEFAULT_URL, DISPATCH_EVENT, SHA256_PREFIX, SIGNATURE_HEADER, workflowUrl } from './config.ts';
import type { ChatConfig, WorkflowConfig } from './config.ts';
import type { DispatchRow } from './store.ts';

export const USER_AGENT = 'action-gate-routing/0.1';

export interface SendDeps {
  integrations: IntegrationStore;
  webhooks: WebhookStore;
  secrets: SecretResolver;
  outbound: OutboundHttp;
  clock: Clock;
  /** SVC_OUTBOX_EXTERNAL_SEND; checked again here so no other caller can post. */
  externalSend: boolean;
}

/** sha256=<hex HMAC-SHA256 of the exact body bytes> (interface-spec Authentication 3, Events rule 8). */
export function sha256Signature(key: string, body: string): string {
  return SHA256_PREFIX + createHmac('sha256', key).update(body, 'utf8').digest('hex');
}

type Request = { ok: true; url: string; headers: Record<string, string> } | { ok: false; error: string };

async function request(deps: SendDeps, row: DispatchRow, config: Record<string, unknown>, secretRef: string | null): Promise<Request> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json; charset=utf-8',
    'User-Agent': USER_AGENT,
    'X-Service-Event': DISPATCH_EVENT,
    'X-Service-Dispatch-Key': row.id,
  };
  const secret = async () => {
    if (secretRef === null) return { ok: false as const, error: 'no secret_ref' };
    const r = await deps.secrets.resolve(row.tenant_id, secretRef);
    return r.ok ? { ok: true as const, value: r.value } : { ok: false as const, error: `secret_ref unresolvable (${r.provider}: ${r.error})` };
  };
  switch (row.channel) {
    case 'workflow': {
      const c = config as WorkflowConfig;
      const url = workflowUrl(c);
      if (!url) return { ok: false, error: 'no config.url' };
      const s = await secret();
      if (!s.ok) return s;
      if (c.auth_type === 'hmac') headers[SIGNATURE_HEADER] = sha256Signature(s.value, row.body);
      else headers.Authorization = `Bearer ${s.value}`;
      return { ok: true, url, headers };
    }
    case 'chat': {
      const c = config as ChatConfig;
      const s = await secret();
      if (!s.ok) return s;
      headers.Authorization = `Bearer ${s.value}`;
      return { ok: true, url: c.url ?? CHAT_DEFAULT_URL, headers };
    }
    case 'webhook': {
      const keys = await signingKeys(deps, row.tenant_id, row.target, secretRef, deps.clock.now());
      if (!keys.ok) return keys;
      headers[SIGNATURE_HEADER] = sha256Signature(keys.keys[0]!, row.body);
      return { ok: true, url: String(config.url), headers };
    }
  }
}

export async function attemptDispatch(deps: SendDeps, job: ClaimedJob<DispatchRow>, signal: AbortSignal): Promise<JobOutcome> {
  if (!deps.externalSend) return { ok: false, error: 'external send is off (SVC_OUTBOX_EXTERNAL_SEND)' };
  const row = job.row;
  const integration = await deps.integrations.find(row.tenant_id, row.channel, row.target);
  if (!integration) return { ok: false, error: `the ${row.channel} route ${row.target} no longer exists` };
  const req = await request(deps, row, JSON.parse(integration.config) as Record<string, unknown>, integration.secretRef);
  if (!req.ok) return req;
  try {
    const res = await deps.outbound.post({ url: req.url, headers: req.headers, body: row.body, signal });
    if (res.status < 200 || res.status >= 300) return refusedAnswer(res, deps.clock.now());
    // Slack's Web API answers HTTP 200 with {"ok": false, "error": "<code>"} on failure.
    if (row.channel === 'chat') {
      const answer = chatAnswer(res.body);
      if (answer !== undefined) return { ok: false, error: `chat platform answered ok:false (${answer})` };
    }
    return { ok: true };
  } catch (err) {
    if (err instanceof OutboundError) return { ok: false, error: `${err.code}: ${err.message}` };
    throw err;
  }
}

/** The error code of a Web API failure answer, or undefined when the answer is not one. */
function chatAnswer(body: Uint8Array): string | undefined {
  try {
    const parsed = JSON.parse(new TextDecoder().decode(body)) as { ok?: unknown; error?: unknown };
    if (parsed.ok !== false) return undefined;
    return typeof parsed.error === 'string' && /^[a-z_]{1,64}$/.test(parsed.error) ? parsed.error : 'error';
  } catch {
    return undefined;
  }
}
