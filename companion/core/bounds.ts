/**
 * Bounded request shapes. Every string, array and object a route accepts declares its maximum
 * (so the OpenAPI description states it and the validator refuses oversized input before other
 * work); zod has no maximum for records, so open objects are built here.
 */
import { z } from './router.ts';

/**
 * An object with caller-chosen member names: at most `maxProperties` members, each name a
 * bounded string. Published as JSON Schema maxProperties and propertyNames.maxLength.
 */
/** JSON Schema for member names: zod-to-openapi does not emit propertyNames itself. */
export function keyBound(keys: z.ZodType<string>): { type: 'string'; maxLength: number } {
  const maxLength = (keys as unknown as { maxLength: number | null }).maxLength;
  if (maxLength === null || maxLength === undefined) throw new TypeError('boundedRecord: member names need a maximum length');
  return { type: 'string', maxLength };
}

/** OpenAPI 3.1 metadata of an open object's bounds (propertyNames is 3.1's, absent from zod-to-openapi's types). */
export function recordBounds(maxProperties: number, maxNameLength: number): { maxProperties: number } {
  return { maxProperties, propertyNames: { type: 'string', maxLength: maxNameLength } } as { maxProperties: number };
}

export function boundedRecord<K extends z.ZodType<string>, V extends z.ZodType>(keys: K, values: V, maxProperties: number) {
  return z
    .record(keys, values)
    .refine((o) => Object.keys(o).length <= maxProperties, { error: `expected at most ${maxProperties} members` })
    .openapi(recordBounds(maxProperties, keyBound(keys).maxLength));
}
