/**
 * The tenant policy document for one policy_pack (interface-spec "What the service does" 3:
 * "allow lists, hard denies, required review routes"), how it is checked, normalised and
 * digested, and the gate overlay it stands for (./policy-overlay.ts).
 *
 *   { policy_pack?, allow_action_types?, deny_action_types?, review_action_types?,
 *     review_routes?: { <action type>: "<channel>:<target>" },
 *     review_rules?: { <action type>: { approvals_required?, remind_after_seconds?, escalation? } },
 *     review_context?: "encrypted" | "off",
 *     review_context_action_types?: { <action type>: "encrypted" | "off" },
 *     label?, note? }
 *
 * Checked against the pack's manifest: every action type is one of the pack's, an action type
 * takes at most one of allow, deny and review (two would contradict each other, and the
 * stricter would silently win), and an allow entry must waive something: the gate only waives
 * a pack default of needs_review (gate/decide.ts), so allowing an action type the pack blocks
 * by default is refused rather than stored as a no-op. Raw material is refused first
 * (policy/secrets.ts). Every failing path is listed at once (STYLE.md).
 *
 * Normalised form (what is stored, digested and returned): all four policy fields present,
 * lists sorted, plus policy_pack; review_rules only when it has an entry (so the digest of a
 * document without rules is what it was before rules existed), each rule with its defaults
 * made explicit (reviews/rules.ts); review_context only when "encrypted" and
 * review_context_action_types only when it has an entry, for the same reason. Lists are sets, so two documents that mean the same get the
 * same digest. digest = SHA-256 hex of the normalised document's JCS bytes (RFC 8785;
 * DESIGN.md §3): the policy receipt's payload_hash and the policy_digest of every gate seal
 * made under this version, so anyone holding the document can recompute it.
 */
import { payloadHash } from '../../shared/attestation.ts';
import { fieldErrors, jsonPointer, ProblemError } from '../core/errors.ts';
import type { FieldError } from '../core/errors.ts';
import { recordBounds } from '../core/bounds.ts';
import { z } from '../core/router.ts';
import type { PolicyOverlay } from './policy-overlay.ts';
import { GATE_PACKS, REVIEW_ROUTE_PATTERN } from '../packs/manifest.ts';
import type { GateManifest, GatePackName } from '../packs/manifest.ts';
import type { GatePack } from '../packs/registry.ts';
import { findRawMaterial, POLICY_STRING_MAX } from './secrets.ts';
import { normaliseRule, ReviewRuleSchema, RULE_FIELDS, ruleConflicts, STEP_FIELDS } from '../reviews/rules.ts';
import type { ReviewRule } from '../reviews/rules.ts';

export const POLICY_LABEL_MAX = 64;
export const POLICY_NOTE_MAX = POLICY_STRING_MAX;
/** Longest list: more entries than any pack has action types. */
export const POLICY_LIST_MAX = 64;
const REVIEW_ROUTE_MAX = 128;
const ACTION_TYPE_MAX = 64;

export const LIST_FIELDS = ['allow_action_types', 'deny_action_types', 'review_action_types'] as const;
export type ListField = (typeof LIST_FIELDS)[number];
const TOP_FIELDS = new Set(['policy_pack', ...LIST_FIELDS, 'review_routes', 'review_rules', 'review_context', 'review_context_action_types', 'label', 'note']);

/**
 * Whether the employee's browser seals the gate request to the reviewers' devices when an action
 * pauses (companion/review-context/): "encrypted", or "off" (the default). Per pack
 * (review_context) and per action type (review_context_action_types, which wins).
 */
export const REVIEW_CONTEXT_MODES = ['encrypted', 'off'] as const;
export type ReviewContextMode = (typeof REVIEW_CONTEXT_MODES)[number];

