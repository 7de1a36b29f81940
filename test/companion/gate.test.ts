/**
 * POST /v1/gate and POST /{vertical}/proposed-action (interface-spec "Gate request", "Gate
 * response", Limits; DESIGN.md §3), in-process against a real temporary database.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { payloadHash } from '../../shared/attestation.ts';
import { canonicalBytes } from '../../shared/canonical-json.ts';
import { ULID_PATTERN } from '../../companion/core/ids.ts';
import { estimateCredits } from '../../companion/metering/credits.ts';
import { GATE_PACKS } from '../../companion/packs/manifest.ts';
import type { GatePackName } from '../../companion/packs/manifest.ts';
import { gatePacks, getGatePack } from '../../companion/packs/registry.ts';
import { freshTenantContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { countSealed, gateBody, QUIET_CONTEXT, usageOf } from './pack-fixtures.ts';

let ctx: TestContext;
let key: string;
let tenantId: string;
beforeEach(async () => ({ ctx, key, tenantId } = await freshTenantContext()));
afterEach(() => ctx.close());

const gate = (json: unknown, k = key, path = '/v1/gate') => ctx.request(path, { json, key: k });
const pointerToDotted = (p: string) => p.slice(1).replaceAll('/', '.');

describe('POST /v1/gate: the sealed decision', () => {
  it('answers exactly the Gate response fields, with a sealed packet and a ready verify_request', async () => {
    const body = gateBody('law');
    const res = await gate(body);
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(
      ['action_key', 'catalog_refs', 'decision', 'evidence_packet', 'next_step', 'payload_hash', 'reasons', 'review_route', 'verify_request'].sort(),
    );
    const r = res.body;
    expect(r.decision).toBe('needs_review');
    expect(r.review_route).toBe('browser:legal-review');
    expect(r.next_step).toBe(getGatePack('law').manifest.next_step.needs_review);
    expect(r.action_key).toMatch(/^law:proposed-action:[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(r.evidence_packet).toMatchObject({ action_key: r.action_key, href: `/law/evidence-packets/${r.action_key}`, status: 'sealed' });
    expect(r.payload_hash).toBe(payloadHash(body));
    // interface-spec "Verify request": the packet fields plus decision, payload_hash, review_route.
    expect(r.verify_request).toEqual({ ...r.evidence_packet, decision: r.decision, payload_hash: r.payload_hash, review_route: r.review_route });
    const att = r.evidence_packet.seal.attestation;
    expect(att).toMatchObject({
      kind: 'gate',
      pack: 'law',
      decision: 'needs_review',
      status: 'sealed',
      payload_hash: r.payload_hash,
      review_route: 'browser:legal-review',
      manifest_digest: getGatePack('law').digest,
      policy_digest: null,
      tenant_id: tenantId,
      dev_key: true,
    });
    expect(att.context).toMatchObject({ engine: 'law-core@1.0.0', engine_version: '1.0.0', action_type: 'proposed-action' });
    expect(r.catalog_refs).toEqual(expect.arrayContaining(['pack:law', 'engine:law-core', 'rule:law.default.proposed-action', 'route:browser:legal-review']));
    // Why: the deciding rule ids the seal commits, each with an employee-safe explanation.
    expect(r.reasons).toEqual([{ rule: 'law.default.proposed-action', explanation: expect.stringMatching(/needs review until your organisation allowlists/) }]);
    expect(att.context.findings.map((f: { rule: string }) => f.rule)).toContain(r.reasons[0].rule);
  });

  it('verifies online: the verify_request POSTed to /v1/verify passes every check', async () => {
    const r = (await gate(gateBody('medicine'))).body;
    const res = await ctx.request('/v1/verify', { json: r.verify_request });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ verified: true, key_status: 'sandbox' });
  });

  it('gives a fresh sandbox each action type manifest default in every pack (needs_review unless the pack denies)', async () => {
    for (const pack of gatePacks()) {
      const m = pack.manifest;
      ({ apiKey: key } = await ctx.signup()); // a fresh tenant per pack keeps within the sandbox allowance
      for (const a of m.action_types) {
        const res = await gate(gateBody(m.name, { action_type: a.id }));
        expect(res.status, `${m.name} ${a.id}: ${res.text}`).toBe(201);
        expect(res.body.decision, `${m.name} ${a.id}`).toBe(a.default_decision);
        expect(res.body.review_route).toBe(a.default_decision === 'needs_review' ? (a.review_route ?? m.review_route) : null);
        // Rules that fire append their reasons (law: a court filing always needs the attorney's sign-off).
        expect(res.body.next_step.startsWith(m.next_step[a.default_decision])).toBe(true);
        expect(res.body.action_key.startsWith(`${m.name}:${a.id}:`)).toBe(true);
      }
    }
  });

  it('blocks by pack rule: PHI to a tool without a BAA, CUI to an external AI service', async () => {
    const phi = await gate(
      gateBody('medicine', { action_type: 'phi-export', context: { ...QUIET_CONTEXT.medicine, phi_involved: true, tool_baa_status: 'no-baa' } }),
    );
    expect(phi.body).toMatchObject({ decision: 'blocked', review_route: null });
    expect(phi.body.catalog_refs).toContain('rule:medicine.hipaa.phi-to-tool-without-baa');
    const cui = await gate(
      gateBody('defense', { action_type: 'cui-handling', context: { ...QUIET_CONTEXT.defense, data_marking: 'cui', tool_boundary: 'external-ai-service' } }),
    );
    expect(cui.body).toMatchObject({ decision: 'blocked', review_route: null });
    expect(cui.body.evidence_packet.seal.attestation.context.findings).toContainEqual({ rule: 'defense.cui.external-boundary', source: 'pack', effect: 'blocked' });
  });

  it('mints sortable unique action keys: later gates sort after earlier ones', async () => {
    const keys: string[] = [];
    for (let i = 0; i < 5; i++) {
      keys.push((await gate(gateBody('education', { proposed_action: `step ${i}` }))).body.action_key);
      ctx.clock.advance(i % 2 === 0 ? 0 : 1); // same and later milliseconds both sort
    }
    const ids = keys.map((k) => k.split(':')[2]!);
    for (const id of ids) expect(id).toMatch(ULID_PATTERN);
    expect(new Set(keys).size).toBe(5);
    expect([...ids].sort()).toEqual(ids);
  });

  it('answers 401 without an API key and stores nothing', async () => {
    const before = await countSealed(ctx);
    const res = await ctx.request('/v1/gate', { json: gateBody('law') });
    expect(res.status).toBe(401);
    expect(await countSealed(ctx)).toBe(before);
  });
});

describe('POST /v1/gate: validation', () => {
  it('names every missing required field of every pack, as GET /v1/packs lists them', async () => {
    for (const pack of gatePacks()) {
      const m = pack.manifest;
      // No context object: the context field itself is named.
      const bare = await gate({ pack: m.name });
      expect(bare.status).toBe(422);
      expect(bare.body.code).toBe('validation_failed');
      const bareFields = bare.body.errors.map((e: any) => pointerToDotted(e.path)).sort();
      expect(bareFields, m.name).toEqual(m.required_fields.filter((f) => f !== 'pack' && !f.includes('.')).sort());
      // An empty context object: each of its required keys is named.
      const empty = await gate({ pack: m.name, [m.context_field]: {} });
      const emptyFields = empty.body.errors.map((e: any) => pointerToDotted(e.path)).sort();
      expect(emptyFields, m.name).toEqual(m.required_fields.filter((f) => f !== 'pack' && f !== m.context_field).sort());
      for (const e of empty.body.errors) expect(e.message).toMatch(new RegExp(`required by the ${m.name} pack`));
    }
  });

  it('rejects unknown top-level and context fields, each named', async () => {
    const res = await gate({ ...gateBody('defense'), prompt: 'x', notes: 'y', context: { ...QUIET_CONTEXT.defense, raw: 'z' } });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: any) => e.path).sort()).toEqual(['/context/raw', '/notes', '/prompt']);
  });

  it('rejects a missing or unknown pack, an unknown action type and badly shaped context values', async () => {
    const { pack: _p, ...noPack } = gateBody('law');
    expect((await gate(noPack)).body.errors).toEqual([expect.objectContaining({ path: '/pack' })]);
    expect((await gate({ ...noPack, pack: 'eu-ai-act' })).body.errors).toEqual([expect.objectContaining({ path: '/pack' })]);
    const bad = await gate(
      gateBody('law', { action_type: 'launch-missiles', law_context: { ...QUIET_CONTEXT.law, jurisdiction: 'New York', tool_id: 'has spaces' } }),
    );
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: any) => e.path).sort()).toEqual(['/action_type', '/law_context/jurisdiction', '/law_context/tool_id']);
  });

  it('bounds proposed_action and redacted_text', async () => {
    expect((await gate(gateBody('law', { proposed_action: '   ' }))).status).toBe(422);
    expect((await gate(gateBody('law', { proposed_action: 'x'.repeat(32_001) }))).body.errors).toEqual([
      expect.objectContaining({ path: '/proposed_action', code: 'too_big' }),
    ]);
    expect((await gate(gateBody('law', { redacted_text: 'x'.repeat(32_001) }))).body.errors).toEqual([
      expect.objectContaining({ path: '/redacted_text', code: 'too_big' }),
    ]);
    expect((await gate(gateBody('law', { proposed_action: 'x'.repeat(32_000) }))).status).toBe(201);
  });
});

describe('POST /{vertical}/proposed-action', () => {
  it('gates with the path pack; the body pack may be omitted or must agree', async () => {
    for (const name of GATE_PACKS) {
      const { pack: _p, ...body } = gateBody(name);
      const omitted = await gate(body, key, `/${name}/proposed-action`);
      expect(omitted.status, omitted.text).toBe(201);
      expect(omitted.body.action_key.startsWith(`${name}:`)).toBe(true);
      expect(omitted.body.evidence_packet.href).toBe(`/${name}/evidence-packets/${omitted.body.action_key}`);
      expect(omitted.body.payload_hash).toBe(payloadHash(body));
      expect((await gate({ ...body, pack: name }, key, `/${name}/proposed-action`)).status).toBe(201);
    }
    const other: GatePackName = 'medicine';
    const mismatch = await gate(gateBody('law', { pack: other }), key, '/law/proposed-action');
    expect(mismatch.status).toBe(422);
    expect(mismatch.body.errors).toEqual([expect.objectContaining({ path: '/pack', message: 'must be "law" on /law/proposed-action, or omitted' })]);
  });

  it('answers 404 for a vertical that is not a gate pack', async () => {
    const res = await gate(gateBody('law'), key, '/eu-ai-act/proposed-action');
    expect(res.status).toBe(404);
  });
});

describe('raw safety', () => {
  it('never stores or logs proposed_action, redacted_text or source_key: they are not in the database files', async () => {
    const secret = 'ZEBRA-7731 transfer the Hollis merger memo to opposing counsel';
    const redacted = 'QUOKKA-5512 [REDACTED] client said [REDACTED]';
    const sourceKey = 'wf-PANGOLIN-0042/step-3';
    const actionKeys: string[] = [];
    for (const name of GATE_PACKS) {
      const res = await gate(gateBody(name, { proposed_action: secret, redacted_text: redacted, source_key: sourceKey }));
      expect(res.status).toBe(201);
      actionKeys.push(res.body.action_key);
    }
    // A failed validation must not leak them into the log either.
    await gate({ ...gateBody('law', { proposed_action: secret, redacted_text: redacted }), unknown_field: 1 });
    const stored = await ctx.storedBytes();
    // What is stored is searched: the records themselves are found there.
    for (const actionKey of actionKeys) expect(stored.some(({ bytes }) => bytes.includes(Buffer.from(actionKey))), actionKey).toBe(true);
    for (const { name: file, bytes } of stored) {
      for (const needle of ['ZEBRA-7731', 'Hollis merger', 'QUOKKA-5512', 'PANGOLIN-0042']) {
        expect(bytes.includes(Buffer.from(needle)), `${needle} in ${file}`).toBe(false);
      }
    }
    const logged = JSON.stringify(ctx.log.entries);
    for (const needle of ['ZEBRA-7731', 'QUOKKA-5512', 'PANGOLIN-0042']) expect(logged).not.toContain(needle);
  });
});

describe('idempotency and metering', () => {
  it('seals 20 concurrent identical requests once: identical bodies, one record, metered once', async () => {
    // A production tenant, so "metered once" covers credits as well as the action count.
    const { apiKey: key, tenantId } = ctx.productionTenant();
    const body = gateBody('medicine', { idempotency_key: 'retry-7f3a' });
    const before = await countSealed(ctx);
    const results = await Promise.all(Array.from({ length: 20 }, () => gate(body, key)));
    for (const r of results) expect(r.status).toBe(201);
    expect(new Set(results.map((r) => r.text)).size).toBe(1);
    expect(results.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(19);
    expect(await countSealed(ctx)).toBe(before + 1);
    const { idempotency_key: _k, ...payload } = body;
    const credits = estimateCredits(canonicalBytes(payload).length, getGatePack('medicine').manifest.rate).credits;
    expect(await usageOf(ctx, tenantId)).toEqual({ actions_used: 1, credits_used: credits });

    // A later retry, also through the vertical alias (same scope), replays the same body.
    const later = await gate(body, key, '/medicine/proposed-action');
    expect(later.text).toBe(results[0]!.text);
    expect(later.headers.get('idempotent-replayed')).toBe('true');
    expect(await countSealed(ctx)).toBe(before + 1);
  });

  it('answers 422 to the same key with a different body, and stores nothing', async () => {
    const first = await gate(gateBody('law', { idempotency_key: 'k-1' }));
    expect(first.status).toBe(201);
    const before = await countSealed(ctx);
    const reused = await gate(gateBody('law', { idempotency_key: 'k-1', proposed_action: 'something else' }));
    expect(reused.status).toBe(422);
    expect(reused.body.code).toBe('idempotency_key_reused');
    expect(await countSealed(ctx)).toBe(before);
    expect((await usageOf(ctx, tenantId)).actions_used).toBe(1);
  });

  it('meters the pack rate per estimated 1,000-token block of the JCS payload, rounded up', async () => {
    const small = gateBody('education');
    const large = gateBody('defense', { proposed_action: 'a'.repeat(30_000), redacted_text: 'b'.repeat(9_000) });
    const blocks = (b: Record<string, unknown>) => Math.ceil(Math.ceil(canonicalBytes(b).length / 4) / 1000);
    expect(blocks(small)).toBe(1);
    expect(blocks(large)).toBe(10);
    // interface-spec "What the service does" 9: credits are for sealed production actions.
    const prod = ctx.productionTenant();
    await gate(small, prod.apiKey);
    await gate(large, prod.apiKey);
    const rows = await ctx.sql('SELECT pack, credits FROM sealed_records WHERE tenant_id = ? ORDER BY tenant_seq', prod.tenantId);
    expect(rows).toEqual([
      { pack: 'education', credits: getGatePack('education').manifest.rate * 1 },
      { pack: 'defense', credits: getGatePack('defense').manifest.rate * 10 },
    ]);
    expect(await usageOf(ctx, prod.tenantId)).toEqual({
      actions_used: 2,
      credits_used: getGatePack('education').manifest.rate + getGatePack('defense').manifest.rate * 10,
    });
    // A sandbox action counts against the allowance and costs no credits.
    await gate(small);
    expect(await usageOf(ctx, tenantId)).toEqual({ actions_used: 1, credits_used: 0 });
  });
});
