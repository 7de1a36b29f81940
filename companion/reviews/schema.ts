/**
 * Request and response schemas of the reviews capability (interface-spec "Review request",
 * Endpoints POST /v1/reviews, GET /active-manifest, GET /law/grading-mirror), matching
 * companion/REVIEW-CONTRACT.tmp.md field for field; fields beyond it are additions.
 *
 * Objects are strict: an unknown field is a 422 naming it. No transforms on the review body:
 * the validated body equals the posted body, so payload_hash over it is the hash of what the
 * reviewer's client holds (DESIGN.md §3).
 */
import { boundedRecord } from '../core/bounds.ts';
import { z } from '../core/router.ts';
import { EvidencePacket, Sha256Hex, VerifyRequest, VerifyResponse } from '../evidence/schemas.ts';
import { IdempotencyKey } from '../evidence/idempotency/schema.ts';
import { GATE_PACKS } from '../packs/manifest.ts';
import { MIRROR_DIGEST, MIRROR_GRADES, MIRROR_KEYS, MIRROR_VERSION } from './mirror.ts';
import { FINAL_STATUSES, OPEN_STATUSES, REVIEW_DECISIONS } from './store.ts';

export const REASON_MAX_CHARS = 2000;

const gradeMessage = `expected one of ${MIRROR_GRADES.join(', ')}`;
const Grade = z.enum(MIRROR_GRADES, {
  error: (iss) => (iss.input === undefined ? `required: every one of the five mirror keys is graded (${gradeMessage})` : gradeMessage),
});

/** Exactly the five keys, each PASS, PARTIAL, FAIL or NA; a missing or extra key is named. */
export const MirrorGradesSchema = z
  .strictObject(Object.fromEntries(MIRROR_KEYS.map((k) => [k, Grade])) as Record<(typeof MIRROR_KEYS)[number], typeof Grade>)
  .openapi('MirrorGrades', { description: `Exactly ${MIRROR_KEYS.join(', ')}; each ${MIRROR_GRADES.join(', ')}` });

const ActionKey = z.string().min(1).max(200).openapi({ example: 'law:proposed-action:01JD3Q8Z5V7N4M2K6H8G0F1E2D' });

export const ReviewRequest = z
  .strictObject({
    pack: z.enum(GATE_PACKS, { error: `expected the reviewed action's pack: one of ${GATE_PACKS.join(', ')}` }),
    action_key: ActionKey.openapi({ description: 'The paused (needs_review) gate action' }),
    reviewer: z
      .string()
      .min(1)
      .max(200)
      .regex(/\S/, { error: 'expected a reviewer identifier, got only whitespace' })
      .regex(/^\P{Cc}+$/u, { error: 'control characters are not allowed' })
      .optional()
      .openapi({
        description:
          'Reviewer identifier; stored and sealed as decision metadata. Absent, or naming the principal behind the credential (its id, or its email in any ' +
          'letter case), the principal decides as itself. Naming anyone else is delegation: only a principal holding reviews:delegate may, and the receipt ' +
          'records it as asserted by that principal (422 reviewer_not_authenticated_principal otherwise, nothing sealed)',
      }),
    decision: z.enum(REVIEW_DECISIONS),
    reason: z
      .string()
      .max(REASON_MAX_CHARS)
      .optional()
      .openapi({ description: 'Never stored: committed only through payload_hash; the reviewer keeps it to re-prove the receipt' }),
    mirror_grades: MirrorGradesSchema.optional(),
    mirror_version: z
      .literal(MIRROR_VERSION, { error: `expected the published mirror_version ${JSON.stringify(MIRROR_VERSION)} (GET /law/grading-mirror)` })
      .optional(),
    mirror_digest: z
      .literal(MIRROR_DIGEST, { error: `expected the published mirror_digest ${MIRROR_DIGEST} (GET /law/grading-mirror)` })
      .optional(),
    idempotency_key: IdempotencyKey.optional(),
  })
  .openapi('ReviewRequest');

export type ReviewBody = z.infer<typeof ReviewRequest>;

/** A principal as receipts and answers name it (./reviewer.ts NamedPrincipal). */
export const NamedPrincipalSchema = z
  .strictObject({
    principal_id: z.string().openapi({ example: 'per_01JD3Q8Z5V7N4M2K6H8G0F1E2D' }),
    kind: z.enum(['person', 'service_account']),
    display_name: z.string(),
  })
  .openapi('ReviewPrincipal');

