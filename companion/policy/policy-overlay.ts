/**
 * What a tenant's policy contributes to a gate decision (interface-spec "What the service
 * does" 3): the policy capability builds it from the tenant's current policy receipt
 * (./overlay.ts), and the gate's pure decision (gate/decide.ts) applies it. Only action type
 * ids and routes live here, never raw content.
 */
import type { ReviewRule } from '../reviews/rules.ts';

export interface PolicyOverlay {
  /** Digest of the policy receipt this overlay came from; null when the tenant has no policy. */
  readonly digest: string | null;
  /** Action types whose pack default of needs_review the tenant waives. */
  readonly allow_action_types: readonly string[];
  /** Hard denies: blocked whatever the pack says. */
  readonly deny_action_types: readonly string[];
  /** Required review: needs_review even when the pack or an allow entry would allow. */
  readonly review_action_types: readonly string[];
  /** Review route per action type, overriding the pack's. */
  readonly review_routes: Readonly<Record<string, string>>;
  /** Review rule per action type (reviews/rules.ts), copied onto the item when an action pauses. */
  readonly review_rules: Readonly<Record<string, ReviewRule>>;
}

export const EMPTY_OVERLAY: PolicyOverlay = Object.freeze({
  digest: null,
  allow_action_types: Object.freeze([]),
  deny_action_types: Object.freeze([]),
  review_action_types: Object.freeze([]),
  review_routes: Object.freeze({}),
  review_rules: Object.freeze({}),
});
