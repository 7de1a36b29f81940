/**
 * Pack manifests: each pack is data (interface-spec "What the service does" 1–2). A manifest
 * says exactly which request fields its endpoint requires, which action or event types it
 * knows, what each decides by default, what it costs, and where its claims end.
 *
 * manifest_digest = SHA-256 hex of the manifest's JCS bytes (RFC 8785; DESIGN.md §3). It is
 * committed in every seal the pack shapes, and GET /v1/packs publishes each manifest verbatim
 * beside its digest, so anyone can recompute it and see exactly which rules a seal was made under.
 */
import { canonicalBytes } from '../../shared/canonical-json.ts';
import { sha256Hex } from '../../shared/hash.ts';
import { z } from '../core/router.ts';
import { KeySpecSchema } from './values.ts';
import type { KeySpec } from './values.ts';

export const GATE_PACKS = ['law', 'defense', 'medicine', 'education', 'us-regulatory'] as const;
export const RECORD_PACKS = ['eu-ai-act', 'ca-sb942'] as const;
export type GatePackName = (typeof GATE_PACKS)[number];
export type RecordPackName = (typeof RECORD_PACKS)[number];

export const DECISIONS = ['allow', 'needs_review', 'blocked'] as const;
export type Decision = (typeof DECISIONS)[number];

/** interface-spec "What the service does" 2: the boundary every pack repeats. */
export const CLAIM_BOUNDARY =
  'Outputs are evidence and routing, never a certification of compliance, legal approval or agency acceptance.';

/** interface-spec Gate response: review_route is `<channel>:<target>`; channels per "What the service does" 4. */
export const REVIEW_ROUTE_PATTERN = '^(chat|workflow|webhook|browser):[a-z0-9][a-z0-9-]{0,62}$';
const ReviewRoute = z.string().regex(new RegExp(REVIEW_ROUTE_PATTERN));
/** Action and event type ids become the middle segment of action_key, so they are kebab-case. */
const KEBAB = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const SNAKE = /^[a-z0-9]+(_[a-z0-9]+)*$/;

const ActionTypeSchema = z
  .strictObject({
    id: z.string().regex(KEBAB),
    title: z.string(),
    description: z.string(),
    /** What a fresh tenant gets before its policy overlay allows anything (interface-spec States). */
    default_decision: z.enum(DECISIONS),
    /** Overrides the pack's review route for this action type. */
    review_route: ReviewRoute.nullable(),
    citations: z.array(z.string()),
  })
  .openapi('PackActionType');

const RuleSchema = z
  .strictObject({
    id: z.string(),
    /** Rules only ever raise the decision (blocked > needs_review > allow); the tenant cannot waive them. */
    effect: z.enum(['needs_review', 'blocked']),
    /** All conditions must hold. Omitted action_types means every action type. A condition on an absent key never holds. */
    when: z.strictObject({
      action_types: z.array(z.string()).optional(),
      context: z.record(z.string(), z.array(z.union([z.string(), z.boolean()])).min(1)),
    }),
    /** The rule does not fire when every one of these holds (e.g. an export license is on file). */
    unless: z.strictObject({ context: z.record(z.string(), z.array(z.union([z.string(), z.boolean()])).min(1)) }).optional(),
    /** Where a needs_review this rule decides is routed; the tenant's route for the action type still wins. */
    review_route: ReviewRoute.optional(),
    /** Employee-safe and fixed: appended to next_step when the rule decides. */
    reason: z.string(),
    citations: z.array(z.string()),
  })
  .openapi('PackRule');

const NextStepSchema = z.strictObject({ allow: z.string(), needs_review: z.string(), blocked: z.string() });

