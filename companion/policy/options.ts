/**
 * GET /tenant/policy/options: everything an admin needs to write a policy for one pack
 * (interface-spec "Tenant policy"): the pack's action types with their defaults, the route
 * shape, the current version, the document's JSON Schema, and the raw-material rules a PUT is
 * checked against (policy/secrets.ts).
 */
import { z } from '../core/router.ts';
import { REVIEW_ROUTE_PATTERN } from '../packs/manifest.ts';
import type { GatePack } from '../packs/registry.ts';
import { LIST_FIELDS, POLICY_LABEL_MAX, POLICY_LIST_MAX, POLICY_NOTE_MAX, policySchema } from './document.ts';
import type { PolicyDocument } from './document.ts';
import { PREVIEW_SAMPLES_MAX } from './schema.ts';
import { RECEIPTS_LIMIT_MAX } from './schema.ts';
import { POLICY_STRING_MAX, RAW_MATERIAL_RULES, rawMaterialCode, SECRET_FIELD_NAME_RULE } from './secrets.ts';
import type { PolicyVersionView } from './versions.ts';
import { APPROVALS_MAX, ESCALATION_STEPS_MAX, RULE_SECONDS_MAX, RULE_SECONDS_MIN } from '../reviews/rules.ts';

/** The channels of "What the service does" 4, read from the one route pattern so they cannot drift. */
const CHANNELS = /^\^\(([^)]+)\)/.exec(REVIEW_ROUTE_PATTERN)![1]!.split('|');

const RULES = [
  'Action types are the pack’s own; each takes at most one of allow, deny and review.',
  'allow waives a pack default of needs_review only; pack rules still apply, and an action type the pack blocks by default cannot be allowed.',
  'deny blocks whatever the pack says; review requires review even where the pack or an allow entry would allow.',
  'review_routes sets the route used when the decision is needs_review, overriding the pack’s.',
  'review_rules sets, per action type, the approvals from distinct reviewers needed before release, a reminder and an escalation chain of routes; the rule is captured on each review item when its action pauses.',
  'review_context (pack-wide) and review_context_action_types (per action type, which wins) set whether the employee’s browser seals the exact gate request of a paused action to the devices of the people who may decide it: encrypted, or off (the default). The service holds only ciphertexts, and only while the review is open.',
  'Lists are sets: the stored document has them sorted, and digest = SHA-256 of its JCS bytes (RFC 8785).',
  'PUT makes a new version with a sealed policy receipt; a PUT equal to the current version answers 200 with it, changed false, and seals nothing.',
  'POST /tenant/policy/preview decides sample gate requests with the current and the candidate policy; nothing is saved, sealed or metered.',
  'Raw prompt, document, key or secret material is refused with 422 raw_content_rejected naming each path and rule; nothing is stored.',
];

export function policyOptions(pack: GatePack, current: PolicyVersionView | null) {
  const m = pack.manifest;
  const doc: PolicyDocument | undefined = current?.document;
  const listed = (id: string) => {
    const field = LIST_FIELDS.find((f) => doc?.[f].includes(id));
    return field === undefined ? null : (({ allow_action_types: 'allow', deny_action_types: 'deny', review_action_types: 'review' } as const)[field]);
  };
  return {
    policy_pack: m.name,
    pack_version: m.version,
    manifest_digest: pack.digest,
    action_types: m.action_types.map((a) => ({
      id: a.id,
      title: a.title,
      default_decision: a.default_decision,
      default_review_route: a.review_route ?? m.review_route,
      allowable: a.default_decision === 'needs_review',
      current: listed(a.id),
      current_review_route: doc?.review_routes[a.id] ?? null,
    })),
    review_routes: { pattern: REVIEW_ROUTE_PATTERN, channels: CHANNELS, pack_default: m.review_route },
    current,
    document_schema: z.toJSONSchema(policySchema(m), { io: 'input' }) as Record<string, unknown>,
    limits: {
      list_max_items: POLICY_LIST_MAX,
      label_max_length: POLICY_LABEL_MAX,
      note_max_length: POLICY_NOTE_MAX,
      preview_samples_max: PREVIEW_SAMPLES_MAX,
      receipts_limit_max: RECEIPTS_LIMIT_MAX,
      review_approvals_max: APPROVALS_MAX,
      review_escalation_steps_max: ESCALATION_STEPS_MAX,
      review_rule_seconds_min: RULE_SECONDS_MIN,
      review_rule_seconds_max: RULE_SECONDS_MAX,
    },
    raw_material: {
      problem_code: 'raw_content_rejected' as const,
      error_code_prefix: rawMaterialCode(''),
      max_string_length: POLICY_STRING_MAX,
      rules: [
        { id: SECRET_FIELD_NAME_RULE.id, applies_to: 'field name' as const, description: SECRET_FIELD_NAME_RULE.description },
        ...RAW_MATERIAL_RULES.map((r) => ({ id: r.id, applies_to: 'value' as const, description: r.description })),
      ],
    },
    rules: RULES,
  };
}
