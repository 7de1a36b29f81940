/**
 * The workflow channel of PUT /tenant/integrations/workflow/{target} (interface-spec "Other
 * route integrations", DESIGN.md §5: ServiceNow's REST-triggered flow). An enabled workflow
 * route needs config.url (or config.trigger_url) and a secret_ref; bearer is the default auth,
 * hmac signs the JSON body with X-Service-Signature. Callbacks are verified with
 * config.callback_secret_ref, else the route secret_ref.
 */
import type { FieldError } from '../core/errors.ts';
import type { IntegrationChannel, Readiness } from '../integrations/channel.ts';
import { checkConfigSecretRef, checkUrl, required, routeReadiness } from './channel-checks.ts';
import { WorkflowConfigSchema, callbackSecretRef, workflowUrl } from './config.ts';
import type { WorkflowConfig } from './config.ts';

export const workflowChannel: IntegrationChannel<WorkflowConfig> = {
  name: 'workflow',
  config: WorkflowConfigSchema,

  check({ deps, tenantId }, input): FieldError[] {
    const c = input.config;
    const errors: FieldError[] = [
      ...checkUrl(deps, '/config/url', c.url),
      ...checkUrl(deps, '/config/trigger_url', c.trigger_url),
      ...checkConfigSecretRef(deps, tenantId, '/config/callback_secret_ref', c.callback_secret_ref),
    ];
    if (c.url !== undefined && c.trigger_url !== undefined) {
      errors.push({ in: 'body', path: '/config/trigger_url', code: 'conflict', message: 'give config.url or config.trigger_url, not both' });
    }
    if (input.enabled && workflowUrl(c) === undefined) errors.push(required('/config/url', 'the REST-triggered flow the dispatch is posted to (config.url or config.trigger_url)'));
    if (input.enabled && !input.secret_ref) errors.push(required('/secret_ref', `the ${c.auth_type === 'hmac' ? 'HMAC key' : 'bearer token'} of the dispatch`));
    if (input.rotate_signing_secret) errors.push({ in: 'body', path: '/rotate_signing_secret', code: 'not_applicable', message: 'workflow routes sign with referenced secrets; rotate the referenced secret instead' });
    return errors;
  },

  saved: async () => ({}),

  readiness(deps, row): Promise<Readiness> {
    const config = JSON.parse(row.config) as WorkflowConfig;
    const missing = [...(workflowUrl(config) ? [] : ['config.url']), ...(row.secretRef ? [] : ['secret_ref'])];
    return routeReadiness(deps, row, missing, { secret_ref: row.secretRef, callback_secret_ref: callbackSecretRef('workflow', config, row.secretRef) });
  },
};