export const GateManifestSchema = z
  .strictObject({
    name: z.enum(GATE_PACKS),
    kind: z.literal('gate'),
    vertical: z.enum(GATE_PACKS),
    version: z.string(),
    title: z.string(),
    summary: z.string(),
    /** Which engine evaluates the rules (gate/decide.ts); law is backed by the core engine (interface-spec 2). */
    engine: z.strictObject({
      id: z.string(),
      version: z.string(),
      /** For an engine with its own ruleset (law-core): its digest, so manifest_digest commits the rules too. */
      rules_digest: z.string().regex(/^[0-9a-f]{64}$/).optional(),
    }),
    /** Credits per estimated 1,000-token block (interface-spec Limits, "Credit basis"). */
    rate: z.number().int().positive(),
    endpoints: z.array(z.string()),
    /** Exact required request fields, dotted for nested keys (interface-spec Gate request). */
    required_fields: z.array(z.string()),
    optional_fields: z.array(z.string()),
    context_field: z.enum(['law_context', 'context']),
    context_keys: z.record(z.string(), KeySpecSchema),
    action_type_required: z.boolean(),
    /** Used when action_type is optional and absent (law: proposed-action). */
    default_action_type: z.string().nullable(),
    action_types: z.array(ActionTypeSchema).min(1),
    rules: z.array(RuleSchema),
    review_route: ReviewRoute,
    next_step: NextStepSchema,
    catalog_refs: z.array(z.string()),
    claim_boundary: z.string(),
  })
  .openapi('GatePackManifest');

const EventTypeSchema = z
  .strictObject({
    id: z.string().regex(SNAKE),
    /** The event type in kebab-case: the middle segment of the record's action_key. */
    action_type: z.string().regex(KEBAB),
    title: z.string(),
    duty: z.string(),
    citations: z.array(z.string()),
    /** Digest keys only: each ends in _sha256 and holds 64 lowercase hex characters. */
    source_payload: z.strictObject({ required: z.array(z.string()), optional: z.array(z.string()) }),
    metadata: z.record(z.string(), KeySpecSchema),
  })
  .openapi('PackEventType');

export const RecordManifestSchema = z
  .strictObject({
    name: z.enum(RECORD_PACKS),
    kind: z.literal('record'),
    version: z.string(),
    title: z.string(),
    summary: z.string(),
    regulation: z.strictObject({ name: z.string(), citation: z.string() }),
    rate: z.number().int().positive(),
    endpoints: z.array(z.string()),
    required_fields: z.array(z.string()),
    optional_fields: z.array(z.string()),
    event_types: z.array(EventTypeSchema).min(1),
    catalog_refs: z.array(z.string()),
    claim_boundary: z.string(),
  })
  .openapi('RecordPackManifest');

export type GateManifest = z.infer<typeof GateManifestSchema>;
export type RecordManifest = z.infer<typeof RecordManifestSchema>;
export type PackManifest = GateManifest | RecordManifest;
export type ActionTypeSpec = GateManifest['action_types'][number];
export type RuleSpec = GateManifest['rules'][number];
export type EventTypeSpec = RecordManifest['event_types'][number];

/** SHA-256 hex of the manifest's JCS bytes. */
export function manifestDigest(manifest: PackManifest): string {
  return sha256Hex(canonicalBytes(manifest));
}

/** Top-level fields every gate request may carry besides the pack's own (interface-spec Gate request). */
export const GATE_OPTIONAL_FIELDS = ['surface', 'source_key', 'redacted_text', 'client_nonce', 'idempotency_key'] as const;
export const RECORD_OPTIONAL_FIELDS = ['metadata', 'idempotency_key'] as const;

type GateInput = Omit<GateManifest, 'kind' | 'vertical' | 'required_fields' | 'optional_fields' | 'endpoints' | 'claim_boundary'> & {
  /** Pack-specific words appended to the common claim boundary. */
  claim_boundary_note: string;
};

