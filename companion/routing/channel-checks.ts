/**
 * Checks and readiness shared by the chat and workflow channels (interface-spec "Other route
 * integrations"): every secret reference in a setup must be a granted reference, an outbound
 * URL must pass the address policy, and readiness resolves references without ever showing a
 * value: only the provider and the resolver's error.
 */
import type { FieldError } from '../core/errors.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import type { Readiness } from '../integrations/channel.ts';
import { secretRefErrors } from '../integrations/secret-ref-check.ts';
import type { IntegrationRow } from '../integrations/store.ts';
import { checkTargetUrl } from '../net/address-policy.ts';

/** A secret reference inside config: a granted reference, never raw material (the value is not echoed). */
export function checkConfigSecretRef(deps: RouteDeps, tenantId: string, path: string, value: string | undefined): FieldError[] {
  return value === undefined ? [] : secretRefErrors(deps.secrets, tenantId, path, value);
}

export function checkUrl(deps: RouteDeps, path: string, value: string | undefined): FieldError[] {
  if (value === undefined) return [];
  const url = checkTargetUrl(value, { allowLoopback: deps.config.webhookAllowLoopback });
  return url.ok ? [] : [{ in: 'body', path, code: url.code, message: url.reason }];
}

export function required(path: string, why: string): FieldError {
  return { in: 'body', path, code: 'required', message: `required when enabled: ${why}` };
}

/** How a secret reference stands now: provider and error only. */
export async function secretStatus(deps: RouteDeps, tenantId: string, ref: string) {
  const r = await deps.secrets.resolve(tenantId, ref);
  return r.ok ? { provider: r.provider, resolvable: true as const } : { provider: r.provider, resolvable: false as const, error: r.error };
}

/**
 * The four states of an enabled-or-not route (interface-spec "Routing and integrations"
 * readiness): `missing` lists setup gaps; `secrets` are the references the route needs.
 */
export async function routeReadiness(deps: RouteDeps, row: IntegrationRow, missing: string[], secrets: Record<string, string | null>): Promise<Readiness> {
  const externalSend = deps.config.outboxExternalSend;
  const counts = await deps.store.routing.countByTarget(row.tenantId, row.channel, row.target);
  if (!row.enabled) return { state: 'disabled', detail: 'the tenant disabled this route; no dispatch is created for it', external_send: externalSend, dispatches: counts };
  if (missing.length > 0) return { state: 'incomplete', detail: `missing: ${missing.join(', ')}`, missing, external_send: externalSend, dispatches: counts };
  const status = Object.fromEntries(await Promise.all(Object.entries(secrets).map(async ([name, ref]) => [name, ref === null ? null : await secretStatus(deps, row.tenantId, ref)] as const)));
  const waiting = Object.entries(status).filter(([, s]) => s !== null && !s.resolvable);
  if (waiting.length > 0) {
    return { state: 'waiting_on_secret', detail: `unresolvable: ${waiting.map(([n, s]) => `${n} (${s!.provider}: ${(s as { error: string }).error})`).join(', ')}`, secrets: status, external_send: externalSend, dispatches: counts };
  }
  return {
    state: 'ready',
    detail: externalSend
      ? 'ready: the route outbox worker posts dispatches (SVC_OUTBOX_EXTERNAL_SEND=1)'
      : 'ready for an explicit operator send: dispatches are prepared only until the operator sets SVC_OUTBOX_EXTERNAL_SEND=1',
    secrets: status,
    external_send: externalSend,
    dispatches: counts,
  };
}
