/**
 * Request and response schemas of the tenant policy endpoints (interface-spec "Tenant policy
 * (query policy_pack)"; the spec leaves bodies open, so these are ours). Query objects are
 * strict: an unknown parameter is a 422, never ignored (interface-spec Errors, Rules).
 */
import { boundedRecord } from '../core/bounds.ts';
import { z } from '../core/router.ts';
import { EvidencePacket, Sha256Hex, VerifyRequest } from '../evidence/schemas.ts';
import { DECISIONS, GATE_PACKS } from '../packs/manifest.ts';
import { PolicyDocumentBody } from './document.ts';

/** Samples one preview takes: enough to cover every action type of a pack several times over. */
export const PREVIEW_SAMPLES_MAX = 50;

export const RECEIPTS_LIMIT_MAX = 100;
export const RECEIPTS_LIMIT_DEFAULT = 50;

const PolicyPack = z
  .enum(GATE_PACKS, { error: `policy_pack is required: one of ${GATE_PACKS.join(', ')} (a gate pack)` })
  .openapi({ param: { name: 'policy_pack', in: 'query' }, description: 'The gate pack this policy applies to' });

export const PolicyQuery = z.object({ policy_pack: PolicyPack }).strict();

export const ReceiptsQuery = z
  .object({
    policy_pack: PolicyPack,
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(RECEIPTS_LIMIT_MAX)
      .default(RECEIPTS_LIMIT_DEFAULT)
      .openapi({ param: { name: 'limit', in: 'query' }, description: `1 to ${RECEIPTS_LIMIT_MAX}, default ${RECEIPTS_LIMIT_DEFAULT}` }),
    before_version: z.coerce
      .number()
      .int()
      .min(1)
      .optional()
      .openapi({ param: { name: 'before_version', in: 'query' }, description: 'Only versions older than this one: pass next_before_version to page on' }),
  })
  .strict();

export const PreviewRequest = z
  .object({
    policy: PolicyDocumentBody,
    samples: z
      .array(boundedRecord(z.string().max(64), z.unknown(), 16))
      .min(1)
      .max(PREVIEW_SAMPLES_MAX)
      .openapi({ description: 'Gate request bodies for the policy_pack, validated exactly as POST /{vertical}/proposed-action does; never stored or echoed' }),
  })
  .strict()
  .openapi('TenantPolicyPreviewRequest');

/** A stored document: the normalised form (policy/document.ts), all four policy fields present. */
const StoredDocument = z
  .object({
    policy_pack: z.enum(GATE_PACKS),
    allow_action_types: z.array(z.string()),
    deny_action_types: z.array(z.string()),
    review_action_types: z.array(z.string()),
    review_routes: z.record(z.string(), z.string()),
    review_rules: z
      .record(
        z.string(),
        z.object({
          approvals_required: z.number().int(),
          remind_after_seconds: z.number().int().optional(),
          escalation: z.array(z.object({ after_seconds: z.number().int(), route: z.string() })),
        }),
      )
      .optional()
      .openapi({ description: 'Present only when the version has review rules; each with its defaults made explicit' }),
    review_context: z.enum(['encrypted', 'off']).optional().openapi({ description: 'Present only when the pack shares review context (off is the default)' }),
    review_context_action_types: z
      .record(z.string(), z.enum(['encrypted', 'off']))
      .optional()
      .openapi({ description: 'Present only when some action type sets its own review context mode' }),
    label: z.string().optional(),
    note: z.string().optional(),
  })
  .openapi('TenantPolicyStoredDocument');

export const PolicyVersion = z
  .object({
    policy_pack: z.enum(GATE_PACKS),
    version: z.number().int().min(1),
    digest: Sha256Hex.openapi({ description: "SHA-256 of the document's JCS bytes; the receipt's payload_hash and the policy_digest of gate seals under this version" }),
    previous_digest: Sha256Hex.nullable(),
    actor: z.string().openapi({ description: 'API key id that made this version (never the key)' }),
    created_at: z.string().openapi({ description: "The receipt's signed recorded_at" }),
    document: StoredDocument,
    receipt: z
      .object({ action_key: z.string(), href: z.string(), evidence_packet: EvidencePacket, verify_request: VerifyRequest })
      .openapi({ description: 'The sealed policy receipt; POST verify_request to /v1/verify' }),
  })
  .openapi('TenantPolicyVersion');

export const PutResponse = PolicyVersion.extend({
  changed: z.boolean().openapi({ description: 'false when the document equalled the current version: nothing was sealed or stored' }),
}).openapi('TenantPolicyPutResponse');

export const ReceiptsResponse = z
  .object({
    policy_pack: z.enum(GATE_PACKS),
    receipts: z.array(PolicyVersion).openapi({ description: 'Newest first' }),
    next_before_version: z.number().int().nullable().openapi({ description: 'Pass as before_version for older versions; null at the first' }),
  })
  .openapi('TenantPolicyReceipts');

const DecisionView = z.object({ decision: z.enum(DECISIONS), review_route: z.string().nullable() });
const Counts = z.object({ allow: z.number().int(), needs_review: z.number().int(), blocked: z.number().int() });

export const PreviewResponse = z
  .object({
    policy_pack: z.enum(GATE_PACKS),
    current: z.object({ version: z.number().int().nullable(), digest: Sha256Hex.nullable() }),
    candidate: z.object({ digest: Sha256Hex.openapi({ description: 'The digest a PUT of this policy would get' }), document: StoredDocument }),
    results: z.array(
      z.object({
        index: z.number().int(),
        action_type: z.string(),
        current: DecisionView,
        candidate: DecisionView,
        decision_changed: z.boolean(),
        route_changed: z.boolean(),
        changed: z.boolean(),
      }),
    ),
    summary: z.object({
      samples: z.number().int(),
      changed: z.number().int(),
      unchanged: z.number().int(),
      changed_indexes: z.array(z.number().int()),
      current_decisions: Counts,
      candidate_decisions: Counts,
    }),
    saved: z.literal(false).openapi({ description: 'A preview stores, seals and meters nothing' }),
  })
  .openapi('TenantPolicyPreview');

export const OptionsResponse = z
  .object({
    policy_pack: z.enum(GATE_PACKS),
    pack_version: z.string(),
    manifest_digest: Sha256Hex,
    action_types: z.array(
      z.object({
        id: z.string(),
        title: z.string(),
        default_decision: z.enum(DECISIONS),
        default_review_route: z.string(),
        allowable: z.boolean().openapi({ description: 'Whether an allow entry can waive the default (only a needs_review default can be)' }),
        current: z.enum(['allow', 'deny', 'review']).nullable(),
        current_review_route: z.string().nullable(),
      }),
    ),
    review_routes: z.object({ pattern: z.string(), channels: z.array(z.string()), pack_default: z.string() }),
    current: PolicyVersion.nullable(),
    document_schema: z.record(z.string(), z.unknown()).openapi({ description: 'JSON Schema (2020-12) of the PUT body for this pack' }),
    limits: z.record(z.string(), z.number().int()),
    raw_material: z.object({
      problem_code: z.literal('raw_content_rejected'),
      error_code_prefix: z.string(),
      max_string_length: z.number().int(),
      rules: z.array(z.object({ id: z.string(), applies_to: z.enum(['value', 'field name']), description: z.string() })),
    }),
    rules: z.array(z.string()).openapi({ description: 'How a policy is checked and applied' }),
  })
  .openapi('TenantPolicyOptions');
