/**
 * Integration aids (interface-spec "Routing and integrations": GET
 * /tenant/integrations/docs-package and /provider-walkthrough), generated from the tenant's
 * stored routes: the exact callback URLs for this tenant and target, the headers and field
 * names to set on the platform side, and how each route stands. URLs start from
 * SVC_PUBLIC_BASE_URL, never from the request's Host header (which the caller chooses).
 * Secret references are named; secret values never appear.
 */
import { createRouter, defineRoute, jsonContent, z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import type { IntegrationChannel } from '../integrations/channel.ts';
import type { IntegrationRow } from '../integrations/store.ts';
import { webhookChannel } from '../webhooks/channel.ts';
import { chatChannel } from './chat-channel.ts';
import { CHAT_DEFAULT_URL, CHAT_SIGNATURE_HEADER, CHAT_TIMESTAMP_HEADER, DISPATCH_EVENT, OPEN_REVIEW_ACTION_ID, SIGNATURE_HEADER, callbackPaths, callbackSecretRef, workflowUrl } from './config.ts';
import type { ChatConfig, WorkflowConfig } from './config.ts';
import { callbackContract, reviewFields } from './dispatch-payload.ts';
import type { DispatchChannel } from './store.ts';
import { workflowChannel } from './workflow-channel.ts';

const CHANNELS: Record<DispatchChannel, IntegrationChannel<any>> = { chat: chatChannel, workflow: workflowChannel, webhook: webhookChannel };

async function routeDocs(deps: RouteDeps, row: IntegrationRow) {
  const channel = row.channel as DispatchChannel;
  const config = JSON.parse(row.config) as Record<string, unknown>;
  const base = deps.config.publicBaseUrl;
  const callback = callbackContract({ tenantId: row.tenantId, channel, target: row.target, baseUrl: base });
  const paths = callbackPaths(row.tenantId, channel, row.target);
  const outboundAuth =
    channel === 'workflow' ? ((config as WorkflowConfig).auth_type === 'hmac' ? `${SIGNATURE_HEADER}: sha256=<hex HMAC-SHA256 of the body>` : 'Authorization: Bearer <secret_ref value>') : channel === 'chat' ? 'Authorization: Bearer <secret_ref value>' : `${SIGNATURE_HEADER}: sha256=<hex HMAC-SHA256 of the body>`;
  const outboundUrl = channel === 'workflow' ? (workflowUrl(config as WorkflowConfig) ?? null) : channel === 'chat' ? ((config as ChatConfig).url ?? CHAT_DEFAULT_URL) : String(config.url);
  return {
    channel,
    target: row.target,
    review_route: `${channel}:${row.target}`,
    enabled: row.enabled,
    readiness: await CHANNELS[channel].readiness(deps, row),
    secrets: { secret_ref: row.secretRef, callback_secret_ref: channel === 'webhook' ? null : callbackSecretRef(channel, config, row.secretRef) },
    outbound: {
      sent_by: 'the route outbox worker, only when SVC_OUTBOX_EXTERNAL_SEND=1',
      method: 'POST',
      url: outboundUrl,
      headers: ['Content-Type: application/json; charset=utf-8', `X-Service-Event: ${DISPATCH_EVENT}`, 'X-Service-Dispatch-Key: <dispatch_key>', outboundAuth],
    },
    callbacks: {
      review_decision: { ...callback, body_fields: reviewFields('law').map((f) => f.name) },
      ...(channel === 'chat'
        ? {
            open_review_modal: {
              method: 'POST',
              path: paths.openReviewModal,
              url: `${base}${paths.openReviewModal}`,
              content_type: 'application/x-www-form-urlencoded',
              form_field: 'payload',
              action_id: OPEN_REVIEW_ACTION_ID,
              signature_header: CHAT_SIGNATURE_HEADER,
              timestamp_header: CHAT_TIMESTAMP_HEADER,
            },
          }
        : {}),
    },
  };
}

type RouteDocs = Awaited<ReturnType<typeof routeDocs>>;

/** The steps to take on the platform's side, with this route's own URLs and names. */
function walkthrough(d: RouteDocs): string[] {
  const rd = d.callbacks.review_decision;
  switch (d.channel) {
    case 'workflow':
      return [
        `In Flow Designer, create a flow with a REST API trigger (POST, request body JSON) at ${d.outbound.url ?? '<config.url not set>'}; the service calls it with ${d.outbound.headers.at(-1)}.`,
        'Define request body data pills: dispatch_key, action_key, action_type, review_route, evidence_packet_href, review_page_url, next_step.',
        'Add a Create Record action on the task table from config.task_table: correlation_id = dispatch_key, correlation_display = action_key, short_description from action_type and review_route, and review_page_url in the description: the assignee opens what was gated there, in the console on their own device.',
        'Add catalog or record variables u_review_decision (choice: approved, rejected, escalated), u_review_reviewer and u_review_reason for the assignee.',
        `When the task closes, add an outbound REST step: POST ${rd.url}, header Content-Type: application/json and ${rd.signature_header}: ${rd.signature_input}.`,
        `Body fields: ${rd.body_fields.join(', ')} (send dispatch_key from correlation_id and external_reference {"sys_id": task.sys_id, "number": task.number}).`,
      ];
    case 'chat':
      return [
        `Post messages: the service sends the dispatch to ${d.outbound.url} with ${d.outbound.headers.at(-1)} (top-level channel, text and blocks, as chat.postMessage reads them).`,
        `In your app's Interactivity settings, point the Request URL at your app; forward a block action "${OPEN_REVIEW_ACTION_ID}" byte for byte, with its ${CHAT_SIGNATURE_HEADER} and ${CHAT_TIMESTAMP_HEADER} headers, to ${d.callbacks.open_review_modal?.url}.`,
        'Send the answer\'s body ({trigger_id, view}) to views.open with your own bot token, within three seconds of the click.',
        'The message and the modal link to review_page_url, the console page where the reviewer opens what was gated on their own device; Slack never carries it.',
        `On view_submission, post the decision as JSON to ${rd.url}, signed as ${rd.signature_input}.`,
        `Body fields: ${rd.body_fields.join(', ')}; take dispatch_key and action_key from the view's private_metadata.`,
      ];
    case 'webhook':
      return [
        `Review dispatches arrive at ${d.outbound.url} signed ${SIGNATURE_HEADER}: sha256=<hex HMAC-SHA256 of the body>; event deliveries sign t=…,v1=…, so the prefix tells them apart.`,
        'Each dispatch carries review_page_url, the console page where the reviewer opens what was gated on their own device.',
        `Post the decision as JSON to ${rd.url}, signed as ${rd.signature_input}.`,
        `Body fields: ${rd.body_fields.join(', ')}.`,
      ];
  }
}

const RouteDocsSchema = z
  .looseObject({
    channel: z.enum(['chat', 'workflow', 'webhook']),
    target: z.string(),
    review_route: z.string(),
    enabled: z.boolean(),
    readiness: z.looseObject({ state: z.string(), detail: z.string() }),
    callbacks: z.looseObject({ review_decision: z.looseObject({ method: z.literal('POST'), url: z.string(), path: z.string(), signature_header: z.string() }) }),
  })
  .openapi('IntegrationRouteDocs');

export function integrationDocsRoutes(deps: RouteDeps) {
  const router = createRouter();
  const routes = async (tenantId: string) => {
    const docs: RouteDocs[] = [];
    for (const r of await deps.store.integrations.list(tenantId)) if (r.channel in CHANNELS) docs.push(await routeDocs(deps, r));
    return docs;
  };

  const pkg = defineRoute({
    method: 'get',
    path: '/tenant/integrations/docs-package',
    operationId: 'getIntegrationDocsPackage',
    tags: ['integrations'],
    auth: deps.auth.key('integrations:manage'),
    summary: "The tenant's routes with their exact callback URLs, headers, field names and readiness",
    responses: {
      200: jsonContent(
        z.object({ tenant_id: z.string(), base_url: z.string(), generated_at: z.string(), raw_content_stored: z.literal(false), routes: z.array(RouteDocsSchema) }).openapi('IntegrationDocsPackage'),
        'One entry per stored chat, workflow and webhook route',
      ),
    },
  });
  router.openapi(pkg, async (c) => {
    const tenantId = c.var.auth.tenantId;
    c.header('cache-control', 'no-store');
    return c.json({ tenant_id: tenantId, base_url: deps.config.publicBaseUrl, generated_at: deps.clock.now().toISOString(), raw_content_stored: false as const, routes: await routes(tenantId) }, 200);
  });

  const walk = defineRoute({
    method: 'get',
    path: '/tenant/integrations/provider-walkthrough',
    operationId: 'getIntegrationProviderWalkthrough',
    tags: ['integrations'],
    auth: deps.auth.key('integrations:manage'),
    summary: 'Step-by-step platform setup for each stored route, with its own URLs and names',
    responses: {
      200: jsonContent(
        z
          .object({
            tenant_id: z.string(),
            routes: z.array(z.object({ channel: z.string(), target: z.string(), readiness: z.string(), steps: z.array(z.string()) })),
          })
          .openapi('IntegrationProviderWalkthrough'),
        'The steps per route',
      ),
    },
  });
  router.openapi(walk, async (c) => {
    const tenantId = c.var.auth.tenantId;
    c.header('cache-control', 'no-store');
    return c.json({ tenant_id: tenantId, routes: (await routes(tenantId)).map((d) => ({ channel: d.channel, target: d.target, readiness: d.readiness.state, steps: walkthrough(d) })) }, 200);
  });

  return router;
}
