/**
 * The member-by-member JCS writers of shared/attestation.ts (packetText, attestationText) and
 * shared/canonical-json.ts canonicalizeMember against canonicalize (RFC 8785 §3.2): the same
 * text for every value, over a corpus of strings that need escaping, Unicode beyond the BMP,
 * integer-like member names and ECMAScript number forms, and fast-check properties; and the
 * same refusal (code and path) where canonicalize refuses. Seals made from that text verify.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attestationBytes, attestationHash, attestationText, packetBytes, packetFields, packetHash, packetText } from '../../shared/attestation.ts';
import { canonicalize, canonicalizeMember, MAX_JSON_DEPTH } from '../../shared/canonical-json.ts';
import { verifyWithNoble } from '../../shared/ed25519.ts';
import { fromBase64Url, utf8 } from '../../shared/encoding.ts';
import { SvcError } from '../../shared/errors.ts';
import { sha256Hex } from '../../shared/hash.ts';
import { sealAttestation } from '../../shared/seal.ts';
import { ATTESTATION_FORMAT } from '../../shared/types.ts';
import type { AttestationV2, PacketFields } from '../../shared/types.ts';
import { testKey } from '../helpers/seal-fixtures.ts';

/** Strings whose JCS form escapes or keeps characters (RFC 8785 §3.2.2.2). */
const STRINGS = [
  '',
  'plain',
  'quote " and backslash \\ and slash /',
  'controls \u0000 \u0001 \b \t \n \f \r \u001f and DEL \u007f',
  'line separators \u2028 \u2029',
  'latin é ü ß, CJK 漢字, RTL עברית',
  'astral 😀 𝄞 \u{10ffff}',
  '\ufeff leading BOM',
  '0',
  '10',
  '-1',
  '1e3',
];

const NUMBERS = [0, -0, 1, -1, 0.1, 1e21, 1e-7, 123456789012345680000, 5e-324, -1.7976931348623157e308, 2 ** 53, 0.000001];

/** A context that exercises every JSON form, integer-like names among them (JS lists those first). */
const CONTEXTS: Record<string, unknown>[] = [
  {},
  { rule_ids: ['law.privilege.1', 'law.court-deadline'], engine: 'law-core/3', linked: null },
  Object.fromEntries(STRINGS.map((s, i) => [s, i])),
  { '10': 'ten', '9': 'nine', '0': 'zero', a: 'a', '01': 'leading zero', '4294967295': 'not an index' },
  { numbers: NUMBERS, nested: { deeper: [[], {}, [{ '2': true, '1': false }]] } },
  JSON.parse('{"__proto__": {"x": 1}, "constructor": "c"}') as Record<string, unknown>,
];

function fields(over: Partial<PacketFields> = {}): PacketFields {
  const action = 'law:draft_reply:01JTESTACTION0000000000000';
  return {
    action_key: action,
    href: `/law/evidence-packets/${action}`,
    status: 'sealed',
    decision: 'needs_review',
    payload_hash: 'a'.repeat(64),
    review_route: 'browser:legal-review',
    ...over,
  };
}

function attestation(over: Partial<AttestationV2> = {}): AttestationV2 {
  return {
    format: ATTESTATION_FORMAT,
    action_key: 'law:draft_reply:01JTESTACTION0000000000000',
    tenant_id: 'ten_01JTESTTENANT000000000000',
    pack: 'law',
    kind: 'gate',
    decision: 'allow',
    status: 'sealed',
    payload_hash: 'a'.repeat(64),
    packet_hash: 'b'.repeat(64),
    review_route: null,
    recorded_at: '2026-11-28T16:00:00.000Z',
    key_id: 'key-id',
    dev_key: true,
    tenant_seq: 7,
    prev_attestation_hash: 'c'.repeat(64),
    manifest_digest: 'd'.repeat(64),
    policy_digest: null,
    context: { rule_ids: ['r1'] },
    ...over,
  };
}

/** canonicalize's outcome as comparable data: its text, or its refusal's code and path. */
function outcome(write: () => string): { text: string } | { code: string; path: unknown } {
  try {
    return { text: write() };
  } catch (e) {
    if (!(e instanceof SvcError)) throw e;
    return { code: e.code, path: e.details?.['path'] };
  }
}