export interface PolicyDocument {
  policy_pack: GatePackName;
  allow_action_types: string[];
  deny_action_types: string[];
  review_action_types: string[];
  review_routes: Record<string, string>;
  review_rules?: Record<string, ReviewRule>;
  review_context?: ReviewContextMode;
  review_context_action_types?: Record<string, ReviewContextMode>;
  label?: string;
  note?: string;
}

const KEBAB = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const ReviewRoute = z
  .string()
  .max(REVIEW_ROUTE_MAX, { error: `expected at most ${REVIEW_ROUTE_MAX} characters`, abort: true })
  .regex(new RegExp(REVIEW_ROUTE_PATTERN), { error: 'expected <channel>:<target>: channel chat, workflow, webhook or browser; target lowercase letters, digits and -' })
  .openapi({ example: 'workflow:privacy-office' });

const LIST_DOCS: Record<ListField, string> = {
  allow_action_types: "Action types whose pack default of needs_review the tenant waives; pack rules still apply",
  deny_action_types: 'Hard denies: blocked whatever the pack says',
  review_action_types: 'Required review: needs_review even when the pack or an allow entry would allow',
};

function policyShape(actionType: z.ZodType<string>, policyPack: z.ZodType<string>) {
  const list = (field: ListField) => z.array(actionType).max(POLICY_LIST_MAX).optional().openapi({ description: LIST_DOCS[field] });
  return z.strictObject({
    policy_pack: policyPack.optional().openapi({ description: 'May repeat the policy_pack query parameter; must equal it' }),
    allow_action_types: list('allow_action_types'),
    deny_action_types: list('deny_action_types'),
    review_action_types: list('review_action_types'),
    review_routes: z
      .partialRecord(actionType, ReviewRoute)
      .refine((o) => Object.keys(o).length <= POLICY_LIST_MAX, { error: `expected at most ${POLICY_LIST_MAX} routes` })
      .openapi(recordBounds(POLICY_LIST_MAX, ACTION_TYPE_MAX))
      .optional()
      .openapi({ description: "Review route per action type, overriding the pack's when the decision is needs_review" }),
    review_rules: z
      .partialRecord(actionType, ReviewRuleSchema)
      .refine((o) => Object.keys(o).length <= POLICY_LIST_MAX, { error: `expected at most ${POLICY_LIST_MAX} rules` })
      .openapi(recordBounds(POLICY_LIST_MAX, ACTION_TYPE_MAX))
      .optional()
      .openapi({
        description:
          'Review rule per action type: approvals from distinct reviewers before release (1 to 5), a reminder and an escalation chain of routes. ' +
          'Captured on each review item when its action pauses.',
      }),
    review_context: z
      .enum(REVIEW_CONTEXT_MODES)
      .optional()
      .openapi({
        description:
          'encrypted: when an action of this pack pauses, the employee\'s browser seals the exact gate request to the devices of the people who may decide it (HPKE, RFC 9180), ' +
          'and the service holds only the ciphertexts while the review is open. off (default): nothing is shared.',
      }),
    review_context_action_types: z
      .partialRecord(actionType, z.enum(REVIEW_CONTEXT_MODES))
      .refine((o) => Object.keys(o).length <= POLICY_LIST_MAX, { error: `expected at most ${POLICY_LIST_MAX} entries` })
      .openapi(recordBounds(POLICY_LIST_MAX, ACTION_TYPE_MAX))
      .optional()
      .openapi({ description: 'review_context per action type, overriding the pack-wide review_context' }),
    label: z.string().min(1).max(POLICY_LABEL_MAX).optional().openapi({ description: 'Short name of this version; no raw material' }),
    note: z.string().min(1).max(POLICY_NOTE_MAX).optional().openapi({ description: 'Why this version; no raw material' }),
  });
}

/** The document as the OpenAPI description shows it; each pack's own schema is stricter. */
export const PolicyDocumentBody = policyShape(
  z.string().max(ACTION_TYPE_MAX).regex(KEBAB, { error: 'expected a kebab-case action type id' }),
  z.enum(GATE_PACKS),
).openapi('TenantPolicyDocument', { description: 'Tenant policy for one policy_pack; the action types are those of GET /tenant/policy/options' });

