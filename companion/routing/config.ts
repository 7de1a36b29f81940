/**
 * Stored setups of the chat and workflow channels (interface-spec "Other route integrations")
 * and the fixed names of route dispatches. A setup may be saved disabled and incomplete; the
 * channel's `check` says what an enabled one must have.
 */
import { z } from '../core/router.ts';
import { parseSecretRef } from '../core/secret-refs.ts';

/** interface-spec Events rule 9: the route-dispatch-ready kind, named neutrally. */
export const DISPATCH_EVENT = 'route.dispatch_ready';
export const DISPATCH_SOURCE = 'action-gate';

/** interface-spec Authentication 3: workflow and webhook callbacks, and hmac sends, sign with this header. */
export const SIGNATURE_HEADER = 'X-Service-Signature';
export const SHA256_PREFIX = 'sha256=';

/** Slack "Verifying requests from Slack": v0 signed requests, five-minute replay window. */
export const CHAT_SIGNATURE_HEADER = 'X-Slack-Signature';
export const CHAT_TIMESTAMP_HEADER = 'X-Slack-Request-Timestamp';
export const CHAT_REPLAY_WINDOW_SECONDS = 300;

/** The block action the chat message carries to open the review modal (interface-spec "open-review-modal"). */
export const OPEN_REVIEW_ACTION_ID = 'open-law-mirror-review';

const SecretRefField = z.string().max(300).openapi({ description: 'A secret reference (env://NAME, secret://…) granted to this tenant' });
const Url = z.string().min(1).max(2048);

export const ChatConfigSchema = z
  .object({
    channel_id: z
      .string()
      .max(80)
      .regex(/^[A-Za-z0-9_-]{1,80}$/, 'expected a channel id such as C0123456789')
      .optional()
      .openapi({ description: 'The conversation the review message goes to; required when enabled' }),
    url: Url.optional().openapi({
      description: "Where the worker posts the dispatch with Authorization: Bearer <secret_ref>; default Slack's chat.postMessage",
      example: 'https://slack.com/api/chat.postMessage',
    }),
    callback_secret_ref: SecretRefField.optional().openapi({ description: "The chat app's signing secret, verifying its signed callbacks" }),
    signing_secret_ref: SecretRefField.optional().openapi({ description: 'Alias of callback_secret_ref' }),
  })
  .strict()
  .openapi('ChatRouteConfig');
export type ChatConfig = z.infer<typeof ChatConfigSchema>;

export const CHAT_DEFAULT_URL = 'https://slack.com/api/chat.postMessage';

export const WorkflowConfigSchema = z
  .object({
    url: Url.optional().openapi({ description: 'The REST-triggered flow endpoint (or trigger_url)', example: 'https://acme.service-now.com/api/x_acme/review_dispatch' }),
    trigger_url: Url.optional(),
    auth_type: z.enum(['bearer', 'hmac']).default('bearer').openapi({ description: 'bearer (default): Authorization: Bearer <secret>; hmac: X-Service-Signature: sha256=<hmac(body)>' }),
    callback_secret_ref: SecretRefField.optional().openapi({ description: 'Keys the callback signature; the route secret_ref when omitted' }),
    task_table: z
      .string()
      .max(80)
      .regex(/^[a-z][a-z0-9_]{0,79}$/)
      .default('sc_task')
      .openapi({ description: 'The task table the flow creates a record in' }),
  })
  .strict()
  .openapi('WorkflowRouteConfig');
export type WorkflowConfig = z.infer<typeof WorkflowConfigSchema>;

export function workflowUrl(config: WorkflowConfig): string | undefined {
  return config.url ?? config.trigger_url;
}

/** The secret reference that keys a channel's callback signature (interface-spec Authentication 3). */
export function callbackSecretRef(channel: string, config: Record<string, unknown>, secretRef: string | null): string | null {
  const pick = (v: unknown) => (typeof v === 'string' && parseSecretRef(v) ? v : undefined);
  if (channel === 'chat') return pick(config.callback_secret_ref) ?? pick(config.signing_secret_ref) ?? null;
  if (channel === 'workflow') return pick(config.callback_secret_ref) ?? secretRef;
  return secretRef;
}

/** The callback paths of one route (interface-spec "Routing and integrations"). */
export function callbackPaths(tenantId: string, channel: string, target: string) {
  const base = `/integrations/callbacks/${tenantId}/${channel}/${target}`;
  return { reviewDecision: `${base}/review-decision`, openReviewModal: `${base}/open-review-modal` };
}
