/**
 * Tenant policy per policy_pack (interface-spec "What the service does" 3, "Tenant policy
 * (query policy_pack)", States and transitions rows 1–3), in-process against a real temporary
 * database: options, preview, PUT (sealed versions) and receipts, and the gate applying the
 * tenant's current policy.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getGatePack } from '../../companion/packs/registry.ts';
import { POLICY_STRING_MAX } from '../../companion/policy/secrets.ts';
import { freshTenantContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { countSealed, gateBody, QUIET_CONTEXT, usageOf } from './pack-fixtures.ts';

let ctx: TestContext;
let key: string;
let tenantId: string;
beforeEach(async () => ({ ctx, key, tenantId } = await freshTenantContext()));
afterEach(() => ctx.close());

const put = (pack: string, doc: unknown, k = key) => ctx.request(`/tenant/policy?policy_pack=${pack}`, { method: 'PUT', json: doc, key: k });
const preview = (pack: string, policy: unknown, samples: unknown[], k = key) =>
  ctx.request(`/tenant/policy/preview?policy_pack=${pack}`, { json: { policy, samples }, key: k });
const options = (pack: string, k = key) => ctx.request(`/tenant/policy/options?policy_pack=${pack}`, { key: k });
const receipts = (pack: string, query = '', k = key) => ctx.request(`/tenant/policy/receipts?policy_pack=${pack}${query}`, { key: k });
const gate = (body: unknown, k = key) => ctx.request('/v1/gate', { json: body, key: k });

const policyRows = () => ctx.sql('SELECT * FROM policy_versions ORDER BY tenant_id, policy_pack, version');

/** Medicine samples: every action type once, plus two whose pack rules outrank any allow entry. */
const MEDICINE_SAMPLES = [
  gateBody('medicine', { action_type: 'clinical-note-draft' }),
  gateBody('medicine', { action_type: 'patient-message' }),
  gateBody('medicine', { action_type: 'order-suggestion' }),
  gateBody('medicine', { action_type: 'phi-export' }),
  // medicine.part2.behavioral-health-export: needs_review whatever the tenant allows.
  gateBody('medicine', { action_type: 'phi-export', context: { ...QUIET_CONTEXT.medicine, care_setting: 'behavioral-health' } }),
  // medicine.hipaa.phi-to-tool-without-baa: blocked.
  gateBody('medicine', { action_type: 'discharge-summary-draft', context: { ...QUIET_CONTEXT.medicine, phi_involved: true, tool_baa_status: 'no-baa' } }),
  gateBody('medicine', { action_type: 'prior-authorization-draft' }),
];

/** POSTs each sample to the real gate and checks it answers what the preview predicted for it. */
async function expectGateAsPredicted(samples: Record<string, unknown>[], results: any[], digest: string | null) {
  expect(results.map((r) => r.index)).toEqual(samples.map((_, i) => i));
  for (const [i, sample] of samples.entries()) {
    const res = await gate(sample);
    expect(res.status, res.text).toBe(201);
    expect({ index: i, decision: res.body.decision, review_route: res.body.review_route }).toEqual({ index: i, ...results[i].candidate });
    expect(res.body.evidence_packet.seal.attestation.policy_digest).toBe(digest);
    if (digest) expect(res.body.catalog_refs).toContain(`policy:${digest}`);
  }
}

