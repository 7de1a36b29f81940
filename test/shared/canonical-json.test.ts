/**
 * RFC 8785 (JCS) against the cyberphone vectors (co-author's reference data), the RFC's own
 * examples and Appendix B, 10,000 ES6 number serializations, the refusal rules, and
 * fast-check properties. Vectors are read from test/vectors/jcs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import vm from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { canonicalBytes, canonicalize, canonicalString, isCanonical, jsonString, MAX_JSON_DEPTH, parseJson } from '../../shared/canonical-json.ts';
import { SvcError } from '../../shared/errors.ts';
import type { SvcErrorCode } from '../../shared/errors.ts';
import { readVector, vectorPath } from '../helpers/vectors.ts';

function caught(f: () => unknown): SvcError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(SvcError);
    return e as SvcError;
  }
  throw new Error('expected a SvcError, but nothing was thrown');
}

function expectRefused(f: () => unknown, code: SvcErrorCode, path?: string): void {
  const e = caught(f);
  expect(e.code).toBe(code);
  if (path !== undefined) expect(e.details?.['path']).toBe(path);
}

function bytesFromHexDump(dump: string): Uint8Array {
  const tokens = dump.split(/\s+/).filter((t) => t !== '');
  for (const t of tokens) expect(t).toMatch(/^[0-9a-f]{2}$/);
  return Uint8Array.from(tokens, (t) => parseInt(t, 16));
}

function float64FromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

/** JSON text cannot tell -0 from 0 once canonicalized (RFC 8785 §3.2.2.3), so compare without it. */
function withoutNegativeZero(value: unknown): unknown {
  if (Object.is(value, -0)) return 0;
  if (Array.isArray(value)) return value.map(withoutNegativeZero);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      Object.defineProperty(out, k, { value: withoutNegativeZero(v), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

describe('cyberphone JCS vectors (jcs/input → jcs/output, jcs/outhex)', () => {
  const names = readdirSync(vectorPath('jcs', 'input')).filter((n) => n.endsWith('.json'));

  it('finds the six documented input files', () => {
    expect(names.sort()).toEqual(['arrays.json', 'french.json', 'structures.json', 'unicode.json', 'values.json', 'weird.json']);
  });

  it.each(names)('%s canonicalizes to the output bytes, byte for byte', (name) => {
    const input = readVector('jcs', 'input', name);
    const expected = new Uint8Array(readFileSync(vectorPath('jcs', 'output', name)));
    const hexDump = bytesFromHexDump(readVector('jcs', 'outhex', name.replace(/\.json$/, '.txt')));

    expect(hexDump).toEqual(expected);
    expect(canonicalBytes(parseJson(input))).toEqual(expected);
    expect(canonicalBytes(JSON.parse(input))).toEqual(expected);
  });

  it.each(names)('%s: isCanonical accepts the output and rejects the input', (name) => {
    const output = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(readFileSync(vectorPath('jcs', 'output', name)));
    expect(isCanonical(output)).toBe(true);
    expect(isCanonical(readVector('jcs', 'input', name))).toBe(false);
  });
});

describe('RFC 8785 §3.2.2.3 numbers', () => {
  it('matches all 10,000 lines of es6-numbers-10000.txt', () => {
    const lines = readVector('jcs', 'es6-numbers-10000.txt').split('\n');
    if (lines.at(-1) === '') lines.pop();
    expect(lines).toHaveLength(10_000);

    const failures: string[] = [];
    for (const line of lines) {
      const [bits, expected, extra] = line.split(',');
      if (bits === undefined || expected === undefined || extra !== undefined || !/^[0-9a-f]{1,16}$/.test(bits)) {
        failures.push(`malformed line ${JSON.stringify(line)}`);
        continue;
      }
      const value = float64FromBits(bits);
      const got = canonicalize(value);
      if (got !== expected) failures.push(`${bits}: expected ${expected}, got ${got}`);
      // The expected text must also parse back to the same double (-0 excepted) and be canonical.
      const back = parseJson(expected);
      if (back !== value) failures.push(`${bits}: ${expected} parses to ${String(back)}`);
      if (!isCanonical(expected)) failures.push(`${bits}: ${expected} not seen as canonical`);
    }
    expect(failures).toEqual([]);
  });

  // RFC 8785 Appendix B, Table 1 (finite rows).
  it.each([
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ])('Appendix B: %s → %s', (bits, expected) => {
    expect(canonicalize(float64FromBits(bits))).toBe(expected);
  });

  // RFC 8785 Appendix B: NaN (7fffffffffffffff) and Infinity (7ff0000000000000) are errors.
  it.each(['7fffffffffffffff', '7ff0000000000000', 'fff0000000000000'])('Appendix B: %s is refused', (bits) => {
    expectRefused(() => canonicalize(float64FromBits(bits)), 'JCS_UNSUPPORTED_VALUE', '$');
  });
});

describe('RFC 8785 §3.2.2.2 strings', () => {
  it('escapes exactly the mandated characters, with lowercase \\u00xx for other controls', () => {
    const short: Record<number, string> = { 0x08: '\\b', 0x09: '\\t', 0x0a: '\\n', 0x0c: '\\f', 0x0d: '\\r' };
    for (let c = 0; c < 0x20; c++) {
      const expected = short[c] ?? `\\u${c.toString(16).padStart(4, '0')}`;
      expect(canonicalize(String.fromCharCode(c))).toBe(`"${expected}"`);
    }
    expect(canonicalize('"')).toBe('"\\""');
    expect(canonicalize('\\')).toBe('"\\\\"');
    // Everything else is written as itself: '/', DEL, C1 controls, U+2028/9, non-BMP.
    for (const s of ['/', '\u007f', '\u0080', '\u009f', '\u2028', '\u2029', '\ufeff', '\u{1f600}', 'A\u030a', '<>&\'']) {
      expect(canonicalize(s)).toBe(`"${s}"`);
    }
  });

  it('writes non-BMP characters as their 4-byte UTF-8 form', () => {
    expect(canonicalBytes({ '\u{1f600}': '\u{10ffff}' })).toEqual(
      Uint8Array.from([0x7b, 0x22, 0xf0, 0x9f, 0x98, 0x80, 0x22, 0x3a, 0x22, 0xf4, 0x8f, 0xbf, 0xbf, 0x22, 0x7d]),
    );
  });
});

describe('RFC 8785 §3.2.3 member order', () => {
  it('reproduces the RFC §3.2.3 example (the emoji sorts by its lead surrogate, before U+FB33)', () => {
    const input = parseJson(`{
      "\\u20ac": "Euro Sign",
      "\\r": "Carriage Return",
      "\\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\\ud83d\\ude00": "Emoji: Grinning Face",
      "\\u0080": "Control",
      "\\u00f6": "Latin Small Letter O With Diaeresis"
    }`);
    expect(canonicalize(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
        '"\u20ac":"Euro Sign","\u{1f600}":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it('reproduces the RFC §3.2.2 example, including its UTF-8 bytes (§3.2.4)', () => {
    const input = parseJson(String.raw`{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }`);
    const expected = String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`;
    expect(canonicalize(input)).toBe(expected);
    expect(Array.from(canonicalBytes(input).subarray(0, 8), (b) => b.toString(16)).join(' ')).toBe('7b 22 6c 69 74 65 72 61');
  });

  it('orders by UTF-16 code units, not code points: U+1F600 < U+E000 < U+FFFF', () => {
    expect(canonicalize({ '\uffff': 3, '\ue000': 2, '\u{1f600}': 1, z: 0 })).toBe('{"z":0,"\u{1f600}":1,"\ue000":2,"\uffff":3}');
  });

  it('orders integer-like names as strings, not numbers, and is case sensitive', () => {
    expect(canonicalize({ 10: 'a', 9: 'b', 1: 'c', a: 'd', A: 'e', '': 'f', '01': 'g' })).toBe(
      '{"":"f","01":"g","1":"c","10":"a","9":"b","A":"e","a":"d"}',
    );
  });

  it('sorts nested objects too and keeps array order', () => {
    expect(canonicalize({ b: [{ y: 1, x: 2 }, 3, 'z'], a: {} })).toBe('{"a":{},"b":[{"x":2,"y":1},3,"z"]}');
  });
});

describe('values', () => {
  it.each([
    [null, 'null'],
    [true, 'true'],
    [false, 'false'],
    [-0, '0'],
    [1e21, '1e+21'],
    [1e-7, '1e-7'],
    ['', '""'],
    [[], '[]'],
    [{}, '{}'],
  ])('%j → %s', (value, expected) => {
    expect(canonicalize(value)).toBe(expected);
  });

  it('accepts null-prototype and other-realm plain objects', () => {
    const bare = Object.create(null) as Record<string, unknown>;
    bare['b'] = 1;
    bare['a'] = 2;
    expect(canonicalize(bare)).toBe('{"a":2,"b":1}');
    expect(canonicalize(vm.runInNewContext('({ b: [1, { d: true, c: null }], a: "x" })'))).toBe('{"a":"x","b":[1,{"c":null,"d":true}]}');
  });

  it('writes a shared (non-cyclic) reference once per occurrence', () => {
    const shared = { x: 1 };
    expect(canonicalize({ a: shared, b: [shared, shared] })).toBe('{"a":{"x":1},"b":[{"x":1},{"x":1}]}');
  });

  it('canonicalBytes is the UTF-8 of canonicalize', () => {
    const value = { '\u00e9': ['\u20ac', 1.5] };
    expect(canonicalBytes(value)).toEqual(new TextEncoder().encode(canonicalize(value)));
  });

  it(`accepts ${MAX_JSON_DEPTH} levels of nesting and refuses one more`, () => {
    let value: unknown = 0;
    for (let i = 0; i < MAX_JSON_DEPTH; i++) value = [value];
    expect(canonicalize(value)).toBe(`${'['.repeat(MAX_JSON_DEPTH)}0${']'.repeat(MAX_JSON_DEPTH)}`);
    expectRefused(() => canonicalize({ deep: value }), 'JCS_UNSUPPORTED_VALUE');
  });
});

describe('refusals', () => {
  class Point {
    constructor(readonly x: number) {}
  }
  const symbolKeyed = { a: 1, [Symbol('hidden')]: 2 };

  it.each<[string, unknown, string]>([
    ['NaN', { a: [1, 2, NaN] }, '$.a[2]'],
    ['Infinity', { a: Infinity }, '$.a'],
    ['-Infinity', [-Infinity], '$[0]'],
    ['undefined at the root', undefined, '$'],
    ['an undefined member (not dropped)', { a: 1, b: undefined }, '$.b'],
    ['an undefined element', [1, undefined], '$[1]'],
    ['an array hole', [1, , 3], '$[1]'],
    ['a function', { f: () => 1 }, '$.f'],
    ['a symbol', { s: Symbol('s') }, '$.s'],
    ['a bigint', { n: [0, 1n] }, '$.n[1]'],
    ['a Date', { when: new Date(0) }, '$.when'],
    ['a Map', { m: new Map([['a', 1]]) }, '$.m'],
    ['a Set', { s: new Set([1]) }, '$.s'],
    ['a Uint8Array', { b: new Uint8Array(2) }, '$.b'],
    ['an ArrayBuffer', new ArrayBuffer(2), '$'],
    ['a RegExp', { r: /x/ }, '$.r'],
    ['an Error', { e: new Error('x') }, '$.e'],
    ['a boxed string', { s: new String('x') }, '$.s'],
    ['a boxed number', [new Number(1)], '$[0]'],
    ['a class instance', { p: new Point(1) }, '$.p'],
    ['an object inheriting from a plain object', { o: Object.create({ inherited: 1 }) }, '$.o'],
    ['a symbol-keyed property', { nested: symbolKeyed }, '$.nested'],
    ['a non-identifier name in the path', { 'a b': { 'c.d': [NaN] } }, '$["a b"]["c.d"][0]'],
  ])('refuses %s with its path', (_label, value, path) => {
    expectRefused(() => canonicalize(value), 'JCS_UNSUPPORTED_VALUE', path);
  });

  it.each<[string, unknown, string]>([
    ['a lone high surrogate at the end of a value', { s: 'a\ud800' }, '$.s'],
    ['a lone low surrogate at the start of a value', ['\udc00b'], '$[0]'],
    ['a reversed pair', '\ude00\ud83d', '$'],
    ['a lone surrogate in a member name', { ok: 1, 'x\udbff': 2 }, '$["x\\udbff"]'],
    ['a lone surrogate in a nested member name', { a: [{ '\udfff': 1 }] }, '$.a[0]["\\udfff"]'],
  ])('refuses %s with JCS_LONE_SURROGATE', (_label, value, path) => {
    expectRefused(() => canonicalize(value), 'JCS_LONE_SURROGATE', path);
  });

  it('refuses cycles through objects and arrays with JCS_CYCLE', () => {
    const self: Record<string, unknown> = { a: 1 };
    self['self'] = self;
    expectRefused(() => canonicalize(self), 'JCS_CYCLE', '$.self');

    const list: unknown[] = [];
    list.push({ back: list });
    expectRefused(() => canonicalize({ list }), 'JCS_CYCLE', '$.list[0].back');
  });

  it('never calls toJSON: not a non-enumerable own one, not a class one, not Date.prototype.toJSON', () => {
    const hidden = vi.fn(() => 'replaced');
    const data = { a: 1 };
    Object.defineProperty(data, 'toJSON', { value: hidden, enumerable: false });
    expect(JSON.stringify(data)).toBe('"replaced"'); // what we must not do
    hidden.mockClear();
    expect(canonicalize(data)).toBe('{"a":1}');
    expect(hidden).not.toHaveBeenCalled();

    const classToJson = vi.fn(() => ({ b: 2 }));
    class Model {
      toJSON = classToJson;
    }
    expectRefused(() => canonicalize(new Model()), 'JCS_UNSUPPORTED_VALUE', '$');
    expectRefused(() => canonicalize({ toJSON: classToJson }), 'JCS_UNSUPPORTED_VALUE', '$.toJSON');
    expect(classToJson).not.toHaveBeenCalled();

    const dateToJson = vi.spyOn(Date.prototype, 'toJSON');
    try {
      expectRefused(() => canonicalize([new Date(0)]), 'JCS_UNSUPPORTED_VALUE', '$[0]');
      expect(dateToJson).not.toHaveBeenCalled();
    } finally {
      dateToJson.mockRestore();
    }
  });
});

describe('parseJson (I-JSON, RFC 7493)', () => {
  it.each([
    '{"a":1,"a":2}',
    '{"a":1,"b":{"c":1,"c":1}}',
    '[{"x":0},{"x":0,"x":0}]',
    '{"a":1,"\\u0061":2}',
    '{"__proto__":1,"__proto__":2}',
  ])('rejects duplicate member names: %s', (text) => {
    expectRefused(() => parseJson(text), 'JCS_DUPLICATE_MEMBER');
  });

  it.each([
    '',
    ' ',
    '{',
    '}',
    '[1,]',
    '[,1]',
    '{"a":1,}',
    '{"a" 1}',
    '{a:1}',
    "{'a':1}",
    "'a'",
    '[1 2]',
    '1 2',
    '[1]x',
    'NaN',
    'Infinity',
    '-Infinity',
    'undefined',
    'tru',
    'nul',
    'True',
    '01',
    '-01',
    '1.',
    '.5',
    '+1',
    '-',
    '1e',
    '1e+',
    '0x10',
    '"abc',
    '"\t"',
    '"\n"',
    '"\u0000"',
    '"\\x41"',
    '"\\u12"',
    '"\\u12g4"',
    '"\\U0041"',
    '"\\',
    '\ufeff{}',
    '\u00a0{}',
    '{}\u2028',
    '// comment\n{}',
    '1e400',
    '-1e400',
  ])('rejects %j with JCS_INVALID_JSON', (text) => {
    expectRefused(() => parseJson(text), 'JCS_INVALID_JSON');
  });

  it('reports where the text went wrong', () => {
    expect(caught(() => parseJson('[1,]')).details).toEqual({ offset: 3 });
    expect(caught(() => parseJson('{"a":1,"a":2}')).details).toEqual({ offset: 7 });
  });

  it.each(['"\\ud800"', '"x\\udc00"', '"\\ude00\\ud83d"', '{"\\ud800":1}', '"\ud800"'])(
    'rejects the lone surrogate in %s with JCS_LONE_SURROGATE',
    (text) => {
      expectRefused(() => parseJson(text), 'JCS_LONE_SURROGATE');
    },
  );

  it('rejects non-string input', () => {
    expectRefused(() => parseJson(Uint8Array.of(0x31) as unknown as string), 'JCS_INVALID_JSON');
  });

  it('accepts every RFC 8259 form JSON.parse accepts', () => {
    const text = ' \t\r\n{ "s" : "\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uD83D\\uDE00é" , "n" : [ -0 , 0.5e-3 , 1E+2 , -12.5E2 ] , "l" : [ true , false , null ] , "e" : { } , "a" : [ ] } \n';
    expect(parseJson(text)).toEqual(JSON.parse(text));
    expect(Object.is((parseJson('-0') as number), -0)).toBe(true);
  });

  it('lets numbers below double precision underflow to 0, as JSON.parse does', () => {
    expect(parseJson('1e-400')).toBe(0);
  });

  it('keeps "__proto__" as an own member and names inherited from Object.prototype as ordinary ones', () => {
    const parsed = parseJson('{"__proto__":{"polluted":true},"toString":1,"constructor":2,"hasOwnProperty":3}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed)).toEqual(['__proto__', 'toString', 'constructor', 'hasOwnProperty']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(canonicalize(parsed)).toBe('{"__proto__":{"polluted":true},"constructor":2,"hasOwnProperty":3,"toString":1}');
  });

  it(`accepts ${MAX_JSON_DEPTH} levels of nesting and refuses deeper input without overflowing the stack`, () => {
    expect(canonicalize(parseJson('['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH)))).toHaveLength(2 * MAX_JSON_DEPTH);
    expectRefused(() => parseJson('['.repeat(MAX_JSON_DEPTH + 1) + ']'.repeat(MAX_JSON_DEPTH + 1)), 'JCS_INVALID_JSON');
    expectRefused(() => parseJson('{"a":'.repeat(200_000)), 'JCS_INVALID_JSON');
  });
});

describe('isCanonical', () => {
  it.each(['{"a":1}', '[]', '{}', '0', '-1', '"x"', '1e+21', '"\\u001f"', '"\u2028"', 'null', '[{"A":1,"a":[true]}]'])('accepts %s', (text) => {
    expect(isCanonical(text)).toBe(true);
  });

  it.each([
    ' {"a":1}',
    '{"a":1}\n',
    '[1, 2]',
    '{"b":1,"a":2}',
    '1.0',
    '1E+21',
    '1e21',
    '-0',
    '0.10',
    '"\\u0041"',
    '"\\u001F"',
    '"\\/"',
    '{"a":1,"a":1}',
    '"\\ud800"',
    '\ufeff{}',
    'not json',
  ])('rejects %j', (text) => {
    expect(isCanonical(text)).toBe(false);
  });
});

describe('properties (fast-check)', () => {
  const asciiJson = fc.jsonValue();
  const unicodeJson = fc.jsonValue({ stringUnit: 'binary' });
  const unicodeKeyed = fc.dictionary(fc.string({ unit: 'binary' }), unicodeJson, { maxKeys: 12 });
  const anyJson = fc.oneof(asciiJson, unicodeJson, unicodeKeyed, fc.array(unicodeKeyed, { maxLength: 4 }));

  it('is a fixed point through JSON.parse and parseJson, and isCanonical holds', () => {
    fc.assert(
      fc.property(anyJson, (value) => {
        const c = canonicalize(value);
        expect(canonicalize(JSON.parse(c))).toBe(c);
        expect(canonicalize(parseJson(c))).toBe(c);
        expect(isCanonical(c)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('parses back to the input (with -0 read as 0)', () => {
    fc.assert(
      fc.property(anyJson, (value) => {
        const c = canonicalize(value);
        const expected = withoutNegativeZero(value);
        expect(JSON.parse(c)).toEqual(expected);
        expect(parseJson(c)).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('does not depend on member insertion order', () => {
    fc.assert(
      fc.property(anyJson, fc.integer(), (value, seed) => {
        expect(canonicalize(permuted(value, mulberry32(seed)))).toBe(canonicalize(value));
      }),
      { numRuns: 500 },
    );
  });

  it('agrees with a minimal reference serializer (the check described in the vectors README)', () => {
    fc.assert(
      fc.property(anyJson, (value) => {
        expect(canonicalize(value)).toBe(reference(value));
      }),
      { numRuns: 500 },
    );
  });

  it('parseJson agrees with JSON.parse on any JSON text, compact or indented', () => {
    fc.assert(
      fc.property(anyJson, fc.constantFrom(undefined, 1, '\t', ' \r\n '), (value, space) => {
        const text = JSON.stringify(value, null, space);
        expect(parseJson(text)).toEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });

  it('refuses any string or member name holding a lone surrogate, and parseJson refuses its escaped form', () => {
    const lone = fc.oneof(
      fc.tuple(fc.string({ unit: 'binary' }), fc.integer({ min: 0xd800, max: 0xdbff })).map(([s, c]) => s + String.fromCharCode(c)),
      fc.tuple(fc.integer({ min: 0xdc00, max: 0xdfff }), fc.string({ unit: 'binary' })).map(([c, s]) => String.fromCharCode(c) + s),
    );
    fc.assert(
      fc.property(lone, (bad) => {
        expectRefused(() => canonicalize({ v: bad }), 'JCS_LONE_SURROGATE', '$.v');
        expectRefused(() => canonicalize({ [bad]: 0 }), 'JCS_LONE_SURROGATE');
        expectRefused(() => parseJson(JSON.stringify(bad)), 'JCS_LONE_SURROGATE');
      }),
    );
  });
});

describe('strings and member names written without JSON.stringify (the quick path)', () => {
  /** Any UTF-16 string, lone surrogates included. */
  const codeUnits = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 40 }).map((units) => String.fromCharCode(...units));

  it('jsonString is JSON.stringify for any string, and canonicalString is too where it accepts one', () => {
    fc.assert(
      fc.property(fc.oneof(codeUnits, fc.string({ unit: 'binary' })), (value) => {
        expect(jsonString(value)).toBe(JSON.stringify(value));
        const jcs = canonicalString(value);
        // In u-mode a surrogate pair is one code point: the class matches only a lone half.
        if (!/[\ud800-\udfff]/u.test(value)) expect(jcs).toBe(JSON.stringify(value));
        else expect(jcs).toBeUndefined();
      }),
      { numRuns: 2000 },
    );
  });

  it('writes each character below U+0080 as JSON.stringify does, alone and inside text, in names and values', () => {
    for (let c = 0; c < 0x80; c++) {
      const ch = String.fromCharCode(c);
      for (const value of [ch, `a${ch}`, `${ch}b`, `name ${ch} value`]) {
        expect(jsonString(value)).toBe(JSON.stringify(value));
        expect(canonicalize({ [value]: value })).toBe(`{${JSON.stringify(value)}:${JSON.stringify(value)}}`);
      }
    }
  });

  it('sorts objects of more members than are sorted in place (Array.prototype.sort) as the reference does', () => {
    const wide = fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), fc.jsonValue({ maxDepth: 1 }), { minKeys: 17, maxKeys: 80 });
    fc.assert(
      fc.property(wide, fc.integer(), (value, seed) => {
        expect(canonicalize(value)).toBe(reference(value));
        expect(canonicalize(permuted(value, mulberry32(seed)))).toBe(reference(value));
      }),
      { numRuns: 200 },
    );
  });

  it('writes names beyond those it remembers, long ones among them, as the reference does', () => {
    const many = Object.fromEntries(Array.from({ length: 6000 }, (_, i) => [`name ${i} "quoted" \\ ${'x'.repeat(i % 100)}`, i]));
    const long = { ['y'.repeat(65)]: 1, ['z'.repeat(64)]: 2 };
    for (let round = 0; round < 2; round++) {
      expect(canonicalize(many)).toBe(reference(many));
      expect(canonicalize(long)).toBe(reference(long));
    }
  });

  it('refuses a name holding a lone surrogate every time, also after writing the same name made well-formed', () => {
    expect(canonicalize({ 'a\ud83d\ude00': 1 })).toBe('{"a\u{1F600}":1}');
    for (let i = 0; i < 3; i++) expectRefused(() => canonicalize({ 'a\ud83d': 1 }), 'JCS_LONE_SURROGATE');
  });
});

/** Seeded PRNG (mulberry32), so a failing permutation replays from fast-check's seed. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The same data with every object's members inserted in a shuffled order. */
function permuted(value: unknown, random: () => number): unknown {
  if (Array.isArray(value)) return value.map((v) => permuted(v, random));
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [keys[i], keys[j]] = [keys[j]!, keys[i]!];
  }
  const out = {};
  for (const k of keys) {
    const v = permuted((value as Record<string, unknown>)[k], random);
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** Recursive sort by an explicit UTF-16 code unit comparison, JSON.stringify for the leaves. */
function reference(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const members = Object.keys(record)
      .sort(byCodeUnits)
      .map((k) => `${JSON.stringify(k)}:${reference(record[k])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
}

function byCodeUnits(a: string, b: string): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const d = a.charCodeAt(i) - b.charCodeAt(i);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}
