/**
 * Strict JSON at the edge: every JSON request body is read here, once, before any validator,
 * store or hash sees it, so the value a route hashes is exactly what the caller sent and the
 * caller's own bytes re-prove `payload_hash` (DESIGN.md §3; RFC 8785 §3.1 requires I-JSON
 * input). The rules, each refused with 422 problem+json whose `code` names it:
 *
 *   json_invalid_utf8      the bytes are not UTF-8 (RFC 8259 §8.1); a lenient decoder would
 *                          substitute U+FFFD and hash text the caller never sent
 *   json_lone_surrogate    a string holds an unpaired surrogate, raw or escaped as \ud800
 *                          (RFC 7493 §2.1): it has no UTF-8 form to hash
 *   json_duplicate_member  an object names a member twice (RFC 7493 §2.3): JSON.parse keeps
 *                          the last one, another parser the first
 *   json_unsafe_number     an integer beyond ±(2^53−1), or a number beyond IEEE 754 double range
 *                          (RFC 7493 §2.2): parsers disagree on its value, so on its hash
 *   json_too_deep          arrays/objects nested deeper than JSON_MAX_DEPTH (RFC 8259 §9)
 *   json_too_many_values   more than JSON_MAX_VALUES values in the whole document (RFC 8259 §9)
 *   malformed_json         not JSON text at all (RFC 8259)
 *
 * The structural limits are checked by one linear scan before anything is parsed, so no body
 * within the size limit costs more than two passes over its bytes. Messages name offsets and
 * limits, never the caller's text.
 */
import type { MiddlewareHandler } from 'hono';
import { parseJson } from '../../shared/canonical-json.ts';
import { isSvcError } from '../../shared/errors.ts';
import { ProblemError } from './errors.ts';
import type { ProblemCode } from './errors.ts';

/** Deeper than any request schema of ours (the deepest, a policy preview sample, is 4). */
export const JSON_MAX_DEPTH = 32;
/** Values (members, elements and the root) per document: a record batch of 100 needs ~1,500. */
export const JSON_MAX_VALUES = 10_000;

export type StrictJsonCode =
  | 'json_invalid_utf8'
  | 'json_lone_surrogate'
  | 'json_duplicate_member'
  | 'json_unsafe_number'
  | 'json_too_deep'
  | 'json_too_many_values'
  | 'malformed_json';

/** The rules as published in the OpenAPI description and the verify kit. */
export const STRICT_JSON_RULES: readonly { code: StrictJsonCode; rule: string }[] = [
  { code: 'json_invalid_utf8', rule: 'The body is UTF-8 (RFC 8259 §8.1); invalid bytes are refused, never replaced with U+FFFD.' },
  { code: 'json_lone_surrogate', rule: 'Strings are well-formed Unicode (RFC 7493 §2.1): no unpaired surrogate, raw or escaped.' },
  { code: 'json_duplicate_member', rule: 'Member names are unique within an object (RFC 7493 §2.3).' },
  { code: 'json_unsafe_number', rule: 'Integers lie within ±(2^53−1) and numbers within IEEE 754 double range (RFC 7493 §2.2).' },
  { code: 'json_too_deep', rule: `Arrays and objects nest at most ${JSON_MAX_DEPTH} deep (RFC 8259 §9).` },
  { code: 'json_too_many_values', rule: `A document holds at most ${JSON_MAX_VALUES} values (RFC 8259 §9).` },
  { code: 'malformed_json', rule: 'The body is one JSON text (RFC 8259).' },
];

/** The rules in one paragraph, for the OpenAPI description of each JSON route's 422. */
export const STRICT_JSON_SUMMARY = `Request bodies are strict I-JSON (RFC 7493), checked before anything is validated or hashed; each broken rule is a 422 whose code names it: ${STRICT_JSON_RULES.map((r) => `${r.code} (${r.rule})`).join(' ')}`;

function refuse(code: StrictJsonCode, detail: string): ProblemError {
  return new ProblemError({ status: 422, code: code satisfies ProblemCode, detail });
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Parses a JSON request body under the rules above; throws a 422 ProblemError naming the rule. */
export function parseStrictJson(bytes: Uint8Array): { text: string; value: unknown } {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw refuse('json_invalid_utf8', 'the request body is not valid UTF-8 (RFC 8259 §8.1)');
  }
  const values = scanStructure(text);
  const quick = nativeParse(text, values);
  if (quick !== NOT_PARSED) return { text, value: quick };
  try {
    return { text, value: parseJson(text) };
  } catch (e) {
    if (isSvcError(e, 'JCS_LONE_SURROGATE')) throw refuse('json_lone_surrogate', `a string at offset ${offsetOf(e)} holds a lone surrogate (RFC 7493 §2.1)`);
    if (isSvcError(e, 'JCS_DUPLICATE_MEMBER')) throw refuse('json_duplicate_member', `a member name at offset ${offsetOf(e)} repeats an earlier one in the same object (RFC 7493 §2.3)`);
    if (isSvcError(e, 'JCS_INVALID_JSON')) throw refuse('malformed_json', `the request body is not valid JSON at offset ${offsetOf(e)} (RFC 8259)`);
    throw e;
  }
}

