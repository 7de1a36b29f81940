/**
 * The "sig" authentication of route callbacks (interface-spec Endpoints auth column, and
 * Authentication 3): a middleware, declared like an API key requirement, that runs before the
 * body is parsed or validated. It finds the route named by the path, resolves the route's
 * callback secret now, checks the channel's signature over the exact raw bytes, then refuses a
 * request whose signature was already accepted (a replay). The tenant is the path's, and is
 * trusted only because that tenant's route secret signed the request; every lookup after
 * this is scoped to it.
 *
 * Every refusal is the same 401 whether the route exists or not, so a caller learns nothing
 * about another tenant's routes.
 */
import { createHash } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { ProblemError } from '../../core/errors.ts';
import { z } from '../../core/router.ts';
import type { AuthRequirement } from '../../core/router.ts';
import type { RouteDeps } from '../../core/app-deps.ts';
import { signingKeys } from '../../webhooks/delivery.ts';
import { CHAT_SIGNATURE_HEADER, CHAT_TIMESTAMP_HEADER, SIGNATURE_HEADER, callbackSecretRef } from '../config.ts';
import type { DispatchChannel } from '../store.ts';
import { verifyChatSignature, verifySha256Signature } from './signatures.ts';
import type { SignatureVerdict } from './signatures.ts';

export interface CallbackRoute {
  tenantId: string;
  channel: DispatchChannel;
  target: string;
}

export type CallbackEnv = { Variables: { callback: CallbackRoute } };

const NO_QUERY = z.strictObject({});

export const CALLBACK_SECURITY_SCHEME = 'ServiceCallbackSignature';

function refuse(code: 'callback_signature_invalid' | 'callback_stale', detail: string): ProblemError {
  return new ProblemError({ status: 401, code, detail });
}

export function signedCallback(deps: RouteDeps): AuthRequirement<CallbackEnv> {
  const middleware: MiddlewareHandler<CallbackEnv> = async function signedCallback(c, next) {
    // interface-spec Errors: unknown query parameters are always refused, and refusing them
    // first tells an unsigned caller nothing about the route.
    const query = NO_QUERY.safeParse(Object.fromEntries(new URL(c.req.url).searchParams));
    if (!query.success) throw ProblemError.fromZod(query.error, 'query');
    const tenantId = c.req.param('tenant_id') ?? '';
    const channel = (c.req.param('channel') ?? 'chat') as DispatchChannel;
    const target = c.req.param('target') ?? '';
    const body = new Uint8Array(await c.req.arrayBuffer());
    const integration = await deps.store.integrations.find(tenantId, channel, target);
    const config = integration ? (JSON.parse(integration.config) as Record<string, unknown>) : {};
    const now = deps.clock.now();

    let keys: string[] = [];
    if (integration?.enabled) {
      if (channel === 'webhook') {
        const k = await signingKeys({ webhooks: deps.store.webhooks, secrets: deps.secrets }, tenantId, target, integration.secretRef, now);
        if (k.ok) keys = k.keys;
      } else {
        const ref = callbackSecretRef(channel, config, integration.secretRef);
        const r = ref === null ? undefined : await deps.secrets.resolve(tenantId, ref);
        if (r?.ok) keys = [r.value];
      }
    }

    let verdict: SignatureVerdict;
    let signature: string | undefined;
    if (channel === 'chat') {
      signature = c.req.header(CHAT_SIGNATURE_HEADER);
      const timestamp = c.req.header(CHAT_TIMESTAMP_HEADER);
      verdict = keys.length === 0 ? { ok: false, reason: 'mismatch' } : verifyChatSignature({ signingSecret: keys[0]!, timestamp, signature, body, now: Math.floor(now.getTime() / 1000) });
    } else {
      signature = c.req.header(SIGNATURE_HEADER);
      verdict = keys.length === 0 ? { ok: false, reason: 'mismatch' } : verifySha256Signature(keys, signature, body);
    }
    if (!verdict.ok) {
      if (verdict.reason === 'stale') throw refuse('callback_stale', `${CHAT_TIMESTAMP_HEADER} is more than 300 seconds from the server clock; a signed request is accepted only within that window`);
      const header = channel === 'chat' ? `${CHAT_SIGNATURE_HEADER} with ${CHAT_TIMESTAMP_HEADER}` : SIGNATURE_HEADER;
      throw refuse('callback_signature_invalid', `expected a valid ${header} for an enabled ${channel} route of this tenant over the exact raw body`);
    }
    const seen = createHash('sha256').update(`${channel}\n${target}\n${signature}`, 'utf8').digest('hex');
    if (!(await deps.store.routing.rememberSignature(tenantId, seen, now.toISOString()))) {
      throw ProblemError.conflict('callback_replayed', 'this signed request was already accepted; a callback is processed once');
    }
    c.set('callback', { tenantId, channel, target });
    await next();
  };
  return { security: [{ [CALLBACK_SECURITY_SCHEME]: [] }], middleware };
}