describe('a fresh sandbox', () => {
  it('gets needs_review, with no policy and a null policy_digest, until it allowlists the action type', async () => {
    const before = await gate(gateBody('medicine', { action_type: 'clinical-note-draft' }));
    expect(before.body).toMatchObject({ decision: 'needs_review', review_route: 'browser:clinical-review' });
    expect(before.body.evidence_packet.seal.attestation.policy_digest).toBeNull();

    expect((await put('medicine', { allow_action_types: ['clinical-note-draft'] })).status).toBe(201);
    const after = await gate(gateBody('medicine', { action_type: 'clinical-note-draft' }));
    expect(after.body).toMatchObject({ decision: 'allow', review_route: null });
  });

  it('sees the pack’s action types, defaults, routes, schema and raw-material rules in GET /tenant/policy/options', async () => {
    const res = await options('law');
    expect(res.status).toBe(200);
    const law = getGatePack('law');
    expect(res.body).toMatchObject({ policy_pack: 'law', pack_version: law.manifest.version, manifest_digest: law.digest, current: null });
    expect(res.body.action_types.map((a: any) => a.id)).toEqual(law.manifest.action_types.map((a) => a.id));
    expect(res.body.action_types.find((a: any) => a.id === 'court-filing')).toMatchObject({
      default_decision: 'needs_review',
      default_review_route: 'browser:supervising-attorney',
      allowable: true,
      current: null,
      current_review_route: null,
    });
    expect(res.body.action_types.find((a: any) => a.id === 'privileged-material-external-share')).toMatchObject({ default_decision: 'blocked', allowable: false });
    expect(res.body.review_routes).toMatchObject({ channels: ['chat', 'workflow', 'webhook', 'browser'], pack_default: 'browser:legal-review' });
    expect(res.body.document_schema).toMatchObject({ type: 'object', additionalProperties: false });
    expect(res.body.document_schema.properties.allow_action_types.items.enum).toEqual(law.manifest.action_types.map((a) => a.id));
    expect(res.body.raw_material.problem_code).toBe('raw_content_rejected');
    expect(res.body.raw_material.rules.map((r: any) => r.id)).toEqual([
      'secret_field_name',
      'pem_block',
      'known_secret_prefix',
      'jwt',
      'url_credentials',
      'email_address',
      'phone_number',
      'hex_blob',
      'base64_blob',
      'high_entropy_token',
      'control_characters',
      'too_long',
    ]);
  });
});

describe('POST /tenant/policy/preview', () => {
  it('predicts allow for exactly the allowlisted samples no pack rule holds back, and saves, seals and meters nothing', async () => {
    const sealed = await countSealed(ctx);
    const usage = await usageOf(ctx, tenantId);
    const res = await preview('medicine', { allow_action_types: ['phi-export', 'clinical-note-draft', 'discharge-summary-draft'] }, MEDICINE_SAMPLES);
    expect(res.status, res.text).toBe(200);
    expect(res.body.results.map((r: any) => r.candidate.decision)).toEqual(['allow', 'needs_review', 'needs_review', 'allow', 'needs_review', 'blocked', 'needs_review']);
    expect(res.body.results.map((r: any) => r.current.decision)).toEqual([
      'needs_review',
      'needs_review',
      'needs_review',
      'needs_review',
      'needs_review',
      'blocked',
      'needs_review',
    ]);
    expect(res.body.results[0]).toEqual({
      index: 0,
      action_type: 'clinical-note-draft',
      current: { decision: 'needs_review', review_route: 'browser:clinical-review' },
      candidate: { decision: 'allow', review_route: null },
      decision_changed: true,
      route_changed: true,
      changed: true,
    });
    expect(res.body.summary).toEqual({
      samples: 7,
      changed: 2,
      unchanged: 5,
      changed_indexes: [0, 3],
      current_decisions: { allow: 0, needs_review: 6, blocked: 1 },
      candidate_decisions: { allow: 2, needs_review: 4, blocked: 1 },
    });
    expect(res.body).toMatchObject({ policy_pack: 'medicine', current: { version: null, digest: null }, saved: false });
    expect(res.body.candidate.document.allow_action_types).toEqual(['clinical-note-draft', 'discharge-summary-draft', 'phi-export']);
    // Samples are never echoed: only an index and the action type come back.
    expect(res.text).not.toContain('Draft the next step');
    expect(await countSealed(ctx)).toBe(sealed);
    expect(await usageOf(ctx, tenantId)).toEqual(usage);
    expect(await policyRows()).toEqual([]);
  });

  it('validates samples with the gate’s own schema, naming each failing path, and refuses a sample of another pack', async () => {
    const { context: _dropped, ...noContext } = gateBody('medicine');
    const res = await preview('medicine', {}, [gateBody('medicine'), noContext, gateBody('law')]);
    expect(res.status).toBe(422);
    const paths = res.body.errors.map((e: any) => e.path);
    expect(paths).toContain('/samples/1/context');
    expect(paths).toContain('/samples/2/pack');
    expect(paths.some((p: string) => p.startsWith('/samples/0'))).toBe(false);
  });

  it('lists the policy’s and the body’s failing paths together', async () => {
    const res = await ctx.request('/tenant/policy/preview?policy_pack=medicine', {
      json: { policy: { allow_action_types: ['court-filing'], note: 'ada@example.com' }, samples: [], extra: true },
      key,
    });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('raw_content_rejected');
    expect(res.body.errors.map((e: any) => e.path).sort()).toEqual(['/extra', '/policy/allow_action_types/0', '/policy/note', '/samples']);
  });

  it('takes 1 to 50 samples', async () => {
    expect((await preview('medicine', {}, [])).status).toBe(422);
    expect((await preview('medicine', {}, Array.from({ length: 51 }, () => gateBody('medicine')))).status).toBe(422);
    expect((await preview('medicine', {}, Array.from({ length: 50 }, () => gateBody('medicine')))).status).toBe(200);
  });
});

