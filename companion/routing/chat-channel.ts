/**
 * The chat channel of PUT /tenant/integrations/chat/{target} (interface-spec "Other route
 * integrations", DESIGN.md §5: Slack's wire formats). An enabled chat route needs
 * config.channel_id and a secret_ref (422 otherwise, the target left unchanged); its signed
 * callbacks are verified with config.callback_secret_ref or config.signing_secret_ref.
 */
import type { FieldError } from '../core/errors.ts';
import type { IntegrationChannel, Readiness } from '../integrations/channel.ts';
import { checkConfigSecretRef, checkUrl, required, routeReadiness } from './channel-checks.ts';
import { ChatConfigSchema, callbackSecretRef } from './config.ts';
import type { ChatConfig } from './config.ts';

export const chatChannel: IntegrationChannel<ChatConfig> = {
  name: 'chat',
  config: ChatConfigSchema,

  check({ deps, tenantId }, input): FieldError[] {
    const c = input.config;
    const errors: FieldError[] = [
      ...checkUrl(deps, '/config/url', c.url),
      ...checkConfigSecretRef(deps, tenantId, '/config/callback_secret_ref', c.callback_secret_ref),
      ...checkConfigSecretRef(deps, tenantId, '/config/signing_secret_ref', c.signing_secret_ref),
    ];
    if (input.enabled && !c.channel_id) errors.push(required('/config/channel_id', 'the conversation the review message goes to'));
    if (input.enabled && !input.secret_ref) errors.push(required('/secret_ref', 'the token the dispatch is posted with'));
    if (input.rotate_signing_secret) errors.push({ in: 'body', path: '/rotate_signing_secret', code: 'not_applicable', message: 'chat routes sign with referenced secrets; rotate the referenced secret instead' });
    return errors;
  },

  saved: async () => ({}),

  readiness(deps, row): Promise<Readiness> {
    const config = JSON.parse(row.config) as ChatConfig;
    const missing = [...(config.channel_id ? [] : ['config.channel_id']), ...(row.secretRef ? [] : ['secret_ref'])];
    const callbackRef = callbackSecretRef('chat', config, row.secretRef);
    if (!callbackRef) missing.push('config.callback_secret_ref');
    return routeReadiness(deps, row, missing, { secret_ref: row.secretRef, callback_secret_ref: callbackRef });
  },
};
