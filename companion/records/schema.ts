/**
 * Record request and response schemas (interface-spec "Record request"), built from the record
 * pack manifests: one strict schema per event type, chosen by event_type.
 *
 * Raw-safe at the edge (interface-spec "What the service does" 7, Errors 422): source_payload
 * admits only the event type's `*_sha256` keys, each exactly 64 lowercase hex characters, and
 * metadata only the declared short values. Anything else there (free text, base64, a number, a
 * nested object, an unknown key) may be raw content, so the whole request answers 422
 * `raw_content_rejected` naming every offending path, and nothing is sealed or stored.
 */
import type { ZodError } from 'zod';
import { fieldErrors, ProblemError } from '../core/errors.ts';
import type { FieldError } from '../core/errors.ts';
import { z } from '../core/router.ts';
import { EvidencePacket, Sha256Hex, VerifyRequest } from '../evidence/schemas.ts';
import type { EventTypeSpec, RecordManifest } from '../packs/manifest.ts';
import { recordPacks } from '../packs/registry.ts';
import { keysSchema, missingMessage, TIMESTAMP_MAX_LENGTH } from '../packs/values.ts';
import { IdempotencyKey } from '../evidence/idempotency/schema.ts';

const SHA256_HEX = /^[0-9a-f]{64}$/;
const NOT_A_DIGEST = 'expected a SHA-256 digest (64 lowercase hex characters); raw content is rejected';

/**
 * Messages this module gives a missing key or object. An absent digest is an incomplete
 * request, not raw content, so it is told apart from the raw-content errors by its message.
 */
const MISSING = new Set<string>();
function missing(message: string): string {
  MISSING.add(message);
  return message;
}

function digestKeys(m: RecordManifest, e: EventTypeSpec) {
  const shape: Record<string, z.ZodType> = {};
  for (const k of e.source_payload.required) shape[k] = digestSchema(k, e.id);
  for (const k of e.source_payload.optional) shape[k] = digestSchema(k, e.id).optional();
  const all = [...e.source_payload.required, ...e.source_payload.optional].join(', ');
  return z
    .strictObject(shape, {
      error: (iss) =>
        iss.input === undefined
          ? missing(`source_payload is required: an object of digests (${all}) for ${m.name} ${e.id}`)
          : `expected an object of SHA-256 digests (${all}); raw content is rejected`,
    })
    .openapi({ description: `Digests only: ${all}. Raw content is rejected with 422 raw_content_rejected` });
}

function digestSchema(k: string, eventType: string) {
  return z
    .string({ error: (iss) => (iss.input === undefined ? missing(`source_payload.${k} is required for ${eventType}`) : NOT_A_DIGEST) })
    .max(64, { error: NOT_A_DIGEST, abort: true })
    .regex(SHA256_HEX, { error: NOT_A_DIGEST });
}

function eventSchema(m: RecordManifest, e: EventTypeSpec) {
  return z.strictObject({
    pack: z.literal(m.name, { error: `event_type ${e.id} belongs to the ${m.name} pack` }),
    event_type: z.literal(e.id),
    occurred_at: z.iso
      .datetime({ offset: true, error: missingMessage('occurred_at is required: when the act happened (RFC 3339 date-time)') })
      .max(TIMESTAMP_MAX_LENGTH)
      .openapi({ description: 'When the act happened (ISO 8601 / RFC 3339 with offset)' }),
    source_payload: digestKeys(m, e),
    metadata: keysSchema(e.metadata, (k) => missing(`metadata.${k} is required for ${e.id}`))
      .optional()
      .openapi({ description: `Declared short values only: ${Object.keys(e.metadata).join(', ')}` }),
    idempotency_key: IdempotencyKey.optional(),
  });
}

const pascal = (s: string) => s.split(/[-_]/).map((p) => p[0]!.toUpperCase() + p.slice(1)).join('');
const EVENT_TYPES = recordPacks().flatMap((p) => p.manifest.event_types.map((e) => e.id));

/** Body of POST /v1/record and of each item of POST /v1/record/batch. */
export const RecordRequest = z
  .discriminatedUnion(
    'event_type',
    recordPacks().flatMap((p) =>
      p.manifest.event_types.map((e) => eventSchema(p.manifest, e).openapi(`${pascal(p.manifest.name)}${pascal(e.id)}Record`)),
    ) as unknown as [ReturnType<typeof eventSchema>, ...ReturnType<typeof eventSchema>[]],
    { error: (iss) => (iss.code === 'invalid_union' ? `event_type is required: one of ${EVENT_TYPES.join(', ')}` : undefined) },
  )
  .openapi('RecordRequest');

export type RecordBody = z.infer<typeof RecordRequest>;

/** Where raw content could hide: a value refused here may be some. */
const RAW_SAFE_PARTS = ['/source_payload', '/metadata'];

function isRawContentError(e: FieldError): boolean {
  return RAW_SAFE_PARTS.some((p) => e.path === p || e.path.startsWith(`${p}/`)) && !MISSING.has(e.message);
}

/** The 422 for a record body that failed validation: raw_content_rejected when any offending path could hold content. */
export function recordProblem(error: ZodError): ProblemError {
  const errors = fieldErrors(error, 'body').map(explainUnknownKey);
  const raw = errors.filter(isRawContentError);
  if (raw.length === 0) return ProblemError.validation(errors);
  return new ProblemError({
    status: 422,
    code: 'raw_content_rejected',
    detail:
      `source_payload holds digests only and metadata declared short values only; ${raw.length} offending ` +
      `path${raw.length === 1 ? '' : 's'}. Nothing was stored. Send SHA-256 digests of the content and keep the content yourself.`,
    errors,
  });
}

function explainUnknownKey(e: FieldError): FieldError {
  if (e.code !== 'unrecognized_key') return e;
  if (e.path.startsWith('/source_payload/')) return { ...e, message: `${e.message}: source_payload admits only this event type's *_sha256 digest keys` };
  if (e.path.startsWith('/metadata/')) return { ...e, message: `${e.message}: metadata admits only this event type's declared keys (GET /v1/packs)` };
  return e;
}

export const PayloadRetention = z
  .strictObject({
    raw_content_stored: z.literal(false),
    stored: z.string(),
    metadata_values_retained: z.boolean(),
    caller_retains: z.string(),
  })
  .openapi('PayloadRetention', { description: 'interface-spec "What the service does" 7: what was stored and what the caller keeps' });

export const RecordResponse = z
  .strictObject({
    status: z.literal('recorded'),
    action_key: z.string().openapi({ example: 'eu-ai-act:output-marked:01JD3Q8Z5V7N4M2K6H8G0F1E2D' }),
    pack: z.string(),
    event_type: z.string(),
    occurred_at: z.string(),
    evidence_packet: EvidencePacket,
    payload_hash: Sha256Hex,
    review_route: z.null().openapi({ description: 'Records are never routed for review' }),
    verify_request: VerifyRequest,
    payload_retention: PayloadRetention,
  })
  .openapi('RecordResponse');
