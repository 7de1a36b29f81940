/** GET /v1/packs and the pack registry (interface-spec "What the service does" 1–2, Endpoints, Limits). */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalBytes } from '../../shared/canonical-json.ts';
import { GateManifestSchema, RecordManifestSchema } from '../../companion/packs/manifest.ts';
import { gatePacks, getPack, recordPacks } from '../../companion/packs/registry.ts';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';

let ctx: TestContext;
let body: any;
beforeAll(async () => {
  ctx = await createTestContext();
  const res = await ctx.request('/v1/packs');
  expect(res.status).toBe(200);
  body = res.body;
});
afterAll(async () => {
  await ctx.close();
});

const entry = (name: string) => body.packs.find((p: any) => p.name === name);

describe('GET /v1/packs', () => {
  it('is public and lists the five gate packs and two record packs, in the spec order', () => {
    expect(body.packs.map((p: any) => [p.name, p.kind])).toEqual([
      ['law', 'gate'],
      ['defense', 'gate'],
      ['medicine', 'gate'],
      ['education', 'gate'],
      ['us-regulatory', 'gate'],
      ['eu-ai-act', 'record'],
      ['ca-sb942', 'record'],
    ]);
  });

  it('publishes each manifest verbatim: SHA-256 of the JCS bytes of an entry without manifest_digest is its digest', () => {
    for (const p of body.packs) {
      const { manifest_digest, ...manifest } = p;
      expect(createHash('sha256').update(canonicalBytes(manifest)).digest('hex'), p.name).toBe(manifest_digest);
      expect(manifest_digest).toBe(getPack(p.name)!.digest);
    }
  });

  it('lists the exact required request fields of every pack', () => {
    expect(entry('law').required_fields).toEqual([
      'pack',
      'proposed_action',
      'law_context',
      'law_context.matter_band',
      'law_context.tool_id',
      'law_context.doctrine_anchor',
      'law_context.jurisdiction',
    ]);
    expect(entry('law').optional_fields).toEqual([
      'action_type',
      'law_context.client_consent',
      'law_context.tool_data_handling',
      'surface',
      'source_key',
      'redacted_text',
      'client_nonce',
      'idempotency_key',
    ]);
    expect(entry('defense').required_fields).toEqual([
      'pack',
      'proposed_action',
      'action_type',
      'context',
      'context.data_marking',
      'context.tool_id',
      'context.tool_boundary',
    ]);
    expect(entry('medicine').required_fields).toEqual([
      'pack',
      'proposed_action',
      'action_type',
      'context',
      'context.care_setting',
      'context.tool_id',
      'context.phi_involved',
      'context.tool_baa_status',
    ]);
    expect(entry('education').required_fields).toEqual([
      'pack',
      'proposed_action',
      'action_type',
      'context',
      'context.institution_level',
      'context.tool_id',
      'context.student_data_class',
      'context.tool_data_agreement',
    ]);
    expect(entry('us-regulatory').required_fields).toEqual([
      'pack',
      'proposed_action',
      'action_type',
      'context',
      'context.agency',
      'context.submission_channel',
      'context.tool_id',
    ]);
    for (const name of ['eu-ai-act', 'ca-sb942']) {
      expect(entry(name).required_fields).toEqual(['pack', 'event_type', 'occurred_at', 'source_payload']);
      expect(entry(name).optional_fields).toEqual(['metadata', 'idempotency_key']);
    }
  });

  it('gives every gate action type a default decision, none of them allow (a fresh sandbox never gets allow)', () => {
    for (const p of body.packs.filter((x: any) => x.kind === 'gate')) {
      expect(p.action_types.length, p.name).toBeGreaterThanOrEqual(5);
      for (const a of p.action_types) expect(['needs_review', 'blocked'], `${p.name} ${a.id}`).toContain(a.default_decision);
      expect(p.review_route).toMatch(/^(chat|workflow|webhook|browser):[a-z0-9-]+$/);
      expect(Object.keys(p.next_step).sort()).toEqual(['allow', 'blocked', 'needs_review']);
      expect(p.catalog_refs).toContain(`pack:${p.name}`);
      expect(p.endpoints).toEqual(['/v1/gate', `/${p.name}/proposed-action`]);
    }
    const defaults = (name: string) => Object.fromEntries(entry(name).action_types.map((a: any) => [a.id, a.default_decision]));
    expect(defaults('law')['privileged-material-external-share']).toBe('blocked');
    expect(defaults('defense')['cui-external-ai-transfer']).toBe('blocked');
    expect(defaults('us-regulatory')['bulk-comment-generation']).toBe('blocked');
    expect(defaults('medicine')['phi-export']).toBe('needs_review');
    expect(defaults('education')['student-record-access']).toBe('needs_review');
    expect(entry('law').default_action_type).toBe('proposed-action');
  });

  it('publishes each gate rate and the credit estimate rule (interface-spec Limits)', () => {
    const rate = (name: string) => entry(name).rate;
    for (const p of body.packs) expect(Number.isInteger(p.rate) && p.rate > 0, p.name).toBe(true);
    for (const high of ['law', 'defense', 'medicine']) expect(rate(high)).toBeGreaterThan(rate('education'));
    expect(body.metering).toMatchObject({
      usage_unit: 'credits',
      cents_per_credit: 1,
      bytes_per_token: 4,
      tokens_per_block: 1000,
      max_credits_per_action: 2500,
    });
    expect(body.metering.token_estimate).toMatch(/JCS/);
    expect(body.metering.credits).toBe('credits = min(2500, rate × max(1, ceil(estimated_tokens / 1000)))');
  });

  it('states the claim boundary on every pack', () => {
    const boundary = 'Outputs are evidence and routing, never a certification of compliance, legal approval or agency acceptance.';
    expect(body.claim_boundary).toBe(boundary);
    for (const p of body.packs) expect(p.claim_boundary.startsWith(boundary), p.name).toBe(true);
  });

  it('publishes both record vocabularies with their digest keys and metadata', () => {
    const events = (name: string) => entry(name).event_types.map((e: any) => e.id);
    expect(events('eu-ai-act')).toEqual(['output_marked', 'disclosure_rendered', 'label_published']);
    expect(events('ca-sb942')).toEqual([
      'latent_disclosure_embedded',
      'manifest_disclosure_offered',
      'detection_tool_available',
      'detection_request_answered',
      'license_revoked',
    ]);
    const marked = entry('eu-ai-act').event_types[0];
    expect(marked.source_payload.required).toEqual(['content_sha256']);
    expect(Object.keys(marked.metadata)).toEqual(
      expect.arrayContaining(['marking_techniques', 'marking_payload_ids', 'model', 'model_version', 'detection_check_result']),
    );
    for (const p of body.packs.filter((x: any) => x.kind === 'record')) {
      for (const e of p.event_types) {
        for (const k of [...e.source_payload.required, ...e.source_payload.optional]) expect(k).toMatch(/_sha256$/);
        expect(e.action_type).toBe(e.id.replaceAll('_', '-'));
      }
    }
  });

  it('answers a revalidation with 304 and rejects unknown query parameters', async () => {
    const first = await ctx.request('/v1/packs');
    const etag = first.headers.get('etag')!;
    expect(etag).toBeTruthy();
    const again = await ctx.request('/v1/packs', { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    const bad = await ctx.request('/v1/packs?kind=gate');
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([expect.objectContaining({ in: 'query', path: '/kind' })]);
  });
});

describe('pack registry', () => {
  it('holds manifests that match their schemas and are frozen', () => {
    for (const p of gatePacks()) {
      expect(GateManifestSchema.safeParse(p.manifest).success, p.manifest.name).toBe(true);
      expect(Object.isFrozen(p.manifest.action_types[0])).toBe(true);
    }
    for (const p of recordPacks()) expect(RecordManifestSchema.safeParse(p.manifest).success, p.manifest.name).toBe(true);
    expect(getPack('nope')).toBeUndefined();
  });

  it('keeps digests distinct per pack', () => {
    const digests = [...gatePacks(), ...recordPacks()].map((p) => p.digest);
    expect(new Set(digests).size).toBe(7);
    for (const d of digests) expect(d).toMatch(/^[0-9a-f]{64}$/);
  });
});
