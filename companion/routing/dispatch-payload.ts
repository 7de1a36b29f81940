/**
 * The delivery payload of a route dispatch (interface-spec "Route dispatch (outbox item)"):
 * the fields every channel carries, review_controls saying how to post the decision back,
 * the active_manifest_item a board shows, and the channel's platform object. Built once, in
 * the seal's transaction; those exact bytes are what is prepared, signed and sent.
 *
 * Raw-safe: keys, hrefs, the pack's fixed next step and field names only. The review context a
 * reviewer decides on is sealed to their devices and opened in the console, never carried here:
 * review_page_url links to the console's page for the action, where it is decrypted.
 */
import { REVIEW_DECISIONS } from '../reviews/store.ts';
import { MIRROR_GRADES, MIRROR_KEYS } from '../reviews/mirror.ts';
import { chatPlatform } from './chat-payload.ts';
import type { ChatConfig, WorkflowConfig } from './config.ts';
import { CHAT_SIGNATURE_HEADER, CHAT_TIMESTAMP_HEADER, DISPATCH_EVENT, DISPATCH_SOURCE, SHA256_PREFIX, SIGNATURE_HEADER, callbackPaths } from './config.ts';
import type { DispatchChannel } from './store.ts';
import { workflowPlatform } from './workflow-payload.ts';

export interface DispatchFacts {
  tenantId: string;
  dispatchKey: string;
  actionKey: string;
  pack: string;
  actionType: string;
  reviewRoute: string;
  channel: DispatchChannel;
  target: string;
  evidencePacketHref: string;
  nextStep: string;
  createdAt: string;
  /** SVC_PUBLIC_BASE_URL: callback URLs are absolute for the platform's side. */
  baseUrl: string;
}

export interface CallbackContract {
  method: 'POST';
  path: string;
  url: string;
  content_type: 'application/json';
  signature_header: string;
  signature_input: string;
  timestamp_header?: string;
  replay_window_seconds?: number;
}

export interface ReviewField {
  name: string;
  type: 'string' | 'enum' | 'object';
  required: boolean;
  choices?: readonly string[];
}

/**
 * The console's review page for one action (console/src/pages/review-item.tsx): the console is
 * served at /console and addresses its pages by fragment, so the link needs no server route,
 * survives sign-in, and the action key never reaches a server log. Built from
 * SVC_PUBLIC_BASE_URL, never from a request's Host header.
 */
export function reviewPageUrl(baseUrl: string, actionKey: string): string {
  // A fragment may hold ':' unescaped (RFC 3986 §3.5: fragment = *( pchar / "/" / "?" )).
  return `${baseUrl.replace(/\/+$/, '')}/console#/reviews/${encodeURIComponent(actionKey).replaceAll('%3A', ':')}`;
}

/** How each channel signs its review-decision callback (interface-spec Authentication 3). */
export function callbackContract(f: Pick<DispatchFacts, 'tenantId' | 'channel' | 'target' | 'baseUrl'>): CallbackContract {
  const path = callbackPaths(f.tenantId, f.channel, f.target).reviewDecision;
  const common = { method: 'POST' as const, path, url: `${f.baseUrl}${path}`, content_type: 'application/json' as const };
  switch (f.channel) {
    case 'chat':
      return {
        ...common,
        signature_header: CHAT_SIGNATURE_HEADER,
        signature_input: `v0=<hex HMAC-SHA256 of "v0:" + ${CHAT_TIMESTAMP_HEADER} + ":" + the exact raw body, keyed by the app signing secret (config.callback_secret_ref or config.signing_secret_ref)>`,
        timestamp_header: CHAT_TIMESTAMP_HEADER,
        replay_window_seconds: 300,
      };
    case 'workflow':
      return { ...common, signature_header: SIGNATURE_HEADER, signature_input: `${SHA256_PREFIX}<hex HMAC-SHA256 of the exact raw body, keyed by config.callback_secret_ref, else the route secret_ref>` };
    case 'webhook':
      return { ...common, signature_header: SIGNATURE_HEADER, signature_input: `${SHA256_PREFIX}<hex HMAC-SHA256 of the exact raw body, keyed by the target's signing key (the derived whsec_ key, or its secret_ref value)>` };
  }
}

/** interface-spec "Review callback body", as form fields a platform fills in. */
export function reviewFields(pack: string): ReviewField[] {
  return [
    { name: 'dispatch_key', type: 'string', required: true },
    { name: 'decision', type: 'enum', required: true, choices: REVIEW_DECISIONS },
    { name: 'reviewer', type: 'string', required: true },
    { name: 'reason', type: 'string', required: false },
    { name: 'external_reference', type: 'object', required: false },
    ...(pack === 'law'
      ? [
          { name: 'mirror_version', type: 'string' as const, required: false },
          { name: 'mirror_digest', type: 'string' as const, required: false },
          ...MIRROR_KEYS.map((k) => ({ name: `mirror_grades.${k}`, type: 'enum' as const, required: false, choices: MIRROR_GRADES })),
        ]
      : []),
  ];
}

export function dispatchPayload(f: DispatchFacts, config: Record<string, unknown>): Record<string, unknown> {
  const controls = { callback: callbackContract(f), fields: reviewFields(f.pack) };
  const common = {
    event: DISPATCH_EVENT,
    source: DISPATCH_SOURCE,
    tenant: f.tenantId,
    dispatch_key: f.dispatchKey,
    action_key: f.actionKey,
    decision: 'needs_review',
    action_type: f.actionType,
    review_route: f.reviewRoute,
    evidence_packet_href: f.evidencePacketHref,
    review_page_url: reviewPageUrl(f.baseUrl, f.actionKey),
    next_step: f.nextStep,
    raw_content_stored: false,
    created_at: f.createdAt,
    review_controls: controls,
    active_manifest_item: {
      dispatch_key: f.dispatchKey,
      action_key: f.actionKey,
      decision: 'needs_review',
      action_type: f.actionType,
      review_route: f.reviewRoute,
      target: f.target,
      evidence_packet_href: f.evidencePacketHref,
      next_step: f.nextStep,
      raw_content_stored: false,
    },
  };
  switch (f.channel) {
    case 'workflow':
      return { ...common, workflow: workflowPlatform(f, config as WorkflowConfig, controls) };
    case 'chat': {
      const chat = chatPlatform(f, config as ChatConfig);
      // chat.postMessage reads channel, text and blocks at the top level of a JSON body.
      return { ...chat.message, ...common, chat: chat.platform };
    }
    case 'webhook':
      return { ...common, webhook: { signature: `${SIGNATURE_HEADER}: ${SHA256_PREFIX}<hex HMAC-SHA256 of the body>`, distinguished_from_events_by: 'the sha256= signature prefix (event deliveries sign t=…,v1=…)' } };
  }
}
