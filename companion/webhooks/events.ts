/**
 * The event kinds and their payloads (interface-spec Events table). Every body carries
 * `event`, `tenant` and `created_at` plus the kind's fields; it is serialised once, at
 * enqueue time, and those exact bytes are what is signed and sent on every attempt
 * (Events rule 4: no re-serialisation).
 */

export const EVENT_KINDS = ['record.sealed', 'receipt.anchored', 'verify.failed', 'meter.threshold', 'review.reminder', 'review.escalated'] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export interface EventFields {
  'record.sealed': { action_key: string; decision: string; attestation_root: string; stamp_id: string; href: string };
  'receipt.anchored': {
    epoch_seq: number;
    canonical_root: string;
    epoch_digest: string;
    tenant_chain_root: string;
    tenant_seq: number;
    leaf_index: number;
  };
  'verify.failed': { action_key: string; href: string; vertical: string; failed_checks: string[] };
  'meter.threshold': { threshold: number; meter_total: number; usage_unit: string };
  /** A paused action has waited its review rule's remind_after_seconds (reviews/schedule.ts). */
  'review.reminder': ReviewEventFields & { waiting_seconds: number };
  /** The review rule's escalation step `escalation_level` moved the action to review_route. */
  'review.escalated': ReviewEventFields & { escalation_level: number; from_route: string | null };
}

/** What both review events carry: keys, ids, routes and counts only, never content. */
export interface ReviewEventFields {
  action_key: string;
  action_type: string;
  review_route: string | null;
  record_href: string;
  approvals: number;
  approvals_required: number;
  expires_at: string;
}

export interface NewEvent<K extends EventKind = EventKind> {
  tenantId: string;
  event: K;
  /**
   * Identity of the underlying event: at most one delivery per target is ever enqueued for it
   * (Events rule 2), e.g. `record.sealed:<action_key>`. Kinds that may legitimately repeat
   * (verify.failed) pass a fresh unique key.
   */
  eventKey: string;
  fields: EventFields[K];
  /** RFC 3339, the cause's own timestamp (the seal's recorded_at). */
  createdAt: string;
}

/** The exact body bytes (as text) of an event delivery. */
export function eventBody(e: NewEvent): string {
  return JSON.stringify({ event: e.event, tenant: e.tenantId, created_at: e.createdAt, ...e.fields });
}