function nested(depth: number): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

describe('packetText', () => {
  const cases: PacketFields[] = [
    fields(),
    fields({ decision: null, review_route: null }),
    ...STRINGS.map((s) => fields({ action_key: s, href: s, status: s, decision: s, payload_hash: s, review_route: s })),
  ];

  it('is canonicalize(packetFields(p)) over the corpus, and packetBytes and packetHash are taken over it', () => {
    for (const p of cases) {
      const jcs = canonicalize(packetFields(p));
      expect(packetText(p)).toBe(jcs);
      expect(packetBytes(p)).toEqual(utf8(jcs));
      expect(packetHash(p)).toBe(sha256Hex(utf8(jcs)));
    }
  });

  it('ignores members other than the six, as packetFields does', () => {
    const p = { ...fields(), extra: 'x', packet_hash: 'y' } as PacketFields;
    expect(packetText(p)).toBe(canonicalize(packetFields(fields())));
  });

  it('refuses what canonicalize refuses, with its code and path; writes other JSON values as it does', () => {
    const odd: Record<string, unknown>[] = [
      { decision: 'lone \ud800 surrogate' },
      { review_route: '\udc00' },
      { status: undefined },
      { href: 12 },
      { payload_hash: Number.NaN },
      { decision: { nested: ['object'] } },
      { action_key: true },
      { decision: 10n },
    ];
    for (const over of odd) {
      const p = { ...fields(), ...over } as PacketFields;
      expect(outcome(() => packetText(p))).toEqual(outcome(() => canonicalize(packetFields(p))));
    }
  });

  it('is canonicalize(packetFields(p)) for arbitrary strings and nulls (fast-check)', () => {
    const text = fc.string({ unit: 'binary' });
    fc.assert(
      fc.property(text, text, text, fc.option(text), text, fc.option(text), (action_key, href, status, decision, payload_hash, review_route) => {
        const p = { action_key, href, status, decision, payload_hash, review_route };
        expect(packetText(p)).toBe(canonicalize(packetFields(p)));
      }),
    );
  });
});