/** Builds a gate manifest: derives its field lists and endpoints, checks it, freezes it. */
export function defineGatePack(input: GateInput): GateManifest {
  const { claim_boundary_note, ...rest } = input;
  const ctx = input.context_field;
  const keys = Object.entries(input.context_keys) as [string, KeySpec][];
  const manifest: GateManifest = {
    ...rest,
    kind: 'gate',
    vertical: input.name,
    endpoints: ['/v1/gate', `/${input.name}/proposed-action`],
    required_fields: [
      'pack',
      'proposed_action',
      ...(input.action_type_required ? ['action_type'] : []),
      ctx,
      ...keys.filter(([, s]) => s.required).map(([k]) => `${ctx}.${k}`),
    ],
    optional_fields: [
      ...(input.action_type_required ? [] : ['action_type']),
      ...keys.filter(([, s]) => !s.required).map(([k]) => `${ctx}.${k}`),
      ...GATE_OPTIONAL_FIELDS,
    ],
    claim_boundary: `${CLAIM_BOUNDARY} ${claim_boundary_note}`,
  };
  return deepFreeze(checkGate(GateManifestSchema.parse(manifest)));
}

type RecordInput = Omit<RecordManifest, 'kind' | 'required_fields' | 'optional_fields' | 'endpoints' | 'claim_boundary'> & {
  claim_boundary_note: string;
};

export function defineRecordPack(input: RecordInput): RecordManifest {
  const { claim_boundary_note, ...rest } = input;
  const manifest: RecordManifest = {
    ...rest,
    kind: 'record',
    endpoints: ['/v1/record', '/v1/record/batch'],
    required_fields: ['pack', 'event_type', 'occurred_at', 'source_payload'],
    optional_fields: [...RECORD_OPTIONAL_FIELDS],
    claim_boundary: `${CLAIM_BOUNDARY} ${claim_boundary_note}`,
  };
  return deepFreeze(checkRecord(RecordManifestSchema.parse(manifest)));
}

/** Cross-field checks zod cannot express; a bad manifest stops startup. */
function checkGate(m: GateManifest): GateManifest {
  const ids = new Set(m.action_types.map((a) => a.id));
  const fail = (why: string) => {
    throw new Error(`pack ${m.name}: ${why}`);
  };
  if (ids.size !== m.action_types.length) fail('duplicate action type id');
  if (m.action_type_required === (m.default_action_type !== null)) fail('exactly one of action_type_required and default_action_type');
  if (m.default_action_type !== null && !ids.has(m.default_action_type)) fail(`unknown default_action_type ${m.default_action_type}`);
  const ruleIds = new Set<string>();
  for (const rule of m.rules) {
    if (ruleIds.has(rule.id)) fail(`duplicate rule id ${rule.id}`);
    ruleIds.add(rule.id);
    for (const t of rule.when.action_types ?? []) if (!ids.has(t)) fail(`rule ${rule.id} names unknown action type ${t}`);
    for (const [k, values] of [...Object.entries(rule.when.context), ...Object.entries(rule.unless?.context ?? {})]) {
      const spec = m.context_keys[k];
      if (spec === undefined) fail(`rule ${rule.id} names unknown context key ${k}`);
      // A condition no valid request can meet is a typo that silently disables the rule.
      for (const v of values) if (!admits(spec!, v)) fail(`rule ${rule.id}: ${k} can never be ${JSON.stringify(v)}`);
    }
    if (rule.effect === 'blocked' && rule.review_route !== undefined) fail(`rule ${rule.id} blocks, so it routes nowhere`);
  }
  return m;
}

/** Whether a request could carry this value under the key's spec (enum and boolean keys; others are free ids). */
function admits(spec: KeySpec, v: string | boolean): boolean {
  switch (spec.value.type) {
    case 'enum':
      return typeof v === 'string' && spec.value.values.includes(v);
    case 'boolean':
      return typeof v === 'boolean';
    default:
      return typeof v === 'string';
  }
}

function checkRecord(m: RecordManifest): RecordManifest {
  for (const e of m.event_types) {
    for (const k of [...e.source_payload.required, ...e.source_payload.optional]) {
      if (!/^[a-z0-9]+(_[a-z0-9]+)*_sha256$/.test(k)) throw new Error(`pack ${m.name}: source_payload key ${k} must end in _sha256`);
    }
    if (e.action_type !== e.id.replace(/_/g, '-')) throw new Error(`pack ${m.name}: ${e.id} action_type must be its kebab-case form`);
  }
  return m;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
