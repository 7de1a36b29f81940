/**
 * How work flows through the service, and how a tenant wires its own systems to it.
 *
 *   /integration-recipes one recipe per integration channel registered with
 *                        PUT /tenant/integrations/{channel}/{target} (app.ts
 *                        INTEGRATION_CHANNELS): its config as JSON Schema (from the channel's
 *                        own zod schema, the one that validates the PUT), the secret reference
 *                        schemes (core/secret-refs.ts), the event kinds
 *                        (webhooks/events.ts) and the integration endpoints of this build (OpenAPI
 *                        tags integrations and webhooks)
 *   /workflow-map        decisions (packs/manifest.ts), review statuses and decisions
 *                        (reviews/store.ts), every review route the packs can choose and whether
 *                        a channel for it is registered, the review window and epoch cadence
 *                        (configuration), and the steps of a gated action with the endpoint
 *                        serving each, taken from the OpenAPI document
 */
import type { Config } from '../core/config.ts';
import type { OpenApiDocument } from '../core/openapi.ts';
import { z } from '../core/router.ts';
import type { IntegrationChannel, ReadinessState } from '../integrations/channel.ts';
import { SECRET_REF_SCHEMES } from '../core/secret-refs.ts';
import { DECISIONS } from '../packs/manifest.ts';
import { gatePacks } from '../packs/registry.ts';
import { FINAL_STATUSES, OPEN_STATUSES, REVIEW_DECISIONS } from '../reviews/store.ts';
import { EVENT_KINDS } from '../webhooks/events.ts';
import { operations, publicBaseUrl, serves } from './sources.ts';

/** integrations/channel.ts ReadinessState, in the order a setup moves through them. */
const READINESS_STATES: readonly ReadinessState[] = ['disabled', 'auto_disabled', 'incomplete', 'waiting_on_secret', 'ready'];

const Endpoint = z.object({ method: z.string(), path: z.string(), operation_id: z.string() });

export const IntegrationRecipes = z
  .object({
    channels: z.array(
      z.object({
        channel: z.string(),
        setup: z.object({ method: z.literal('PUT'), path: z.string(), auth: z.literal('api_key') }),
        config_schema: z.record(z.string(), z.unknown()),
        example: z.string(),
      }),
    ),
    secret_ref_schemes: z.array(z.string()),
    event_kinds: z.array(z.string()),
    readiness_states: z.array(z.string()),
    endpoints: z.array(Endpoint),
  })
  .openapi('IntegrationRecipes');

export function integrationRecipes(config: Config, document: OpenApiDocument, channels: readonly IntegrationChannel<any>[]): z.infer<typeof IntegrationRecipes> {
  const base = publicBaseUrl(config);
  return {
    channels: channels.map((channel) => {
      const path = `/tenant/integrations/${channel.name}/{target}`;
      return {
        channel: channel.name,
        setup: { method: 'PUT' as const, path, auth: 'api_key' as const },
        // The input side: what a caller sends (defaults may be omitted).
        config_schema: z.toJSONSchema(channel.config, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>,
        example: `curl -sS -X PUT ${base}/tenant/integrations/${channel.name}/<target> -H "X-Service-Key: $SVC_KEY" -H 'content-type: application/json' -d '{"enabled": true, "config": {…}}'`,
      };
    }),
    secret_ref_schemes: SECRET_REF_SCHEMES.map((s) => `${s}://`),
    event_kinds: [...EVENT_KINDS],
    readiness_states: [...READINESS_STATES],
    endpoints: operations(document)
      .filter((o) => o.tags.includes('integrations') || o.tags.includes('webhooks'))
      .map((o) => ({ method: o.method, path: o.path, operation_id: o.operation_id })),
  };
}

export const WorkflowMap = z
  .object({
    decisions: z.array(z.string()),
    review: z.object({
      open_statuses: z.array(z.string()),
      final_statuses: z.array(z.string()),
      decisions: z.array(z.string()),
      window_seconds: z.number().int(),
    }),
    review_routes: z.array(z.object({ route: z.string(), channel: z.string(), packs: z.array(z.string()), channel_registered: z.boolean() })),
    steps: z.array(z.object({ step: z.string(), method: z.string(), path: z.string(), served: z.boolean() })),
    events: z.array(z.string()),
    anchoring: z.object({ epoch_seconds: z.number().int() }),
  })
  .openapi('WorkflowMap');

/** The steps of a gated action, in order (interface-spec States and transitions). */
const STEPS = [
  { step: 'gate the proposed action', method: 'POST', path: '/v1/gate' },
  { step: 'see what waits for review', method: 'GET', path: '/active-manifest' },
  { step: 'record the review decision', method: 'POST', path: '/v1/reviews' },
  { step: 'fetch the sealed record', method: 'GET', path: '/v1/records/{action_key}' },
  { step: 'verify it online', method: 'POST', path: '/v1/verify' },
  { step: 'prove its inclusion in an epoch', method: 'GET', path: '/v1/records/{action_key}/inclusion-proof' },
] as const;

export function workflowMap(config: Config, document: OpenApiDocument, channels: readonly IntegrationChannel<any>[]): z.infer<typeof WorkflowMap> {
  const registered = new Set(channels.map((c) => c.name));
  const routes = new Map<string, Set<string>>();
  for (const { manifest: m } of gatePacks()) {
    const all = [m.review_route, ...m.action_types.map((a) => a.review_route), ...m.rules.map((r) => r.review_route)];
    for (const route of all) if (typeof route === 'string') routes.set(route, (routes.get(route) ?? new Set()).add(m.name));
  }
  return {
    decisions: [...DECISIONS],
    review: {
      open_statuses: [...OPEN_STATUSES],
      final_statuses: [...FINAL_STATUSES],
      decisions: [...REVIEW_DECISIONS],
      window_seconds: config.reviewTimeoutSeconds,
    },
    review_routes: [...routes]
      .map(([route, packs]) => {
        const channel = route.split(':', 1)[0]!;
        return { route, channel, packs: [...packs].sort(), channel_registered: registered.has(channel) };
      })
      .sort((a, b) => a.route.localeCompare(b.route)),
    steps: STEPS.map((s) => ({ ...s, served: serves(document, s.method, s.path) })),
    events: [...EVENT_KINDS],
    anchoring: { epoch_seconds: config.epochSeconds },
  };
}
