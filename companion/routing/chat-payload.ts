/**
 * The chat platform object of a dispatch, in Slack's Block Kit (DESIGN.md §5), typed against
 * @slack/types so a field Slack does not know fails the typecheck: the message posted to the
 * route's channel (approve, reject and escalate buttons, and the button that opens the review
 * modal), the modal blueprint answered by open-review-modal, and the callback contract.
 *
 * The modal's private_metadata carries only action_key, dispatch_key and the mirror version
 * and digest (interface-spec "Route dispatch"): Slack echoes it back on submission, and
 * nothing in it is raw content.
 *
 * The message and the modal link to the console's review page (review_page_url): the context
 * the reviewer decides on is opened there, on their device, and never travels through Slack.
 */
import type { ActionsBlock, Button, InputBlock, KnownBlock, ModalView, PlainTextOption, SectionBlock } from '@slack/types';
import { MIRROR_DIGEST, MIRROR_GRADES, MIRROR_KEYS, MIRROR_VERSION } from '../reviews/mirror.ts';
import { REVIEW_DECISIONS } from '../reviews/store.ts';
import type { ReviewDecision } from '../reviews/store.ts';
import type { ChatConfig } from './config.ts';
import { OPEN_REVIEW_ACTION_ID, callbackPaths } from './config.ts';
import { callbackContract, reviewPageUrl } from './dispatch-payload.ts';
import type { DispatchFacts } from './dispatch-payload.ts';

export const MODAL_CALLBACK_ID = 'action-gate-review';

const text = (t: string) => ({ type: 'plain_text' as const, text: t, emoji: false });
/** Slack's mrkdwn control characters, escaped as its formatting reference asks (&amp; &lt; &gt;). */
const mrkdwnEscape = (t: string) => t.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
export const REVIEW_PAGE_LINK_TEXT = 'Open in the console to see what was gated';
/** A mrkdwn link to the console's review page of the action. */
const reviewPageLink = (f: Pick<DispatchFacts, 'baseUrl' | 'actionKey'>) => `<${mrkdwnEscape(reviewPageUrl(f.baseUrl, f.actionKey))}|${REVIEW_PAGE_LINK_TEXT}>`;
const option = (value: string, label = value): PlainTextOption => ({ text: text(label), value });

const DECISION_BUTTONS: Record<ReviewDecision, { label: string; style?: 'primary' | 'danger' }> = {
  approved: { label: 'Approve', style: 'primary' },
  rejected: { label: 'Reject', style: 'danger' },
  escalated: { label: 'Escalate' },
};

/** What Slack echoes back in view.private_metadata (at most 3,000 characters). */
export interface ModalMetadata {
  action_key: string;
  dispatch_key: string;
  mirror_version: string;
  mirror_digest: string;
}

export function modalView(f: Pick<DispatchFacts, 'actionKey' | 'dispatchKey' | 'actionType' | 'reviewRoute' | 'evidencePacketHref' | 'nextStep' | 'pack' | 'baseUrl'>): ModalView {
  const metadata: ModalMetadata = { action_key: f.actionKey, dispatch_key: f.dispatchKey, mirror_version: MIRROR_VERSION, mirror_digest: MIRROR_DIGEST };
  const summary: SectionBlock = {
    type: 'section',
    block_id: 'summary',
    text: { type: 'mrkdwn', text: `*${f.actionType}* paused for review on \`${f.reviewRoute}\`\n${reviewPageLink(f)}\nEvidence: \`${f.evidencePacketHref}\`\n${f.nextStep}`.slice(0, 3000) },
  };
  const decision: InputBlock = {
    type: 'input',
    block_id: 'decision',
    label: text('Decision'),
    element: { type: 'static_select', action_id: 'decision', options: REVIEW_DECISIONS.map((d) => option(d, DECISION_BUTTONS[d].label)) },
  };
  const reviewer: InputBlock = {
    type: 'input',
    block_id: 'reviewer',
    label: text('Reviewer'),
    element: { type: 'plain_text_input', action_id: 'reviewer', max_length: 200 },
  };
  const reason: InputBlock = {
    type: 'input',
    block_id: 'reason',
    optional: true,
    label: text('Reason (kept by you, never stored)'),
    element: { type: 'plain_text_input', action_id: 'reason', multiline: true, max_length: 2000 },
  };
  const grades: InputBlock[] =
    f.pack === 'law'
      ? MIRROR_KEYS.map((k) => ({
          type: 'input',
          block_id: `mirror_grades.${k}`,
          optional: true,
          label: text(k.replaceAll('_', ' ')),
          element: { type: 'static_select', action_id: k, options: MIRROR_GRADES.map((g) => option(g)) },
        }))
      : [];
  return {
    type: 'modal',
    callback_id: MODAL_CALLBACK_ID,
    title: text('Review action'),
    submit: text('Submit decision'),
    close: text('Cancel'),
    private_metadata: JSON.stringify(metadata),
    blocks: [summary, decision, reviewer, reason, ...grades],
  };
}

/** The message posted to the route's conversation: a summary and the review buttons. */
function messageBlocks(f: DispatchFacts): KnownBlock[] {
  const open: Button = { type: 'button', action_id: OPEN_REVIEW_ACTION_ID, text: text('Open review'), value: f.dispatchKey };
  const decide: Button[] = REVIEW_DECISIONS.map((d) => ({
    type: 'button',
    action_id: `review-${d}`,
    text: text(DECISION_BUTTONS[d].label),
    value: f.dispatchKey,
    ...(DECISION_BUTTONS[d].style ? { style: DECISION_BUTTONS[d].style } : {}),
  }));
  const actions: ActionsBlock = { type: 'actions', block_id: 'review', elements: [open, ...decide] };
  return [{ type: 'section', block_id: 'summary', text: { type: 'mrkdwn', text: `*${f.actionType}* needs review (\`${f.reviewRoute}\`). ${reviewPageLink(f)}\n${f.nextStep}`.slice(0, 3000) } }, actions];
}

export function chatPlatform(f: DispatchFacts, config: ChatConfig) {
  const paths = callbackPaths(f.tenantId, 'chat', f.target);
  return {
    message: { channel: config.channel_id ?? null, text: `${f.actionType} needs review (${f.reviewRoute}): ${reviewPageLink(f)}`, blocks: messageBlocks(f) },
    platform: {
      review_callback_contract: {
        ...callbackContract(f),
        // The decision is the person this Slack user is linked to (account/identities.ts).
        platform_user: {
          provider: 'slack:<team.id of the view_submission>',
          subject: '<user.id of the view_submission>',
          required: true,
          links: 'POST /account/people/{person_id}/identities {provider, subject}; an unlinked user seals nothing',
        },
        open_review_modal: {
          method: 'POST',
          path: paths.openReviewModal,
          url: `${f.baseUrl}${paths.openReviewModal}`,
          content_type: 'application/x-www-form-urlencoded',
          form_field: 'payload',
          action_id: OPEN_REVIEW_ACTION_ID,
          answers: 'a views.open request envelope {method, body: {trigger_id, view}}; the tenant app sends it with its own bot token',
        },
      },
      modal_view: modalView(f),
      actions: REVIEW_DECISIONS.map((d) => ({ action_id: `review-${d}`, decision: d, label: DECISION_BUTTONS[d].label, value: f.dispatchKey })),
    },
  };
}