function offsetOf(e: { details: Record<string, unknown> | undefined }): string {
  const offset = e.details?.offset;
  return typeof offset === 'number' ? String(offset) : '?';
}

const NOT_PARSED: unique symbol = Symbol('not parsed');

/**
 * The value parseJson would return, by JSON.parse (native, a few times quicker), for text that
 * holds none of what the two read differently; NOT_PARSED for any other text, which parseJson
 * then reads (and refuses where it must, with its own offsets):
 *   - a \u escape: it may spell a lone surrogate, which JSON.parse accepts (RFC 7493 §2.1). Raw
 *     surrogates cannot occur: the text was decoded from strict UTF-8, which has none alone.
 *   - text JSON.parse refuses: malformed (RFC 8259).
 *   - a repeated member name (RFC 7493 §2.3): JSON.parse keeps the last and drops the earlier
 *     member with everything in it, so the value then holds fewer values (member names counted)
 *     than scanStructure counted in the text, where every string, number, literal, object and
 *     array is one. Without a repeat the two counts are equal.
 * Numbers beyond the safe range never reach here (scanStructure refuses them), and JSON.parse
 * makes a `__proto__` member an own property, as parseJson does.
 */
function nativeParse(text: string, values: number): unknown {
  if (text.includes('\\u')) return NOT_PARSED;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return NOT_PARSED;
  }
  return countValues(value) === values ? value : NOT_PARSED;
}

/** Values in a parsed document as scanStructure counts them in its text: containers, member names, scalars. */
function countValues(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 1;
  let n = 1;
  if (Array.isArray(value)) {
    for (const element of value) n += countValues(element);
  } else {
    for (const name of Object.keys(value)) n += 1 + countValues((value as Record<string, unknown>)[name]);
  }
  return n;
}

/**
 * One pass over the text outside strings: nesting depth, value count and every number token.
 * Malformed text is left for the parser to report; this only refuses what is well-formed but
 * beyond a limit, and does so before the recursive parser runs. Returns the values counted
 * (every string, member names included, number, literal, object and array).
 */
function scanStructure(text: string): number {
  let depth = 0;
  let values = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string: to the next quote not escaped by a backslash.
      for (i++; i < n; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c) i++;
        else if (s === 0x22) break;
      }
      values++;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > JSON_MAX_DEPTH) throw refuse('json_too_deep', `arrays/objects nest deeper than ${JSON_MAX_DEPTH} at offset ${i}`);
      values++;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let end = i + 1;
      while (end < n && isNumberChar(text.charCodeAt(end))) end++;
      checkNumber(text.slice(i, end), i);
      i = end - 1;
      values++;
    } else if (c === 0x74 || c === 0x66 || c === 0x6e) {
      values++; // true, false, null (the parser checks the spelling)
    }
    if (values > JSON_MAX_VALUES) throw refuse('json_too_many_values', `the document holds more than ${JSON_MAX_VALUES} values`);
  }
  return values;
}

/** Digits, sign, decimal point and exponent: the characters of an RFC 8259 §6 number. */
function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d;
}

function checkNumber(token: string, offset: number): void {
  const value = Number(token);
  if (Number.isNaN(value)) return; // not a number token: the parser reports it
  if (!Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value))) {
    throw refuse('json_unsafe_number', `the number at offset ${offset} is outside the range every JSON parser reads alike (RFC 7493 §2.2)`);
  }
}

const JSON_MEDIA_TYPE = /^application\/(?:[\w.-]+\+)?json$/i;

/**
 * Reads a JSON body strictly and hands the checked text to Hono's body cache, which the
 * zod-openapi json validator reads (`c.req.json()` parses `bodyCache.text`). JSON.parse of text
 * that passed these rules yields exactly the value the strict parser built. Bodies of other
 * media types are left to the route (its validator answers 415/422).
 */
export const strictJsonBody: MiddlewareHandler = async function strictJsonBody(c, next) {
  const type = c.req.header('content-type')?.split(';')[0]?.trim() ?? '';
  if (JSON_MEDIA_TYPE.test(type)) {
    const bytes = new Uint8Array(await c.req.arrayBuffer());
    const { text } = parseStrictJson(bytes);
    // Hono keeps the body promise under its kind (request.ts #cachedBody); its type says string.
    (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve(text);
  }
  await next();
};
