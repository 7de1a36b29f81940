/**
 * The raw-material detector of tenant policy (companion/policy/secrets.ts; interface-spec
 * "What the service does" 3): each rule on fixed vectors, and no rule on what a valid policy
 * holds (every pack's action type ids and review routes) or on ordinary short labels.
 */
import { describe, expect, it } from 'vitest';
import { gatePacks } from '../../companion/packs/registry.ts';
import { findRawMaterial, rawMaterialRule, RAW_MATERIAL_RULES, shannonEntropy } from '../../companion/policy/secrets.ts';

const fake = (...parts: string[]) => parts.join(''); // assembled at run time, so no scanner mistakes the fixtures for live keys

/** rule id → values it must catch (and that no earlier rule catches first). */
const CAUGHT: Record<string, string[]> = {
  pem_block: ['-----BEGIN PRIVATE KEY-----', 'x -----BEGIN CERTIFICATE----- y', '-----BEGIN OPENSSH PRIVATE KEY-----'],
  known_secret_prefix: [
    fake('svc_', 'test_', 'a'.repeat(43)),
    fake('svc_', 'live_', '0123456789AB'),
    fake('wh', 'sec_', 'abcDEF123456'),
    fake('sk', '-', 'abcdefghijklmnop1234'),
    fake('sk', '_live_', '51Habcdefgh'),
    fake('rk', '_test_', '51Habcdefgh'),
    fake('xo', 'xp-', '1234567890'),
    fake('xo', 'xa-', '2-abcdefghi'),
    fake('AK', 'IA', 'IOSFODNN7EXAMPLE'),
    fake('AS', 'IA', 'Y3FZ5KQ2EXAMPLE1'),
    fake('gh', 'p_', 'a1'.repeat(18)),
    fake('gh', 's_', 'a1'.repeat(18)),
    fake('github', '_pat_', '11ABCDEFG0', 'x'.repeat(20)),
    fake('gl', 'pat-', 'abcdefghij0123456789'),
    fake('AI', 'za', 'Sy', 'A'.repeat(33)),
  ],
  jwt: ['eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.', 'abcdefghijklmnop.qrstuvwxyzabcdef.ghijklmnopqrstuv'],
  url_credentials: ['https://ops:hunter2@hooks.example.com/x', 'postgres://app:pw@db.internal/main'],
  email_address: ['ada@example.com', 'ask Ada.Lovelace+policy@law-firm.co.uk'],
  phone_number: ['+1 212 555 0100', '(212) 555-0100', '+44 20 7946 0958', '2125550100'],
  hex_blob: ['e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'deadbeef00112233', 'A1B2C3D4E5F60718', 'card 4111111111111111'],
  base64_blob: ['QWxhZGRpbjpvcGVuIHNlc2FtZQ==', 'dGhpcyBpcyBhIHNlY3JldCBrZXk9', 'Zm9vYmFyYmF6_-Zm9vYmFyYmF6'],
  high_entropy_token: ['q8ZfT2kLm9xWv4Rb', 'Xk3p9Qw2Lz8Rv5Tn', 'token a1b2c3d4e5g7h8i9j0k', 'bcdfghjklmnpqrstvw', 'zq7xw9vkp2rj8mtl'],
  control_characters: ['line one\nline two', 'tab\tseparated', 'carriage\rreturn', 'nul\u0000byte', 'para\u2028graph'],
  too_long: ['Please review the following draft. '.repeat(5), 'a'.repeat(141)],
};

/** What a valid policy holds and what admins write as labels: no rule may fire. */
const BENIGN = [
  ...gatePacks().flatMap((p) => [
    ...p.manifest.action_types.flatMap((a) => [a.id, ...(a.review_route ? [a.review_route] : [])]),
    p.manifest.review_route,
    p.manifest.name,
  ]),
  'chat:compliance-team-2024',
  'webhook:scribe-qa',
  'Scribe pilot',
  'Q3 2025 policy',
  'Allow drafting after partner sign-off',
  'Acme2025 review',
  'AcmeCorp2025Legal',
  'CamelCaseIdentifierName',
  'SupervisingAttorneyReview',
  'ISO27001 controls, SOC 2 Type II',
  'HIPAA and FERPA review',
  'Effective 2025-01-15, v1.2.3',
  'internationalization',
  'compliance2024team',
  'Ticket CHG0012345 approved',
  'MSFT365CopilotPilot',
  'HIPAAandFERPAReview',
  'ISO27001Controls2022',
  '2025Q3ComplianceReview',
  'a'.repeat(140),
];

describe('raw-material rules', () => {
  it('cover every published rule with vectors', () => {
    expect(Object.keys(CAUGHT).sort()).toEqual(RAW_MATERIAL_RULES.map((r) => r.id).sort());
  });

  for (const [rule, values] of Object.entries(CAUGHT)) {
    it(`${rule} catches its vectors first`, () => {
      for (const v of values) expect(rawMaterialRule(v)?.id, JSON.stringify(v)).toBe(rule);
    });
  }

  it('let ids, routes and ordinary labels through', () => {
    for (const v of BENIGN) expect(rawMaterialRule(v)?.id, v).toBeUndefined();
  });

  it('measure Shannon entropy in bits per character', () => {
    expect(shannonEntropy('aaaa')).toBe(0);
    expect(shannonEntropy('abcd')).toBe(2);
    expect(shannonEntropy('0123456789abcdef')).toBe(4);
  });
});

describe('findRawMaterial', () => {
  const declared = (path: readonly (string | number)[], key: string) => path.length === 0 && ['note', 'label', 'lists'].includes(key);

  it('reports each offending value and undeclared key by JSON Pointer, under the given prefix, without the value', () => {
    const hits = findRawMaterial(
      { note: 'ada@example.com', lists: ['ok', 'line\nbreak'], client_secret: 'short', 'a/b': { 'x~y': 'e3b0c44298fc1c149afbf4c8996fb924' } },
      declared,
      ['policy'],
    );
    expect(hits.map((h) => [h.path, h.code])).toEqual([
      ['/policy/note', 'raw_material.email_address'],
      ['/policy/lists/1', 'raw_material.control_characters'],
      ['/policy/client_secret', 'raw_material.secret_field_name'],
      ['/policy/a~1b/x~0y', 'raw_material.hex_blob'],
    ]);
    for (const h of hits) expect(h.message).not.toMatch(/ada@|e3b0c4|short/);
  });

  it('judges a declared key by its value only, and an undeclared key by its name too', () => {
    expect(findRawMaterial({ note: 'fine' }, declared)).toEqual([]);
    expect(findRawMaterial({ 'iep-document-draft': 'fine' }, () => true)).toEqual([]);
    expect(findRawMaterial({ 'iep-document-draft': 'fine' }, () => false).map((h) => h.code)).toEqual(['raw_material.secret_field_name']);
    expect(findRawMaterial({ 'ada@example.com': 1 }, () => false).map((h) => h.code)).toEqual(['raw_material.email_address']);
  });

  it('stops descending below any depth a policy can have', () => {
    let deep: unknown = 'ada@example.com';
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(() => findRawMaterial({ note: deep }, declared)).not.toThrow();
  });
});