/** Who named the reviewer when it was not the decider: a principal (delegation) or a signed route callback's platform user. */
export const AssertedBySchema = z
  .union([
    NamedPrincipalSchema,
    z.strictObject({
      route: z.string().openapi({ description: 'The review route whose signed callback carried the decision', example: 'chat:legal-desk' }),
      provider: z.string().openapi({ example: 'slack:T0123ABCD' }),
      subject: z.string().openapi({ description: 'The platform user (Slack user.id, ServiceNow sys_user)', example: 'U0123ABCD' }),
    }),
  ])
  .openapi('ReviewAssertedBy', { description: 'Present when someone other than the decider named the reviewer; sealed in context.asserted_by' });

const Attribution = {
  principal: NamedPrincipalSchema.nullable().openapi({
    description:
      'The principal the decision is attributed to, sealed in context.principal: the credential\'s own principal deciding as itself, or the person a ' +
      'delegated reviewer or a callback\'s platform user maps to; null for a delegated name that maps to no person',
  }),
  asserted_by: AssertedBySchema.nullable(),
};

/**
 * Who has approved an action so far, as principals (the board and the record view). A person
 * whose id is principal_id or asserted_by.principal_id here cannot approve the action again.
 */
export const ApprovedBy = z
  .array(
    z.strictObject({
      receipt_action_key: z.string(),
      at: z.string(),
      reviewer: z.string().nullable().openapi({ description: "The spec's reviewer as sealed" }),
      principal_id: z.string().nullable().openapi({ description: 'Who the approval counts as (a person, or a principal as itself); null: a delegated name that maps to no person' }),
      display_name: z.string().nullable(),
      asserted_by: z
        .strictObject({ principal_id: z.string().nullable(), display_name: z.string().nullable(), route: z.string().nullable() })
        .nullable()
        .openapi({ description: 'Who named the reviewer: a principal (delegation) or a route (a signed callback); null when the principal approved as itself' }),
    }),
  )
  .openapi('ApprovedBy', {
    description: 'Approvals sealed so far, oldest first. A person named as principal_id or asserted_by.principal_id has approved and cannot approve again',
  });

const MirrorTupleFields = {
  mirror_version: z.string().max(64),
  mirror_digest: z.string().max(128),
  reviewed_action_key: z.string().max(200),
  review_action_key: z.string().max(200).openapi({ description: 'The review receipt whose signed attestation commits the tuple' }),
};

/** What a posted seal may say of who decided: checked against the signed context, so loose here. */
const PostedAttribution = {
  principal: boundedRecord(z.string().max(64), z.unknown(), 8).nullable().optional(),
  asserted_by: boundedRecord(z.string().max(64), z.unknown(), 8).nullable().optional(),
};

export const MirrorSeal = z
  .strictObject({
    format: z.literal('svc.law-mirror-seal/v1'),
    ...MirrorTupleFields,
    mirror_digest: Sha256Hex,
    mirror_grades: MirrorGradesSchema,
    ...Attribution,
    committed_in: z.literal('verify_request.seal.attestation.context.mirror'),
    verify_href: z.literal('/law/grading-mirror/verify'),
    verify_request: VerifyRequest,
  })
  .openapi('MirrorSeal', {
    description:
      'The mirror tuple and the review receipt that seals it; POST this object as it is to verify_href (anyone may, offline too: recompute mirror_digest from the rubric and verify the receipt)',
  });

export const ReviewResponse = z
  .strictObject({
    action_key: z.string().openapi({ description: "The review receipt's own key", example: 'law:review:01JD3Q8Z5V7N4M2K6H8G0F1E2D' }),
    reviewed_action_key: z.string(),
    decision: z.enum(REVIEW_DECISIONS),
    review_status: z.enum(['pending', 'escalated', 'approved', 'rejected']).openapi({
      description: "The action's review status after this decision; an approval short of the rule's approvals_required leaves it pending (or escalated)",
    }),
    approvals: z.number().int().openapi({ description: 'Approvals sealed for the action, this one included' }),
    approvals_required: z.number().int().openapi({ description: 'Distinct reviewers who must approve before release (the review rule captured when it paused)' }),
    reviewer: z.string().openapi({ description: "The principal's id when it decided as itself, else the reviewer as posted" }),
    ...Attribution,
    evidence_packet: EvidencePacket,
    payload_hash: Sha256Hex,
    review_route: z.null(),
    verify_request: VerifyRequest,
    next_step: z.string(),
    expires_at: z.string().openapi({ description: 'End of the review window (unchanged by an escalation)' }),
    mirror_seal: MirrorSeal.optional(),
  })
  .openapi('ReviewResponse');