const PACK_SCHEMAS = new Map<string, ReturnType<typeof policyShape>>();

/** The document schema for one pack: its own action type ids only. */
export function policySchema(m: GateManifest): ReturnType<typeof policyShape> {
  let schema = PACK_SCHEMAS.get(m.name);
  if (!schema) {
    const ids = m.action_types.map((a) => a.id) as [string, ...string[]];
    schema = policyShape(
      z.enum(ids, { error: `expected an action type of the ${m.name} pack: ${ids.join(', ')}` }),
      z.literal(m.name, { error: `must equal the policy_pack query parameter (${m.name})` }),
    );
    PACK_SCHEMAS.set(m.name, schema);
  }
  return schema;
}

export type PolicyCheck = { ok: true; document: PolicyDocument; digest: string } | { ok: false; errors: FieldError[] };

/**
 * Checks a submitted policy for `pack`; `at` is where it sits in the request body (the preview
 * nests it under /policy). Raw material is looked for first and wins over a shape error at or
 * below the same path, so a secret is reported as a secret, never as "not an action type".
 */
export function checkPolicy(pack: GatePack, input: unknown, at: readonly (string | number)[] = []): PolicyCheck {
  const m = pack.manifest;
  const ids = new Set(m.action_types.map((a) => a.id));
  // Declared keys are the document's fields; under review_routes and review_rules, the pack's
  // action types; under a rule, its fields and those of its escalation steps.
  const declared = (path: readonly (string | number)[], key: string) => {
    if (path.length === 0) return TOP_FIELDS.has(key);
    if (path[0] === 'review_routes' || path[0] === 'review_context_action_types') return path.length === 1 && ids.has(key);
    if (path[0] !== 'review_rules') return false;
    if (path.length === 1) return ids.has(key);
    if (path.length === 2) return RULE_FIELDS.has(key);
    return path.length === 4 && path[2] === 'escalation' && STEP_FIELDS.has(key);
  };
  const raw = findRawMaterial(input, declared, at);
  const base = jsonPointer(at);
  const parsed = policySchema(m).safeParse(input);
  const shapeErrors = parsed.success ? [] : fieldErrors(parsed.error, 'body').map((e) => ({ ...e, path: base + e.path }));
  const covered = (p: string) => raw.some((r) => p === r.path || p.startsWith(`${r.path}/`));
  const errors = [...raw, ...[...shapeErrors, ...conflicts(m, input, base)].filter((e) => !covered(e.path))];
  if (errors.length > 0 || !parsed.success) return { ok: false, errors };
  const document = normalise(m.name, parsed.data);
  return { ok: true, document, digest: policyDigest(document) };
}

type ParsedPolicy = z.infer<ReturnType<typeof policyShape>>;

/** The pack's action type ids in one list of the submitted policy, by index; anything else is the schema's to report. */
function listEntries(m: GateManifest, input: unknown, field: ListField): [number, string][] {
  const list = typeof input === 'object' && input !== null ? (input as Record<string, unknown>)[field] : undefined;
  if (!Array.isArray(list)) return [];
  return list.flatMap((id, i): [number, string][] => (typeof id === 'string' && m.action_types.some((a) => a.id === id) ? [[i, id]] : []));
}

/**
 * Cross-field rules zod cannot express, each naming the exact list entry at fault. They run
 * even when the shape check failed, so one answer lists every problem.
 */
