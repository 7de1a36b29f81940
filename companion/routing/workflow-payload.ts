/**
 * The workflow platform object of a dispatch, in ServiceNow's terms (DESIGN.md §5): a flow
 * with a REST API trigger whose JSON request body becomes data pills, a task record created
 * from them (correlation_id = dispatch_key, so the callback can name its dispatch), review
 * variables the assignee fills in, and an outbound REST step that posts the decision back,
 * signed, to the callback path. The task links to the console's review page (review_page_url),
 * where the assignee opens the context on their device; the flow never carries it.
 */
import type { WorkflowConfig } from './config.ts';
import { SHA256_PREFIX, SIGNATURE_HEADER, workflowUrl } from './config.ts';
import { reviewPageUrl } from './dispatch-payload.ts';
import type { CallbackContract, DispatchFacts, ReviewField } from './dispatch-payload.ts';

/** The request body members the flow's REST trigger exposes as data pills. */
const DATA_PILLS = ['dispatch_key', 'action_key', 'action_type', 'review_route', 'evidence_packet_href', 'review_page_url', 'next_step'] as const;

export function workflowPlatform(f: DispatchFacts, config: WorkflowConfig, controls: { callback: CallbackContract; fields: ReviewField[] }) {
  const decisionFields = controls.fields.filter((x) => x.name === 'decision' || x.name === 'reviewer' || x.name === 'reason');
  return {
    flow_trigger: {
      trigger_type: 'rest_api',
      http_method: 'POST',
      request_body_type: 'application/json',
      request_body_data_pills: DATA_PILLS.map((name) => ({ name, type: 'string', path: `request.body.${name}` })),
      auth_type: config.auth_type,
    },
    task_fields: {
      table: config.task_table,
      correlation_id: f.dispatchKey,
      correlation_display: f.actionKey,
      short_description: `Review needed: ${f.actionType} (${f.reviewRoute})`,
      description: `${f.nextStep}\nOpen in the console to see what was gated: ${reviewPageUrl(f.baseUrl, f.actionKey)}`,
      callback_path: controls.callback.path,
      raw_content_stored: false,
    },
    review_variables: decisionFields.map((x) => ({
      name: `u_review_${x.name}`,
      type: x.choices ? 'choice' : x.name === 'reason' ? 'multi_line_text' : 'string',
      ...(x.choices ? { choices: x.choices } : {}),
      callback_field: x.name,
    })),
    outbound_callback_rest_step: {
      method: 'POST',
      path: controls.callback.path,
      url: controls.callback.url,
      headers: {
        'Content-Type': 'application/json',
        [SIGNATURE_HEADER]: `${SHA256_PREFIX}<hex HMAC-SHA256 of the request body, keyed by the callback secret>`,
      },
      body_template: {
        dispatch_key: f.dispatchKey,
        decision: '${u_review_decision}',
        reviewer: '${u_review_reviewer}',
        reason: '${u_review_reason}',
        external_reference: { sys_id: '${task.sys_id}', number: '${task.number}' },
        // Who decided: the task's assignee (a sys_user sys_id), which must be linked to a person
        // (POST /account/people/{person_id}/identities) or the callback seals nothing.
        platform_user: { provider: `servicenow:${serviceNowInstance(config)}`, subject: '${task.assigned_to}' },
      },
      raw_content_required: false,
    },
  };
}

/**
 * The instance a workflow route's flow runs on, as linked identities name it
 * (servicenow:<instance>): the first label of an *.service-now.com host, else the whole host.
 */
export function serviceNowInstance(config: WorkflowConfig): string {
  const url = workflowUrl(config);
  let host = '<instance>';
  try {
    if (url !== undefined) host = new URL(url).hostname;
  } catch {
    // A disabled route may hold no usable URL yet; the placeholder says what goes there.
  }
  return host.endsWith('.service-now.com') ? host.slice(0, -'.service-now.com'.length) : host;
}
