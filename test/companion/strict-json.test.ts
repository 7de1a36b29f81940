/**
 * Strict JSON at the edge (companion/core/strict-json.ts): each rule refused with its own code,
 * and what passes parses to exactly what JSON.parse would build.
 */
import { describe, expect, it } from 'vitest';
import { ProblemError } from '../../companion/core/errors.ts';
import { createTestContext } from './helpers.ts';
import { JSON_MAX_DEPTH, JSON_MAX_VALUES, parseStrictJson, STRICT_JSON_RULES } from '../../companion/core/strict-json.ts';
import { parseJson } from '../../shared/canonical-json.ts';

const utf8 = (s: string) => new TextEncoder().encode(s);

function refusal(bytes: Uint8Array): ProblemError {
  try {
    parseStrictJson(bytes);
  } catch (e) {
    if (e instanceof ProblemError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('parseStrictJson', () => {
  it.each([
    ['invalid UTF-8 (a lone continuation byte)', Uint8Array.of(0x22, 0x80, 0x22), 'json_invalid_utf8'],
    ['an overlong encoding of "/"', Uint8Array.of(0x22, 0xc0, 0xaf, 0x22), 'json_invalid_utf8'],
    ['a UTF-8-encoded surrogate (CESU)', Uint8Array.of(0x22, 0xed, 0xa0, 0x80, 0x22), 'json_invalid_utf8'],
    ['an escaped lone surrogate', utf8('{"a":"x\\ud800"}'), 'json_lone_surrogate'],
    ['a reversed escaped pair', utf8('["\\udc00\\ud800"]'), 'json_lone_surrogate'],
    ['a lone surrogate in a member name', utf8('{"\\udfff":1}'), 'json_lone_surrogate'],
    ['a duplicate member', utf8('{"a":1,"a":1}'), 'json_duplicate_member'],
    ['a duplicate spelt with an escape', utf8('{"pack":"law","p\\u0061ck":"law"}'), 'json_duplicate_member'],
    ['an integer past 2^53', utf8('{"n":9007199254740993}'), 'json_unsafe_number'],
    ['a negative integer past -(2^53)', utf8('[-9007199254740992]'), 'json_unsafe_number'],
    ['an integral exponent past 2^53', utf8('[1e300]'), 'json_unsafe_number'],
    ['a number past double range', utf8('[1.5e400]'), 'json_unsafe_number'],
    ['nesting one past the limit', utf8('['.repeat(JSON_MAX_DEPTH + 1) + ']'.repeat(JSON_MAX_DEPTH + 1)), 'json_too_deep'],
    ['10,000-deep nesting, unclosed', utf8('{"a":'.repeat(10_000)), 'json_too_deep'],
    ['too many values', utf8(`[${'0,'.repeat(JSON_MAX_VALUES)}0]`), 'json_too_many_values'],
    ['an empty body', utf8(''), 'malformed_json'],
    ['a trailing comma', utf8('[1,]'), 'malformed_json'],
    ['a BOM (RFC 8259 §8.1: must not be added)', utf8('\ufeff{}'), 'malformed_json'],
  ])('refuses %s with 422 %s', (_label, bytes, code) => {
    const e = refusal(bytes);
    expect(e.status).toBe(422);
    expect(e.code).toBe(code);
  });

  it('never quotes the body in its message', () => {
    const canary = 'CANARY-strict-json-7f3a';
    for (const text of [`{"${canary}":"\\ud800"}`, `{"${canary}":1,"${canary}":2}`, `{"${canary}":1,}`, `["${canary}",1e999]`]) {
      expect(refusal(utf8(text)).message).not.toContain(canary);
    }
  });

  it('accepts what is within every limit and parses it as JSON.parse does', () => {
    const text = JSON.stringify({ a: [1, -0.5, 9007199254740991, -9007199254740991, 1e300 / 1e290, 'é😀', null, true, false], '\u00e9': { b: '\\"' } });
    expect(parseStrictJson(utf8(text)).value).toEqual(JSON.parse(text));
    const deepest = '['.repeat(JSON_MAX_DEPTH) + ']'.repeat(JSON_MAX_DEPTH);
    expect(parseStrictJson(utf8(deepest)).text).toBe(deepest);
    const most = `[${'0,'.repeat(JSON_MAX_VALUES - 2)}0]`;
    expect((parseStrictJson(utf8(most)).value as unknown[]).length).toBe(JSON_MAX_VALUES - 1);
  });

  it('refuses a repeated member wherever it sits and whatever it holds', () => {
    for (const text of [
      '{"a":{"b":[1,2,{"c":null}]},"x":1,"a":2}',
      '{"a":1,"x":{"y":true,"y":{"z":[]}}}',
      '[{"k":"v"},{"k":"v","k":"v"}]',
      '{"a":[],"a":[]}',
      '{"__proto__":1,"__proto__":2}',
    ]) {
      expect(refusal(utf8(text)).code).toBe('json_duplicate_member');
    }
  });

  it('reads every accepted body to the value the strict parser builds, __proto__ members as own members', () => {
    const bodies = [
      '{"__proto__":{"polluted":true},"a":1}',
      '{"2":"b","1":"a","z":{"10":1,"9":2}}',
      '[-0,0.0,1E2,1e-7,-1.5e+3,"\\u0041",""]',
      ' \t\n{ "a" : [ { } , [ ] , null ] }\r\n',
      '{"pack":"law","p\\u0061ck2":"l\\u00e9w"}',
      JSON.stringify({ pack: 'law', proposed_action: 'Draft a reply about matter 42.', law_context: { jurisdiction: 'US-NY', n: [1, 2.5, true, null] } }),
    ];
    for (const text of bodies) {
      const { value } = parseStrictJson(utf8(text));
      const strict = parseJson(text);
      expect(value).toStrictEqual(strict);
      expect(JSON.stringify(value)).toBe(JSON.stringify(strict));
    }
    const proto = parseStrictJson(utf8(bodies[0]!)).value as Record<string, unknown>;
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(Object.hasOwn(proto, '__proto__')).toBe(true);
  });

  it('counts brackets and numbers inside strings as text, not structure', () => {
    const text = JSON.stringify({ s: `${'['.repeat(100)} 99999999999999999999 \\" {` });
    expect(parseStrictJson(utf8(text)).value).toEqual(JSON.parse(text));
  });
});

describe('the published rules', () => {
  it('are in the verify kit and in the 422 of every route that takes JSON', async () => {
    const ctx = await createTestContext();
    try {
      const kit = await ctx.request('/v1/verify/kit');
      expect(kit.body.request_json_rules.map((r: { code: string }) => r.code)).toEqual(STRICT_JSON_RULES.map((r) => r.code));
      const doc = (await ctx.request('/openapi.json')).body;
      let routes = 0;
      for (const item of Object.values<any>(doc.paths)) {
        for (const op of Object.values<any>(item)) {
          if (!op?.requestBody?.content?.['application/json']) continue;
          routes++;
          for (const { code } of STRICT_JSON_RULES) expect(op.responses['422'].description).toContain(code);
        }
      }
      expect(routes).toBeGreaterThan(10);
    } finally {
      await ctx.close();
    }
  });
});