function conflicts(m: GateManifest, input: unknown, base: string): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Map<string, ListField>();
  const err = (path: string, message: string, code: string) => out.push({ in: 'body', path: base + path, message, code });
  for (const field of LIST_FIELDS) {
    for (const [i, id] of listEntries(m, input, field)) {
      const earlier = seen.get(id);
      if (earlier === field) err(`/${field}/${i}`, `${id} is listed twice in ${field}`, 'duplicate_action_type');
      else if (earlier) err(`/${field}/${i}`, `${id} is already in ${earlier}: an action type takes at most one of allow, deny and review`, 'conflicting_action_type');
      else seen.set(id, field);
    }
  }
  for (const [i, id] of listEntries(m, input, 'allow_action_types')) {
    if (m.action_types.find((a) => a.id === id)?.default_decision === 'blocked') {
      err(`/allow_action_types/${i}`, `the ${m.name} pack blocks ${id} by default; an allow list waives only a needs_review default`, 'not_allowable');
    }
  }
  const rules = typeof input === 'object' && input !== null ? (input as Record<string, unknown>).review_rules : undefined;
  if (typeof rules === 'object' && rules !== null) {
    for (const [id, rule] of Object.entries(rules)) {
      for (const [path, message, code] of ruleConflicts(rule)) err(`/review_rules/${jsonPointer([id]).slice(1)}${path}`, message, code);
    }
  }
  return out;
}

function normalise(policyPack: GatePackName, p: ParsedPolicy): PolicyDocument {
  const sorted = (list: string[] | undefined) => [...(list ?? [])].sort();
  return {
    policy_pack: policyPack,
    allow_action_types: sorted(p.allow_action_types),
    deny_action_types: sorted(p.deny_action_types),
    review_action_types: sorted(p.review_action_types),
    review_routes: { ...(p.review_routes as Record<string, string> | undefined) },
    ...(p.review_rules && Object.keys(p.review_rules).length > 0
      ? { review_rules: Object.fromEntries(Object.entries(p.review_rules).map(([id, r]) => [id, normaliseRule(r!)])) }
      : {}),
    ...(p.review_context === 'encrypted' ? { review_context: 'encrypted' as const } : {}),
    ...(p.review_context_action_types && Object.keys(p.review_context_action_types).length > 0
      ? { review_context_action_types: { ...(p.review_context_action_types as Record<string, ReviewContextMode>) } }
      : {}),
    ...(p.label !== undefined ? { label: p.label } : {}),
    ...(p.note !== undefined ? { note: p.note } : {}),
  };
}

/** The review context mode of one action type under this document: its own entry, else the pack's, else off. */
export function reviewContextMode(document: Pick<PolicyDocument, 'review_context' | 'review_context_action_types'>, actionType: string): ReviewContextMode {
  return document.review_context_action_types?.[actionType] ?? document.review_context ?? 'off';
}

/** SHA-256 hex of the document's JCS bytes (shared/attestation.ts payloadHash). */
export function policyDigest(document: PolicyDocument): string {
  return payloadHash(document as unknown as Record<string, unknown>);
}

/** The gate's view of a policy version (gate/decide.ts): ids and routes, never the label or note. */
export function overlayOf(document: PolicyDocument, digest: string): PolicyOverlay {
  return Object.freeze({
    digest,
    allow_action_types: Object.freeze([...document.allow_action_types]),
    deny_action_types: Object.freeze([...document.deny_action_types]),
    review_action_types: Object.freeze([...document.review_action_types]),
    review_routes: Object.freeze({ ...document.review_routes }),
    review_rules: Object.freeze({ ...document.review_rules }),
  });
}

/** The 422 for a refused policy: raw_content_rejected when any path holds raw material. */
export function policyProblem(errors: FieldError[]): ProblemError {
  const raw = errors.filter((e) => e.code?.startsWith('raw_material.')).length;
  if (raw === 0) return ProblemError.validation(errors);
  return new ProblemError({
    status: 422,
    code: 'raw_content_rejected',
    detail:
      `Raw prompt, document, key or secret material is not stored in policy; ${raw} offending path${raw === 1 ? '' : 's'} ` +
      '(each error names its rule; GET /tenant/policy/options lists the rules). Nothing was stored.',
    errors,
  });
}