const ReceiptSummary = z.strictObject({
  action_key: z.string(),
  decision: z.enum([...REVIEW_DECISIONS, 'expired']),
  reviewer: z.string().nullable(),
  recorded_at: z.string(),
});

/** The review rule captured on an item when its action paused, and what it has done so far. */
const RuleProgress = {
  approvals: z.number().int().openapi({ description: 'Approvals sealed so far, from distinct reviewers' }),
  approvals_required: z.number().int().openapi({ description: 'Approvals from distinct reviewers needed before release' }),
  escalation_level: z.number().int().openapi({ description: "Escalation steps of the review rule taken so far; review_route is the last step's route" }),
  reminded_at: z.string().nullable().openapi({ description: 'When the review.reminder event was raised; null if not (yet)' }),
};

const ReviewStatusEnum = z.enum([...OPEN_STATUSES, ...FINAL_STATUSES]);

/** The `review` object GET /v1/records/{action_key} carries for a gate action that needed review. */
export const RecordReview = z
  .strictObject({
    status: ReviewStatusEnum.openapi({ description: 'expired from the end of the window on, even before the expiry receipt is sealed (fail closed)' }),
    reviewer: z.string().nullable().openapi({ description: 'Who set the current status; null while pending and when expired' }),
    decided_at: z.string().nullable().openapi({ description: 'When the current status was set; for expired, the end of the window' }),
    receipt_action_key: z.string().nullable().openapi({ description: 'The receipt that set the current status (null until one is sealed)' }),
    expires_at: z.string().nullable(),
    review_route: z.string().nullable(),
    escalation_count: z.number().int(),
    ...RuleProgress,
    escalations: z
      .array(z.strictObject({ level: z.number().int(), from_route: z.string().nullable(), to_route: z.string(), at: z.string() }))
      .openapi({ description: "The review rule's escalation steps taken, in order" }),
    next_step: z.string().openapi({ description: 'Employee-safe instruction for the current status' }),
    receipts: z.array(ReceiptSummary).openapi({ description: 'Every review receipt of this action, oldest first' }),
    approved_by: ApprovedBy,
  })
  .openapi('RecordReview');

export const ActiveManifestQuery = z.strictObject({
  route: z.string().min(1).max(200).optional().openapi({ description: 'Exact review_route, e.g. browser:legal-review' }),
  limit: z
    .string()
    .max(3, { error: 'expected an integer from 1 to 200', abort: true })
    .regex(/^\d{1,3}$/, { error: 'expected an integer from 1 to 200' })
    .refine((v) => Number(v) >= 1 && Number(v) <= 200, { error: 'expected an integer from 1 to 200' })
    .optional()
    .openapi({ description: 'Most items returned, 1 to 200 (default 50)' }),
  pack: z.string().min(1).max(64).optional().openapi({ description: 'Exact pack, e.g. law' }),
  action_type: z.string().min(1).max(200).optional().openapi({ description: 'Exact action type, e.g. proposed-action' }),
  min_age_seconds: z
    .string()
    .max(10, { error: 'expected a whole number of seconds', abort: true })
    .regex(/^\d{1,10}$/, { error: 'expected a whole number of seconds' })
    .optional()
    .openapi({ description: 'Only items paused at least this long ago' }),
  cursor: z.string().min(1).max(400).optional().openapi({ description: 'next_cursor of the previous page (with the same filters)' }),
});

export const ActiveManifestItem = z.strictObject({
  action_key: z.string(),
  pack: z.string(),
  vertical: z.string(),
  action_type: z.string(),
  decision: z.literal('needs_review'),
  status: z.enum(OPEN_STATUSES),
  review_route: z.string().nullable(),
  href: z.string().openapi({ description: 'The evidence packet of the paused action' }),
  record_href: z.string(),
  next_step: z.string(),
  created_at: z.string(),
  age_seconds: z.number().int(),
  expires_at: z.string(),
  expires_in_seconds: z.number().int(),
  escalation_count: z.number().int(),
  ...RuleProgress,
  approved_by: ApprovedBy,
  review_context: z.enum(['available', 'not_shared']).openapi({
    description: 'Whether the submitter shared the end-to-end encrypted review context with the reviewers’ devices (GET /v1/reviews/{action_key}/context); the board lists open items only, so never expired',
  }),
});

