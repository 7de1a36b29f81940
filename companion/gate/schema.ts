/**
 * Gate request and response schemas (interface-spec "Gate request", "Gate response"), built
 * from each pack's manifest so that the fields GET /v1/packs publishes as required are exactly
 * the fields these validators require, and the OpenAPI document shows them per pack.
 *
 * Objects are strict: an unknown field is a 422 naming it, never silently dropped (a dropped
 * field would still be inside the caller's payload_hash but not inside what we checked).
 * No transforms or defaults: the validated body equals the posted body, so payload_hash over it
 * is the hash of what the caller holds (DESIGN.md §3).
 */
import { z } from '../core/router.ts';
import { EvidencePacket, Sha256Hex, VerifyRequest } from '../evidence/schemas.ts';
import { DECISIONS, GATE_PACKS } from '../packs/manifest.ts';
import type { GateManifest } from '../packs/manifest.ts';
import { IdempotencyKey } from '../evidence/idempotency/schema.ts';
import { gatePacks } from '../packs/registry.ts';
import { ID_PATTERN, keysSchema, missingMessage } from '../packs/values.ts';

/** About 8,000 tokens at the 4-bytes-per-token estimate: a proposed next action, not a document. */
export const PROPOSED_ACTION_MAX_CHARS = 32_000;
export const REDACTED_TEXT_MAX_CHARS = 32_000;

/** How the body names its pack: required on /v1/gate, optional (but must agree) on /{vertical}/proposed-action. */
export type PackField = 'required' | 'matches-path';

export function gateRequestSchema(m: GateManifest, packField: PackField) {
  const required = (field: string) => missingMessage(`${field} is required by the ${m.name} pack`);
  const ctx = m.context_field;
  const actionTypes = m.action_types.map((a) => a.id) as [string, ...string[]];
  const actionType = z.enum(actionTypes, { error: required('action_type') });
  const context = keysSchema(
    m.context_keys,
    (k) => `${ctx}.${k} is required by the ${m.name} pack`,
    `${ctx} is required by the ${m.name} pack: an object with ${requiredKeys(m).join(', ')}`,
  );
  const pack =
    packField === 'required'
      ? z.literal(m.name)
      : z.literal(m.name, { error: `must be "${m.name}" on /${m.name}/proposed-action, or omitted` }).optional();

  return z.strictObject({
    pack,
    proposed_action: z
      .string({ error: required('proposed_action') })
      .min(1, { abort: true })
      .max(PROPOSED_ACTION_MAX_CHARS)
      .regex(/\S/, { error: 'expected text, got only whitespace' })
      .openapi({ description: proposedActionDescription(m) }),
    action_type: m.action_type_required ? actionType : actionType.optional(),
    [ctx]: context.openapi({ description: `Required keys: ${requiredKeys(m).join(', ')}. See GET /v1/packs` }),
    surface: z.string().max(64).regex(new RegExp(ID_PATTERN)).optional().openapi({ description: 'Calling surface label' }),
    source_key: z
      .string()
      .max(200)
      .regex(/^[\x21-\x7e]+$/, { error: 'expected visible ASCII without spaces' })
      .optional()
      .openapi({ description: "Stable key from the caller's workflow state" }),
    redacted_text: z
      .string()
      .max(REDACTED_TEXT_MAX_CHARS)
      .optional()
      .openapi({ description: 'Redacted text only; hashed into payload_hash, never stored or logged' }),
    client_nonce: ClientNonce.optional(),
    idempotency_key: IdempotencyKey.optional(),
  });
}

/**
 * A random value of at least 128 bits the caller adds so that payload_hash cannot be confirmed
 * by hashing guessed bodies (without it the hash of a short or templated payload is a
 * dictionary lookup, and two tenants gating the same body get the same hash). It is part of
 * the body, so it is committed in payload_hash like every other field (DESIGN.md §3), and like
 * proposed_action it is never stored or logged: only the caller keeps it, to re-prove the body.
 * 16 random bytes as unpadded base64url are 22 characters, as hex 32; both fit this pattern.
 */
export const CLIENT_NONCE_PATTERN = '^[A-Za-z0-9_-]{22,64}$';

export const ClientNonce = z
  .string()
  .regex(new RegExp(CLIENT_NONCE_PATTERN), { error: 'expected 22 to 64 base64url characters (at least 128 random bits, e.g. 16 random bytes as unpadded base64url or 32 hex digits)' })
  .openapi({
    description:
      'Recommended for every client. A fresh random value of at least 128 bits per action (e.g. 16 bytes from a CSPRNG as unpadded base64url), ' +
      'reused unchanged on a retry with the same idempotency_key. Hashed into payload_hash and never stored or logged; keep it with the ' +
      'request to re-prove the payload later. Without it, anyone holding an evidence packet can confirm a guessed payload by hashing it.',
    example: 'q3Jm0V9x2s7VbX1yZp4T8w',
    // The pattern bounds the length already; declared so clients and the bounds check see it.
    minLength: 22,
    maxLength: 64,
  });

/** The law engine reads the text in memory to classify it (law-engine/classify.ts); say so where the caller looks. */
function proposedActionDescription(m: GateManifest): string {
  const base = 'Text describing the next action. Hashed into payload_hash; never stored or logged';
  return m.engine.id === 'law-core'
    ? `${base}. Classified in memory into action classes (published by GET /v1/packs under engines); only class and rule ids are sealed`
    : base;
}

function requiredKeys(m: GateManifest): string[] {
  return Object.entries(m.context_keys)
    .filter(([, spec]) => spec.required)
    .map(([k]) => k);
}

const names = Object.fromEntries(GATE_PACKS.map((n) => [n, n.split('-').map((s) => s[0]!.toUpperCase() + s.slice(1)).join('')]));

/** Body of POST /v1/gate: one strict schema per pack, chosen by `pack`. */
export const GateRequest = z
  .discriminatedUnion(
    'pack',
    gatePacks().map((p) => gateRequestSchema(p.manifest, 'required').openapi(`${names[p.manifest.name]}GateRequest`)) as unknown as [
      ReturnType<typeof gateRequestSchema>,
      ...ReturnType<typeof gateRequestSchema>[],
    ],
    { error: (issue) => (issue.code === 'invalid_union' ? `pack is required: one of ${GATE_PACKS.join(', ')}` : undefined) },
  )
  .openapi('GateRequest');

/** Body of POST /{vertical}/proposed-action for one pack. */
export function verticalRequestSchema(m: GateManifest) {
  return gateRequestSchema(m, 'matches-path').openapi(`${names[m.name]}ProposedActionRequest`);
}

export const GateResponse = z
  .strictObject({
    decision: z.enum(DECISIONS),
    action_key: z.string().openapi({ example: 'law:proposed-action:01JD3Q8Z5V7N4M2K6H8G0F1E2D' }),
    evidence_packet: EvidencePacket,
    payload_hash: Sha256Hex,
    review_route: z.string().nullable().openapi({ example: 'browser:legal-review' }),
    verify_request: VerifyRequest,
    next_step: z.string(),
    reasons: z
      .array(
        z
          .strictObject({
            rule: z.string().openapi({ description: 'A rule id the seal commits in its attestation context (findings)', example: 'law.default.proposed-action' }),
            explanation: z.string().openapi({ description: 'Fixed by the pack or the tenant policy, never built from the request: safe to show the employee' }),
          })
          .openapi('DecisionReason'),
      )
      .openapi({ description: 'Why the decision is what it is: one entry per deciding rule (waived pack defaults excluded)' }),
    catalog_refs: z.array(z.string()),
  })
  .openapi('GateResponse');