describe('attestationText', () => {
  const cases: AttestationV2[] = [
    attestation(),
    (({ context: _none, ...rest }) => rest)(attestation()),
    attestation({ decision: null, review_route: 'browser:x', prev_attestation_hash: null, manifest_digest: null, dev_key: false, tenant_seq: 0 }),
    ...STRINGS.map((s) => attestation({ action_key: s, tenant_id: s, pack: s, status: s, decision: s, review_route: s, key_id: s, recorded_at: s })),
    ...CONTEXTS.map((context) => attestation({ context })),
    ...NUMBERS.map((n) => attestation({ tenant_seq: n })),
    Object.assign(Object.create(null) as AttestationV2, attestation()),
  ];

  it('is canonicalize(attestation) over the corpus, and attestationBytes and attestationHash are taken over it', () => {
    for (const a of cases) {
      const jcs = canonicalize(a);
      expect(attestationText(a)).toBe(jcs);
      expect(attestationBytes(a)).toEqual(utf8(jcs));
      expect(attestationHash(a)).toBe(sha256Hex(utf8(jcs)));
    }
  });

  it('writes or refuses as canonicalize does whatever is not a plain v2 attestation', () => {
    const cyclic = attestation({ context: {} });
    (cyclic.context as Record<string, unknown>)['back'] = cyclic;
    const withSymbol = attestation();
    (withSymbol as unknown as Record<symbol, unknown>)[Symbol('s')] = 1;
    const inherited = Object.assign(Object.create({ pack: 'from the prototype' }) as AttestationV2, attestation());
    const { pack: _pack, ...withoutPack } = attestation();
    class Attestation {}
    const odd: unknown[] = [
      { ...attestation(), extra: 'member' },
      { ...withoutPack, other: 'law' },
      Object.assign(Object.create({ pack: 'law' }) as object, withoutPack, { other: 'x' }),
      inherited,
      Object.assign(new Attestation(), attestation()),
      withSymbol,
      cyclic,
      attestation({ context: undefined }),
      attestation({ context: 'a string' as never }),
      attestation({ context: [1, 2] as never }),
      attestation({ context: { when: new Date(0) } }),
      attestation({ context: { lone: '\ud800' } }),
      attestation({ context: { ['\udfff']: 1 } }),
      attestation({ context: { n: Number.POSITIVE_INFINITY } }),
      attestation({ context: { u: undefined } }),
      attestation({ context: { deep: nested(MAX_JSON_DEPTH - 2) } }),
      attestation({ context: { deep: nested(MAX_JSON_DEPTH - 1) } }),
      attestation({ tenant_seq: Number.NaN }),
      attestation({ tenant_seq: 1n as never }),
      attestation({ dev_key: 'yes' as never }),
      attestation({ key_id: 'lone \udbff' }),
      attestation({ decision: undefined as never }),
      attestation({ recorded_at: new Date(0) as never }),
    ];
    for (const a of odd) {
      expect(outcome(() => attestationText(a as AttestationV2))).toEqual(outcome(() => canonicalize(a)));
    }
  });

  it('refuses a context one level too deep exactly where canonicalize of the whole attestation does', () => {
    // The attestation and its context are two levels: the arrays under them may nest MAX_JSON_DEPTH - 2.
    const fits = attestation({ context: { deep: nested(MAX_JSON_DEPTH - 2) } });
    const tooDeep = attestation({ context: { deep: nested(MAX_JSON_DEPTH - 1) } });
    expect(attestationText(fits)).toBe(canonicalize(fits));
    expect(outcome(() => attestationText(tooDeep))).toEqual({ code: 'JCS_UNSUPPORTED_VALUE', path: expect.stringMatching(/^\$\.context\.deep(\[0\])+$/) as unknown });
  });

  it('is canonicalize(attestation) for arbitrary contexts and strings (fast-check)', () => {
    const text = fc.string({ unit: 'binary' });
    const context = fc.dictionary(fc.oneof(text, fc.nat().map(String)), fc.jsonValue({ stringUnit: 'binary' }), { maxKeys: 10 });
    fc.assert(
      fc.property(context, text, fc.option(text), fc.nat(), fc.boolean(), (ctx, pack, decision, seq, dev) => {
        const a = attestation({ context: ctx, pack, decision, tenant_seq: seq, dev_key: dev });
        expect(attestationText(a)).toBe(canonicalize(a));
      }),
    );
  });
});

describe('canonicalizeMember', () => {
  it('writes a value as canonicalize writes it inside its parent, with the parent counted in depth, cycles and paths', () => {
    const parent = { a: 1 };
    /** The member's text inside its parent, as canonicalize({ [name]: value }) writes it. */
    const asMember = (name: string, value: unknown) => () => `{${JSON.stringify(name)}:${canonicalizeMember(parent, name, value)}}`;
    const loop: Record<string, unknown> = {};
    loop['self'] = loop;
    const values = [...STRINGS, ...NUMBERS, null, true, CONTEXTS, nested(10), nested(MAX_JSON_DEPTH - 1), nested(MAX_JSON_DEPTH), [undefined], loop, '\ud800'];
    for (const value of values) {
      for (const name of ['m', 'odd key']) expect(outcome(asMember(name, value))).toEqual(outcome(() => canonicalize({ [name]: value })));
    }
    expect(outcome(asMember('m', nested(MAX_JSON_DEPTH - 1)))).toHaveProperty('text');
    expect(outcome(asMember('m', nested(MAX_JSON_DEPTH)))).toHaveProperty('code', 'JCS_UNSUPPORTED_VALUE');
    expect(outcome(asMember('m', { back: parent }))).toEqual({ code: 'JCS_CYCLE', path: '$.m.back' });
  });
});

describe('sealAttestation', () => {
  it('signs and hashes the text it returns, which is canonicalize(attestation)', () => {
    const key = testKey();
    for (const context of CONTEXTS) {
      const a = attestation({ key_id: key.signer.keyId, dev_key: false, context });
      const { seal, attestationBytes: bytes, attestationText: text } = sealAttestation(a, key.signer);
      expect(text).toBe(canonicalize(a));
      expect(bytes).toEqual(utf8(text));
      expect(seal.attestation_hash).toBe(sha256Hex(utf8(text)));
      expect(verifyWithNoble(key.publicKey, utf8(text), fromBase64Url(seal.signature))).toBe(true);
    }
  });
});
