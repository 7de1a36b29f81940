/**
 * Value specs: the data form of "what may this key hold", shared by gate context keys and
 * record metadata keys. A spec is part of its pack's manifest (so it is published verbatim by
 * GET /v1/packs and committed by the manifest digest) and is also turned into the zod
 * validator that checks requests, so the published rule and the enforced rule are one value.
 *
 * Every string kind is short and shaped (ids, enums, region codes, locales, timestamps):
 * nothing here can carry free text, so context and metadata stay raw-safe (interface-spec
 * "What the service does" 7).
 */
import { z } from '../core/router.ts';

/** Id-shaped: a letter or digit, then letters, digits and . _ : / @ - (no spaces, no base64 padding). */
export const ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:/@-]*$';
/** ISO 3166-1 alpha-2 country, optionally an ISO 3166-2 subdivision: US, US-CA, DE-BY. */
export const REGION_PATTERN = '^[A-Z]{2}(-[A-Z0-9]{1,3})?$';
/** A BCP 47 language tag in its common short form: en, en-US, pt-BR, zh-Hant-TW. */
export const LOCALE_PATTERN = '^[a-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$';
export const ID_MAX_LENGTH = 128;

export const ValueSpecSchema = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('enum'), values: z.array(z.string()).min(1) }),
    z.strictObject({ type: z.literal('enum_list'), values: z.array(z.string()).min(1), max_items: z.number().int().positive() }),
    z.strictObject({ type: z.literal('id'), pattern: z.literal(ID_PATTERN), max_length: z.number().int().positive() }),
    z.strictObject({
      type: z.literal('id_list'),
      pattern: z.literal(ID_PATTERN),
      max_length: z.number().int().positive(),
      max_items: z.number().int().positive(),
    }),
    z.strictObject({ type: z.literal('boolean') }),
    z.strictObject({ type: z.literal('region'), pattern: z.literal(REGION_PATTERN) }),
    z.strictObject({ type: z.literal('locale'), pattern: z.literal(LOCALE_PATTERN) }),
    z.strictObject({ type: z.literal('timestamp'), format: z.literal('RFC 3339 date-time with offset') }),
  ])
  .openapi('PackValueSpec', { description: 'What a context or metadata key may hold' });

export type ValueSpec = z.infer<typeof ValueSpecSchema>;

export const KeySpecSchema = z
  .strictObject({ required: z.boolean(), description: z.string(), value: ValueSpecSchema })
  .openapi('PackKeySpec');

export type KeySpec = z.infer<typeof KeySpecSchema>;

// Constructors keep the manifests short and their specs exact.
export const enumValue = (values: readonly string[]): ValueSpec => ({ type: 'enum', values: [...values] });
export const enumList = (values: readonly string[], maxItems = values.length): ValueSpec => ({
  type: 'enum_list',
  values: [...values],
  max_items: maxItems,
});
export const idValue = (maxLength = ID_MAX_LENGTH): ValueSpec => ({ type: 'id', pattern: ID_PATTERN, max_length: maxLength });
export const idList = (maxItems: number, maxLength = 64): ValueSpec => ({
  type: 'id_list',
  pattern: ID_PATTERN,
  max_length: maxLength,
  max_items: maxItems,
});
export const booleanValue = (): ValueSpec => ({ type: 'boolean' });
export const regionValue = (): ValueSpec => ({ type: 'region', pattern: REGION_PATTERN });
export const localeValue = (): ValueSpec => ({ type: 'locale', pattern: LOCALE_PATTERN });
/** RFC 3339 date-time with offset: "2025-01-01T00:00:00.123456789+14:00" is 35 characters. */
export const TIMESTAMP_MAX_LENGTH = 40;
export const timestampValue = (): ValueSpec => ({ type: 'timestamp', format: 'RFC 3339 date-time with offset' });

export const key = (required: boolean, description: string, value: ValueSpec): KeySpec => ({ required, description, value });

/** A zod error map that names a missing key precisely and otherwise keeps zod's message. */
export function missingMessage(message: string) {
  return (issue: { input?: unknown }) => (issue.input === undefined ? message : undefined);
}

/** The validator a value spec stands for. `missing` is the message when the key is absent. */
export function valueSchema(spec: ValueSpec, missing: string): z.ZodType {
  const error = missingMessage(missing);
  switch (spec.type) {
    case 'enum':
      return z.enum(spec.values as [string, ...string[]], { error });
    case 'enum_list':
      return z.array(z.enum(spec.values as [string, ...string[]]), { error }).min(1).max(spec.max_items);
    case 'id':
      return shapedString(spec.pattern, spec.max_length, 'an id (letters, digits and . _ : / @ -, no spaces)', error);
    case 'id_list':
      return z
        .array(shapedString(spec.pattern, spec.max_length, 'an id (letters, digits and . _ : / @ -, no spaces)'), { error })
        .min(1)
        .max(spec.max_items);
    case 'boolean':
      return z.boolean({ error });
    case 'region':
      return shapedString(spec.pattern, 6, 'an ISO 3166 region code such as US or US-CA', error);
    case 'locale':
      return shapedString(spec.pattern, 35, 'a BCP 47 language tag such as en or en-US', error);
    case 'timestamp':
      return z.iso.datetime({ offset: true, error }).max(TIMESTAMP_MAX_LENGTH);
  }
}

function shapedString(pattern: string, maxLength: number, what: string, error?: ReturnType<typeof missingMessage>): z.ZodType {
  return z
    .string(error ? { error } : undefined)
    // abort: a value too long is reported once, not again for its pattern.
    .max(maxLength, { error: `expected at most ${maxLength} characters`, abort: true })
    .regex(new RegExp(pattern), { error: `expected ${what}` });
}

/** A strict object of the given keys: unknown keys are rejected, each one named. */
export function keysSchema(keys: Record<string, KeySpec>, missing: (name: string) => string, missingSelf?: string): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, spec] of Object.entries(keys)) {
    const schema = valueSchema(spec.value, missing(name));
    shape[name] = spec.required ? schema : schema.optional();
  }
  return z.strictObject(shape, missingSelf ? { error: missingMessage(missingSelf) } : undefined);
}