describe('PUT /tenant/policy', () => {
  it('flips the gate’s decisions exactly as the preview predicted, sample by sample, version after version', async () => {
    const v1 = { allow_action_types: ['clinical-note-draft', 'phi-export'], label: 'Scribe pilot' };
    const p1 = await preview('medicine', v1, MEDICINE_SAMPLES);
    const r1 = await put('medicine', v1);
    expect(r1.status, r1.text).toBe(201);
    expect(r1.body).toMatchObject({ policy_pack: 'medicine', version: 1, digest: p1.body.candidate.digest, previous_digest: null, changed: true });
    await expectGateAsPredicted(MEDICINE_SAMPLES, p1.body.results, r1.body.digest);

    // v2: take clinical-note-draft back to review on another route, deny patient messages,
    // reroute order suggestions, and require review of phi-export again.
    const v2 = {
      deny_action_types: ['patient-message'],
      review_action_types: ['phi-export'],
      review_routes: { 'clinical-note-draft': 'webhook:scribe-qa', 'order-suggestion': 'chat:pharmacy-desk' },
    };
    const p2 = await preview('medicine', v2, MEDICINE_SAMPLES);
    expect(p2.body.current).toEqual({ version: 1, digest: r1.body.digest });
    expect(p2.body.summary.changed_indexes).toEqual([0, 1, 2, 3]);
    expect(p2.body.results[2]).toMatchObject({ decision_changed: false, route_changed: true, candidate: { decision: 'needs_review', review_route: 'chat:pharmacy-desk' } });
    const r2 = await put('medicine', v2);
    expect(r2.body).toMatchObject({ version: 2, digest: p2.body.candidate.digest, previous_digest: r1.body.digest });
    await expectGateAsPredicted(MEDICINE_SAMPLES, p2.body.results, r2.body.digest);
  });

  it('blocks a denied action type and routes review where the policy says, on /v1/gate and /{vertical}/proposed-action alike', async () => {
    await put('law', { deny_action_types: ['contract-redline'], review_routes: { 'legal-research-memo': 'workflow:research-desk' } });
    const denied = await gate(gateBody('law', { action_type: 'contract-redline' }));
    expect(denied.body).toMatchObject({ decision: 'blocked', review_route: null });
    expect(denied.body.catalog_refs).toContain('rule:policy.deny.contract-redline');
    const { pack: _pack, ...vertical } = gateBody('law', { action_type: 'legal-research-memo' });
    const routed = await ctx.request('/law/proposed-action', { json: vertical, key });
    expect(routed.body).toMatchObject({ decision: 'needs_review', review_route: 'workflow:research-desk' });
  });

  it('answers the current version unchanged (200, nothing sealed) for the same document, in any list order', async () => {
    const first = await put('law', { allow_action_types: ['contract-redline', 'court-filing'] });
    expect(first.status).toBe(201);
    const sealed = await countSealed(ctx);
    const again = await put('law', { allow_action_types: ['court-filing', 'contract-redline'], deny_action_types: [], review_routes: {} });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...first.body, changed: false });
    expect(await countSealed(ctx)).toBe(sealed);
    expect(await policyRows()).toHaveLength(1);

    // Putting back an older document after a change is a change: a new version.
    await put('law', { allow_action_types: ['court-filing'] });
    const back = await put('law', { allow_action_types: ['contract-redline', 'court-filing'] });
    expect(back.status).toBe(201);
    expect(back.body).toMatchObject({ version: 3, digest: first.body.digest });
  });

  it('appends versions and never edits one in place', async () => {
    await put('law', { allow_action_types: ['court-filing'], note: 'Filing pilot' });
    const before = await policyRows();
    await put('law', { allow_action_types: ['court-filing', 'contract-redline'] });
    const after = await policyRows();
    expect(after).toHaveLength(2);
    expect(after[0]).toEqual(before[0]);
    await expect(ctx.sql('UPDATE policy_versions SET digest = ? WHERE version = 1', '0'.repeat(64))).rejects.toThrow(/append-only/);
    await expect(ctx.sql('DELETE FROM policy_versions')).rejects.toThrow(/append-only/);
    expect(await policyRows()).toEqual(after);
  });

  it('keeps versions 1, 2, 3… chained when PUTs race', async () => {
    const docs = ['court-filing', 'contract-redline', 'client-communication', 'legal-research-memo'].map((t) => ({ allow_action_types: [t] }));
    const answers = await Promise.all(docs.map((d) => put('law', d)));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201]);
    const list = (await receipts('law')).body.receipts;
    expect(list.map((r: any) => r.version)).toEqual([4, 3, 2, 1]);
    for (let i = 0; i < list.length - 1; i++) expect(list[i].previous_digest).toBe(list[i + 1].digest);
    expect(list.at(-1).previous_digest).toBeNull();
  });

  it('is per pack: a law policy leaves medicine at its defaults', async () => {
    await put('law', { deny_action_types: ['court-filing'] });
    const res = await gate(gateBody('medicine', { action_type: 'clinical-note-draft' }));
    expect(res.body).toMatchObject({ decision: 'needs_review' });
    expect(res.body.evidence_packet.seal.attestation.policy_digest).toBeNull();
  });

  it('is per tenant: another tenant’s policy changes nothing here', async () => {
    const other = await ctx.signup();
    expect((await put('medicine', { allow_action_types: ['clinical-note-draft'] }, other.apiKey)).status).toBe(201);
    const mine = await gate(gateBody('medicine', { action_type: 'clinical-note-draft' }));
    expect(mine.body.decision).toBe('needs_review');
    expect((await options('medicine')).body.current).toBeNull();
    expect((await receipts('medicine')).body.receipts).toEqual([]);
    const theirs = await gate(gateBody('medicine', { action_type: 'clinical-note-draft' }), other.apiKey);
    expect(theirs.body.decision).toBe('allow');
  });
});

