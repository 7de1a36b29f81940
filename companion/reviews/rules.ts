/**
 * Review rules per action type: how many distinct reviewers must approve before a paused action
 * is released (N-of-M, a four-eyes rule at 2), when to remind, and the escalation chain of
 * review routes. A tenant sets them in its policy document (`review_rules`, policy/document.ts);
 * each policy version is a sealed policy receipt and every gate seal commits the digest of the
 * version it was decided under, so the rule in force for a paused action is evidenced.
 *
 * The rule is copied onto the review item when the action pauses (./participant.ts), so a
 * later policy version never changes the rule of an item already open.
 *
 * Times count from the item's created_at (the gate seal's signed recorded_at). Steps past the
 * review window never fire: the item has expired by then (./state.ts).
 */
import { z } from '../core/router.ts';
import { REVIEW_ROUTE_PATTERN } from '../packs/manifest.ts';
import { addSeconds } from './state.ts';

export const APPROVALS_MAX = 5;
export const ESCALATION_STEPS_MAX = 5;
/** The scheduler runs at most once a minute (reviews/expiry.ts sweepIntervalMs), so finer times would not be kept. */
export const RULE_SECONDS_MIN = 60;
/** 30 days: longer than any review window worth keeping open. */
export const RULE_SECONDS_MAX = 30 * 24 * 3600;

const Seconds = z
  .number()
  .int({ error: 'expected a whole number of seconds' })
  .min(RULE_SECONDS_MIN, { error: `expected at least ${RULE_SECONDS_MIN} seconds` })
  .max(RULE_SECONDS_MAX, { error: `expected at most ${RULE_SECONDS_MAX} seconds (30 days)` });

const EscalationStep = z.strictObject({
  after_seconds: Seconds.openapi({ description: 'Seconds after the action paused at which the item moves to route' }),
  route: z
    .string()
    .max(128, { error: 'expected at most 128 characters', abort: true })
    .regex(new RegExp(REVIEW_ROUTE_PATTERN), { error: 'expected <channel>:<target>: channel chat, workflow, webhook or browser; target lowercase letters, digits and -' })
    .openapi({ example: 'workflow:general-counsel' }),
});

export const ReviewRuleSchema = z
  .strictObject({
    approvals_required: z
      .number()
      .int({ error: 'expected a whole number' })
      .min(1, { error: 'expected 1 to 5' })
      .max(APPROVALS_MAX, { error: 'expected 1 to 5' })
      .optional()
      .openapi({ description: 'Distinct reviewers who must approve before the action is released (default 1; 2 is a four-eyes rule)' }),
    remind_after_seconds: Seconds.optional().openapi({ description: 'One review.reminder event when the item has waited this long' }),
    escalation: z
      .array(EscalationStep)
      .max(ESCALATION_STEPS_MAX)
      .optional()
      .openapi({ description: 'Steps in rising after_seconds; each moves the item to its route and raises one review.escalated event' }),
  })
  .openapi('ReviewRule');

export interface EscalationStep {
  after_seconds: number;
  route: string;
}

/** The normalised rule: what is digested with the policy and copied onto an item. */
export interface ReviewRule {
  approvals_required: number;
  remind_after_seconds?: number;
  escalation: EscalationStep[];
}

export const RULE_FIELDS = new Set(['approvals_required', 'remind_after_seconds', 'escalation']);
export const STEP_FIELDS = new Set(['after_seconds', 'route']);

/** Defaults made explicit, so two rules that mean the same digest the same. */
export function normaliseRule(r: z.infer<typeof ReviewRuleSchema>): ReviewRule {
  return {
    approvals_required: r.approvals_required ?? 1,
    ...(r.remind_after_seconds !== undefined ? { remind_after_seconds: r.remind_after_seconds } : {}),
    escalation: (r.escalation ?? []).map((s) => ({ after_seconds: s.after_seconds, route: s.route })),
  };
}

/** Cross-field checks of one submitted rule, as [path under the rule, message, code]. */
export function ruleConflicts(input: unknown): [string, string, string][] {
  const steps = typeof input === 'object' && input !== null ? (input as Record<string, unknown>).escalation : undefined;
  if (!Array.isArray(steps)) return [];
  const out: [string, string, string][] = [];
  let previous: number | undefined;
  steps.forEach((s, i) => {
    const after = typeof s === 'object' && s !== null ? (s as Record<string, unknown>).after_seconds : undefined;
    if (typeof after !== 'number') return;
    if (previous !== undefined && after <= previous) {
      out.push([`/escalation/${i}/after_seconds`, `expected more than the previous step's ${previous} seconds: steps run in order`, 'escalation_out_of_order']);
    }
    previous = after;
  });
  return out;
}

/** What an item needs to know of its schedule. */
export interface Scheduled {
  createdAt: string;
  rule: ReviewRule | null;
  remindedAt: string | null;
  escalationLevel: number;
}

/** When the reminder is due, or null when the rule has none or it was sent. */
export function reminderDueAt(item: Scheduled): string | null {
  const after = item.rule?.remind_after_seconds;
  return after === undefined || item.remindedAt !== null ? null : addSeconds(item.createdAt, after);
}

/** The next escalation step (1-based level) and when it is due, or null when none is left. */
export function nextEscalation(item: Scheduled): { level: number; step: EscalationStep; dueAt: string } | null {
  const step = item.rule?.escalation[item.escalationLevel];
  return step ? { level: item.escalationLevel + 1, step, dueAt: addSeconds(item.createdAt, step.after_seconds) } : null;
}

/** The earliest moment the scheduler has work on this item; null when nothing is left. */
export function scheduleDueAt(item: Scheduled): string | null {
  const times = [reminderDueAt(item), nextEscalation(item)?.dueAt].filter((t): t is string => t != null);
  if (times.length === 0) return null;
  return times.reduce((a, b) => (Date.parse(a) <= Date.parse(b) ? a : b));
}