const Seconds = z.number().int().nullable();
const InsightCounts = {
  total: z.number().int().openapi({ description: 'Review items (paused actions) in the period' }),
  pending: z.number().int().openapi({ description: 'Open, window still running' }),
  oldest_pending_age_seconds: Seconds.openapi({ description: 'Age of the oldest pending item; null when none' }),
  approved: z.number().int(),
  rejected: z.number().int(),
  expired: z.number().int().openapi({ description: 'Ended without a decision, including open items past their window' }),
  escalated: z.number().int().openapi({ description: 'Escalated by a reviewer or by the review rule at least once' }),
  approval_rate: z.number().nullable().openapi({ description: 'approved / (approved + rejected), 4 decimals; null when nothing was decided' }),
  median_seconds_to_decide: Seconds.openapi({ description: 'Nearest-rank median of pause → approval or rejection; null when nothing was decided' }),
  p90_seconds_to_decide: Seconds.openapi({ description: 'Nearest-rank 90th percentile of pause → approval or rejection' }),
};
export const ReviewInsights = z
  .strictObject({
    tenant_id: z.string(),
    generated_at: z.string(),
    since: z.string().nullable().openapi({ description: 'Items paused at or after this instant; null: all' }),
    ...InsightCounts,
    action_types: z.array(z.strictObject({ action_type: z.string(), ...InsightCounts })).openapi({ description: 'The same, per action type' }),
  })
  .openapi('ReviewInsights');

export const ReviewInsightsQuery = z.strictObject({
  since: z
    .string()
    .max(40, { error: 'expected an RFC 3339 date-time', abort: true })
    .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/, { error: 'expected an RFC 3339 date-time, e.g. 2025-01-01T00:00:00Z', abort: true })
    .refine((v) => !Number.isNaN(Date.parse(v)), { error: 'expected a valid RFC 3339 date-time' })
    .optional()
    .openapi({ description: 'Only items paused at or after this instant (RFC 3339)' }),
});

export const ActiveManifest = z
  .strictObject({
    tenant_id: z.string(),
    generated_at: z.string(),
    route: z.string().nullable(),
    limit: z.number().int(),
    truncated: z.boolean().openapi({ description: 'More paused items exist than were returned' }),
    next_cursor: z.string().nullable().openapi({ description: 'Pass as cursor for the next page; null on the last page' }),
    raw_content_stored: z.literal(false),
    items: z.array(ActiveManifestItem),
    insights: ReviewInsights.openapi({ description: 'GET /reviews/insights for all time' }),
  })
  .openapi('ActiveManifest');

export const MirrorRubricResponse = z
  .strictObject({
    mirror_version: z.string(),
    mirror_digest: Sha256Hex,
    digest_recipe: z.string(),
    keys: z.array(z.string()),
    grade_values: z.array(z.string()),
    rubric: z.record(z.string(), z.unknown()),
    verify_href: z.string(),
  })
  .openapi('LawGradingMirror');

/** What POST /law/grading-mirror/verify reads; loose where a tampered value must fail a check, not the request. */
export const MirrorVerifyRequest = z
  .strictObject({
    format: z.string().max(64).optional(),
    ...MirrorTupleFields,
    mirror_grades: boundedRecord(z.string().max(64), z.unknown(), 16),
    ...PostedAttribution,
    committed_in: z.string().max(128).optional(),
    verify_href: z.string().max(128).optional(),
    verify_request: VerifyRequest,
  })
  .openapi('MirrorVerifyRequest');

const MirrorCheck = z.strictObject({
  name: z.enum(['mirror_rubric', 'mirror_grades', 'mirror_commitment']),
  ok: z.boolean(),
  detail: z.string(),
});

export const MirrorVerifyResponse = z
  .strictObject({
    verified: z.boolean(),
    mirror_version: z.string(),
    mirror_digest: z.string(),
    review_action_key: z.string(),
    reviewed_action_key: z.string(),
    mirror_checks: z.array(MirrorCheck),
    evidence: VerifyResponse.omit({ action_key: true, failed_checks: true }),
    failed_checks: z.array(z.string()),
  })
  .openapi('MirrorVerifyResponse');