describe('policy receipts', () => {
  it('seal every version (not metered) with a receipt that verifies, listed newest first', async () => {
    const prod = ctx.productionTenant();
    const k = prod.apiKey;
    const docs = [{ allow_action_types: ['court-filing'] }, { deny_action_types: ['court-filing'] }, { review_action_types: ['court-filing'], label: 'Back to review' }];
    const made = [];
    for (const d of docs) made.push((await put('law', d, k)).body);
    expect(await usageOf(ctx, prod.tenantId)).toEqual({ actions_used: 0, credits_used: 0 });

    const res = await receipts('law', '', k);
    expect(res.status).toBe(200);
    expect(res.body.receipts.map((r: any) => r.version)).toEqual([3, 2, 1]);
    expect(res.body.next_before_version).toBeNull();
    const keyId = (await ctx.request('/tenant/api-keys', { key: k })).body.keys[0].id;
    for (const r of res.body.receipts) {
      // The history lists exactly what the PUT answered, minus its changed flag.
      const { changed: _changed, ...mine } = made[r.version - 1];
      expect(r).toEqual(mine);
      expect(r.actor).toBe(keyId);
      expect(r.receipt.action_key).toMatch(/^law:policy:[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(r.receipt.href).toBe(`/law/evidence-packets/${r.receipt.action_key}`);
      const att = r.receipt.evidence_packet.seal.attestation;
      expect(att).toMatchObject({
        kind: 'policy',
        pack: 'law',
        tenant_id: prod.tenantId,
        decision: null,
        status: 'recorded',
        review_route: null,
        payload_hash: r.digest,
        policy_digest: r.digest,
        manifest_digest: getGatePack('law').digest,
        recorded_at: r.created_at,
        dev_key: false,
        context: { policy_pack: 'law', version: r.version, digest: r.digest, previous_digest: r.previous_digest, actor: keyId },
      });
      const verified = await ctx.request('/v1/verify', { json: r.receipt.verify_request });
      expect(verified.body, verified.text).toMatchObject({ verified: true, key_status: 'active' });
      const record = await ctx.request(`/v1/records/${r.receipt.action_key}`, { key: k });
      expect(record.body).toMatchObject({ kind: 'policy', status: 'recorded', version: r.version, digest: r.digest });
    }
    expect(res.body.receipts[0].document).toEqual({
      policy_pack: 'law',
      allow_action_types: [],
      deny_action_types: [],
      review_action_types: ['court-filing'],
      review_routes: {},
      label: 'Back to review',
    });
  });

  it('page with limit and before_version', async () => {
    for (const t of ['court-filing', 'contract-redline', 'client-communication']) await put('law', { allow_action_types: [t] });
    const page1 = await receipts('law', '&limit=2');
    expect(page1.body.receipts.map((r: any) => r.version)).toEqual([3, 2]);
    expect(page1.body.next_before_version).toBe(2);
    const page2 = await receipts('law', `&limit=2&before_version=${page1.body.next_before_version}`);
    expect(page2.body.receipts.map((r: any) => r.version)).toEqual([1]);
    expect(page2.body.next_before_version).toBeNull();
  });

  it('show the current version in options', async () => {
    const made = (await put('law', { allow_action_types: ['court-filing'], review_routes: { 'court-filing': 'chat:filing-desk' } })).body;
    const { changed: _changed, ...version } = made;
    const res = await options('law');
    expect(res.body.current).toEqual(version);
    expect(res.body.action_types.find((a: any) => a.id === 'court-filing')).toMatchObject({ current: 'allow', current_review_route: 'chat:filing-desk' });
  });
});

/** One case per detection rule (companion/policy/secrets.ts), each at a different place in the policy. */
const fake = (...parts: string[]) => parts.join(''); // assembled at run time, so no scanner mistakes the fixtures for live keys
const RAW_CASES: { rule: string; doc: Record<string, unknown>; path: string; value: string }[] = [
  { rule: 'secret_field_name', doc: { api_key: 'abc' }, path: '/api_key', value: 'abc' },
  { rule: 'pem_block', doc: { note: '-----BEGIN PRIVATE KEY-----' }, path: '/note', value: '-----BEGIN PRIVATE KEY-----' },
  { rule: 'known_secret_prefix', doc: { label: fake('svc_', 'live_', 'Q2'.repeat(20)) }, path: '/label', value: fake('svc_', 'live_', 'Q2'.repeat(20)) },
  { rule: 'known_secret_prefix', doc: { allow_action_types: [fake('sk', '-', 'proj', 'A1b2C3d4'.repeat(3))] }, path: '/allow_action_types/0', value: fake('sk', '-', 'proj', 'A1b2C3d4'.repeat(3)) },
  { rule: 'known_secret_prefix', doc: { note: fake('wh', 'sec_', 'c2VjcmV0LXNpZ25pbmc') }, path: '/note', value: fake('wh', 'sec_', 'c2VjcmV0LXNpZ25pbmc') },
  { rule: 'known_secret_prefix', doc: { note: fake('xo', 'xb-', '1234-5678-abcdef') }, path: '/note', value: fake('xo', 'xb-', '1234-5678-abcdef') },
  { rule: 'known_secret_prefix', doc: { note: fake('AK', 'IA', 'IOSFODNN7EXAMPLE') }, path: '/note', value: fake('AK', 'IA', 'IOSFODNN7EXAMPLE') },
  { rule: 'known_secret_prefix', doc: { note: fake('gh', 'p_', 'abcdefghij'.repeat(3)) }, path: '/note', value: fake('gh', 'p_', 'abcdefghij'.repeat(3)) },
  { rule: 'jwt', doc: { note: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl' }, path: '/note', value: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl' },
  { rule: 'url_credentials', doc: { review_routes: { 'court-filing': 'https://ops:hunter2@hooks.example.com/x' } }, path: '/review_routes/court-filing', value: 'hunter2' },
  { rule: 'email_address', doc: { note: 'ask ada@example.com first' }, path: '/note', value: 'ada@example.com' },
  { rule: 'phone_number', doc: { label: 'call +1 212 555 0100' }, path: '/label', value: '212 555 0100' },
  { rule: 'hex_blob', doc: { label: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' }, path: '/label', value: 'e3b0c44298fc1c149afbf4c8996fb924' },
  { rule: 'base64_blob', doc: { note: 'QWxhZGRpbjpvcGVuIHNlc2FtZQ==' }, path: '/note', value: 'QWxhZGRpbjpvcGVuIHNlc2FtZQ' },
  { rule: 'high_entropy_token', doc: { label: 'token q8ZfT2kLm9xWv4Rb' }, path: '/label', value: 'q8ZfT2kLm9xWv4Rb' },
  { rule: 'control_characters', doc: { note: 'Summarise this:\nPrivileged memo' }, path: '/note', value: 'Privileged memo' },
  { rule: 'too_long', doc: { note: 'Please review the following draft. '.repeat(5) }, path: '/note', value: 'Please review the following draft. '.repeat(5) },
];

describe('raw material in a policy', () => {
  it.each(RAW_CASES)('is refused by rule $rule at $path with 422 raw_content_rejected, unquoted, and nothing is stored', async ({ rule, doc, path, value }) => {
    const sealed = await countSealed(ctx);
    const res = await put('law', doc);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('raw_content_rejected');
    expect(res.body.errors).toContainEqual(expect.objectContaining({ in: 'body', path, code: `raw_material.${rule}` }));
    expect(res.text).not.toContain(value);
    expect(await policyRows()).toEqual([]);
    expect(await countSealed(ctx)).toBe(sealed);
    // The preview refuses the same policy the same way, at the same path under /policy.
    const pre = await preview('law', doc, [gateBody('law')]);
    expect(pre.body.code).toBe('raw_content_rejected');
    expect(pre.body.errors).toContainEqual(expect.objectContaining({ path: `/policy${path}`, code: `raw_material.${rule}` }));
  });

  it('lists every offending path in one answer, beside the other invalid fields', async () => {
    const res = await put('law', {
      label: 'ada@example.com',
      note: 'line\nbreak',
      password: 'x',
      allow_action_types: ['court-filing', 'no-such-type'],
      review_routes: { 'court-filing': 'chat:ok', 'contract-redline': 'fax:desk' },
    });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('raw_content_rejected');
    const byPath = Object.fromEntries(res.body.errors.map((e: any) => [e.path, e.code]));
    expect(byPath).toEqual({
      '/label': 'raw_material.email_address',
      '/note': 'raw_material.control_characters',
      '/password': 'raw_material.secret_field_name',
      '/allow_action_types/1': 'invalid_value',
      '/review_routes/contract-redline': 'invalid_format',
    });
  });

  it('bounds the free text: a note of exactly the limit is fine, one more character is content', async () => {
    const note = 'Pilot for the filing team with partner sign-off. '.repeat(3).slice(0, POLICY_STRING_MAX);
    expect((await put('law', { note })).status).toBe(201);
    expect((await put('law', { note: `${note}x` })).body.errors).toEqual([expect.objectContaining({ path: '/note', code: 'raw_material.too_long' })]);
  });
});

describe('policy validation', () => {
  it('refuses action types the pack does not have, naming each', async () => {
    const res = await put('law', { allow_action_types: ['court-filing', 'cui-handling'], review_routes: { 'phi-export': 'chat:desk' } });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors.map((e: any) => e.path).sort()).toEqual(['/allow_action_types/1', '/review_routes/phi-export']);
    expect(await policyRows()).toEqual([]);
  });

  it('refuses an action type in both allow and deny (or review), a duplicate, and allowing what the pack blocks', async () => {
    const res = await put('law', {
      allow_action_types: ['court-filing', 'contract-redline', 'privileged-material-external-share'],
      deny_action_types: ['court-filing', 'client-communication', 'client-communication'],
      review_action_types: ['contract-redline'],
    });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: any) => [e.path, e.code])).toEqual(
      expect.arrayContaining([
        ['/deny_action_types/0', 'conflicting_action_type'],
        ['/deny_action_types/2', 'duplicate_action_type'],
        ['/review_action_types/0', 'conflicting_action_type'],
        ['/allow_action_types/2', 'not_allowable'],
      ]),
    );
    expect(res.body.errors).toHaveLength(4);
    expect(await policyRows()).toEqual([]);
  });

  it('refuses a policy_pack in the body that is not the query’s, and a review route that is not <channel>:<target>', async () => {
    const res = await put('law', { policy_pack: 'medicine', review_routes: { 'court-filing': 'email:desk' } });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: any) => e.path).sort()).toEqual(['/policy_pack', '/review_routes/court-filing']);
    expect((await put('law', { policy_pack: 'law' })).status).toBe(201);
  });

  it('rejects unknown query parameters and a missing or non-gate policy_pack on all four endpoints', async () => {
    const calls = [
      (q: string) => ctx.request(`/tenant/policy/options${q}`, { key }),
      (q: string) => ctx.request(`/tenant/policy/preview${q}`, { json: { policy: {}, samples: [gateBody('law')] }, key }),
      (q: string) => ctx.request(`/tenant/policy${q}`, { method: 'PUT', json: {}, key }),
      (q: string) => ctx.request(`/tenant/policy/receipts${q}`, { key }),
    ];
    for (const call of calls) {
      const unknown = await call('?policy_pack=law&pack=law');
      expect(unknown.status).toBe(422);
      expect(unknown.body.errors).toEqual([expect.objectContaining({ in: 'query', path: '/pack', code: 'unrecognized_key' })]);
      expect((await call('')).body.errors).toEqual([expect.objectContaining({ in: 'query', path: '/policy_pack' })]);
      expect((await call('?policy_pack=eu-ai-act')).status).toBe(422);
    }
    expect(await policyRows()).toEqual([]);
  });

  it('needs an API key', async () => {
    expect((await ctx.request('/tenant/policy/options?policy_pack=law')).status).toBe(401);
    expect((await ctx.request('/tenant/policy?policy_pack=law', { method: 'PUT', json: {} })).status).toBe(401);
  });
});
