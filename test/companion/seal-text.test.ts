/**
 * Answers written as text on the sealing side (evidence/sealed-response.ts fillResponseText and
 * evidenceTexts, evidence/sealer.ts with SealRequest answerAsText): the spliced text is, byte for
 * byte, JSON.stringify of the answer built as objects (fillResponse over the record's packet and
 * verify request), over a corpus of templates and attestations (strings that need escaping,
 * Unicode, integer-like member names, numbers); the compact form stored for idempotent replays
 * is compactResponse's; and through a real sealer on a real database, an idempotent replay,
 * rebuilt from the stored row as objects, is the same text as the first answer (also when the
 * request carried its template as text, as it crosses to the sealing thread), whose
 * verify_request verifies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactResponse } from '../../companion/evidence/idempotency/replay.ts';
import { evidenceTexts, fillResponse, fillResponseText, SEALED, spliceResponse, templateText } from '../../companion/evidence/sealed-response.ts';
import type { SealOutcome, SealPipeline, SealRequest } from '../../companion/evidence/sealer.ts';
import { sealGate } from '../../companion/gate/seal-gate.ts';
import type { GateBody } from '../../companion/gate/seal-gate.ts';
import { getGatePack } from '../../companion/packs/registry.ts';
import { currentOverlay } from '../../companion/policy/overlay.ts';
import type { RecordBody } from '../../companion/records/schema.ts';
import { sealRecord } from '../../companion/records/seal-record.ts';
import { forThread } from '../../companion/seal-thread/protocol.ts';
import { canonicalize } from '../../shared/canonical-json.ts';
import { evidencePacket, verifyRequestFor } from '../../shared/seal.ts';
import { ATTESTATION_FORMAT } from '../../shared/types.ts';
import type { AttestationV2, PacketFields, Seal } from '../../shared/types.ts';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { gateBody, recordBody } from './pack-fixtures.ts';

const ODD = ['quote " backslash \\ slash /', 'controls \u0000 \b \t \n \u001f \u007f', 'line sep \u2028', 'é 漢字 עברית 😀 𝄞', '', '10'];

const CONTEXTS: (Record<string, unknown> | undefined)[] = [
  undefined,
  { rule_ids: ['law.privilege.1'], engine: 'law-core/3' },
  Object.fromEntries(ODD.map((s, i) => [s, [i, s]])),
  // Integer-like names: JavaScript lists them first, JCS sorts them as strings.
  { '10': 'ten', '9': 'nine', '0': { '2': 2, '1': 1 }, b: 'b', '01': 'not an index' },
  { numbers: [0, 1e21, 1e-7, 0.1, -1.5, 2 ** 53, 5e-324] },
];

function fieldsWith(s: string, decision: string | null, route: string | null): PacketFields {
  return { action_key: `law:${s}:01J`, href: `/law/evidence-packets/${s}`, status: s || 'sealed', decision, payload_hash: 'a'.repeat(64), review_route: route };
}

function attestationFor(fields: PacketFields, context: Record<string, unknown> | undefined): AttestationV2 {
  return {
    format: ATTESTATION_FORMAT,
    action_key: fields.action_key,
    tenant_id: 'ten_1',
    pack: 'law',
    kind: 'gate',
    decision: fields.decision,
    status: fields.status,
    payload_hash: fields.payload_hash,
    packet_hash: 'b'.repeat(64),
    review_route: fields.review_route,
    recorded_at: '2026-11-28T16:00:00.000Z',
    key_id: 'kid',
    dev_key: true,
    tenant_seq: 3,
    prev_attestation_hash: null,
    manifest_digest: null,
    policy_digest: null,
    ...(context ? { context } : {}),
  };
}

/** The record's packet and verify request as the sealer builds them: the attestation parsed from its stored JCS text. */
function objects(fields: PacketFields, attestation: AttestationV2) {
  const stored = canonicalize(attestation);
  const seal: Seal = { alg: 'Ed25519', key_id: 'kid', dev_key: true, attestation: JSON.parse(stored) as AttestationV2, attestation_hash: 'c'.repeat(64), signature: 'sig_-' };
  const packet = evidencePacket(fields, attestation.packet_hash, seal);
  return { stored, seal, packet, verifyRequest: verifyRequestFor(packet, fields) };
}

describe('evidenceTexts', () => {
  it('is JSON.stringify of the packet and the verify request, the stored attestation spliced in', () => {
    let integerNamed = 0;
    for (const s of ODD) {
      for (const [decision, route] of [[null, null], [s, s], ['allow', 'browser:review']] as const) {
        for (const context of CONTEXTS) {
          const fields = fieldsWith(s, decision, route);
          const { stored, seal, packet, verifyRequest } = objects(fields, attestationFor(fields, context));
          const texts = evidenceTexts(fields, packet.packet_hash, seal, stored);
          expect(texts.packet).toBe(JSON.stringify(packet));
          expect(texts.verifyRequest).toBe(JSON.stringify(verifyRequest));
          // Where the stored text and the parsed object's text differ, the object's is the answer's.
          if (JSON.stringify(seal.attestation) !== stored) integerNamed++;
        }
      }
    }
    expect(integerNamed).toBeGreaterThan(0);
  });
});

describe('fillResponseText', () => {
  const fields = fieldsWith('draft_reply', 'needs_review', 'browser:legal-review');
  const { stored, seal, packet, verifyRequest } = objects(fields, attestationFor(fields, CONTEXTS[3]));
  const record = { actionKey: fields.action_key, packet, verifyRequest };
  let asked = 0;
  const evidence = () => {
    asked++;
    return evidenceTexts(fields, packet.packet_hash, seal, stored);
  };

  const templates: unknown[] = [
    null,
    'just text',
    { action_key: SEALED.actionKey },
    { decision: 'allow', action_key: SEALED.actionKey, evidence_packet: SEALED.packet, verify_request: SEALED.verifyRequest, reasons: [{ id: 'r', text: ODD[0] }], n: 1e21 },
    { nested: { twice: [SEALED.packet, SEALED.packet, SEALED.verifyRequest] }, '2': 'two', '1': SEALED.actionKey },
    { odd: ODD, [ODD[0]!]: ODD[3], empty: {}, list: [] },
    { text: '{"$sealed":"evidence_packet"}', $sealed: 'evidence_packet', also: { $sealed: 1 }, first: { $sealed: 'verify_request', more: 1 } },
    [SEALED.actionKey, null, SEALED.verifyRequest],
    Object.assign(Object.create(null) as object, { action_key: SEALED.actionKey, packet: SEALED.packet }),
  ];

  it('is JSON.stringify(fillResponse(template, record)), and its compact form compactResponse of that', () => {
    for (const template of templates) {
      const filled = fillResponseText(template, fields.action_key, evidence);
      expect(filled, JSON.stringify(template)).toBeDefined();
      const body = fillResponse(template, record);
      expect(filled!.text).toBe(JSON.stringify(body));
      expect(filled!.compact).toBe(compactResponse(body, record));
    }
  });

  it('spliced without its compact form (no idempotency key stores it), is the same text', () => {
    for (const template of templates) {
      const json = templateText(template)!;
      const both = spliceResponse(json, fields.action_key, evidence);
      const textOnly = spliceResponse(json, fields.action_key, evidence, false);
      expect(textOnly!.text).toBe(both!.text);
      expect(textOnly!.compact).toBe('');
    }
  });

  it('asks for the evidence once, and only for a template with an evidence marker', () => {
    asked = 0;
    fillResponseText({ a: SEALED.actionKey, b: [1, 2] }, fields.action_key, evidence);
    expect(asked).toBe(0);
    fillResponseText({ a: SEALED.packet, b: SEALED.verifyRequest, c: SEALED.packet }, fields.action_key, evidence);
    expect(asked).toBe(1);
  });

  it('declines templates that JSON.stringify and fillResponse write differently, so the caller fills objects', () => {
    class Instance {
      readonly x = 1;
    }
    const declined: unknown[] = [
      // Written as a marker's text by JSON.stringify, but not a marker (two members).
      { looks: { $sealed: 'evidence_packet', other: undefined } },
      { when: new Date(0) },
      { instance: new Instance() },
      { unknown: { $sealed: 'other_part' } },
      { spaced: { $sealed: 'evidence_packet ' } },
      { escaped: { $sealed: 'evidence"packet\\' } },
      { fn: () => 1 },
      undefined,
    ];
    for (const template of declined) expect(fillResponseText(template, fields.action_key, evidence)).toBeUndefined();
  });
});

describe('answers as text through the sealer', () => {
  let ctx: TestContext;
  let text: SealPipeline;
  let tenantId: string;
  beforeAll(async () => {
    ctx = await createTestContext();
    ({ tenantId } = await ctx.signup());
    const pipeline = ctx.deps.sealer;
    // As the hot path asks (http/hot-path-routes.ts).
    text = { ...pipeline, seal: (request) => pipeline.seal({ ...request, answerAsText: true }), drain: () => pipeline.drain(), close: () => pipeline.close() } as SealPipeline;
  });
  afterAll(() => ctx.close());

  const auth = () => ({ tenantId, tenantKind: 'sandbox' as const, keyId: 'key_test' });

  async function expectSameAsReplay(first: SealOutcome, replay: SealOutcome): Promise<void> {
    expect(first).toMatchObject({ status: 201, replayed: false, body: undefined });
    expect(typeof first.text).toBe('string');
    expect(replay.replayed).toBe(true);
    const replayed = replay.text ?? JSON.stringify(replay.body);
    expect(replayed).toBe(first.text);
    const verified = await ctx.request('/v1/verify', { json: (JSON.parse(first.text!) as { verify_request: unknown }).verify_request });
    expect(verified.body).toMatchObject({ verified: true });
  }

  it('a gate decision: the text is the replay rebuilt from the stored row as objects', async () => {
    const pack = getGatePack('law')!;
    const overlay = await currentOverlay(ctx.deps.store, tenantId, 'law');
    const body = { ...gateBody('law'), idempotency_key: 'text-gate-1' } as GateBody;
    const first = await sealGate({ ...ctx.deps, sealer: text }, auth(), pack, body, overlay);
    const replay = await sealGate(ctx.deps, auth(), pack, body, overlay);
    await expectSameAsReplay(first, replay);
  });

  it('a request crossing to the sealing thread carries its template as text, and is answered with the same bytes', async () => {
    const pack = getGatePack('law')!;
    const overlay = await currentOverlay(ctx.deps.store, tenantId, 'law');
    let captured: SealRequest | undefined;
    const capture = { seal: (r: SealRequest) => ((captured = r), Promise.resolve({ status: 201, body: {}, replayed: false })) } as unknown as SealPipeline;
    await sealGate({ ...ctx.deps, sealer: capture }, auth(), pack, { ...gateBody('law'), idempotency_key: 'text-gate-2' } as GateBody, overlay);
    const request = { ...captured!, answerAsText: true };
    const crossing = forThread(request);
    expect(crossing.respond).toEqual({ templateText: JSON.stringify((request.respond as { template: unknown }).template) });
    // Left as they are: an answer not wanted as text, and a template JSON.stringify would write otherwise.
    expect(forThread(captured!)).toBe(captured);
    const odd = { ...request, respond: { template: { when: new Date(0) } } };
    expect(forThread(odd)).toBe(odd);

    const first = await ctx.deps.sealer.seal(crossing);
    const replay = await ctx.deps.sealer.seal(captured!);
    await expectSameAsReplay(first, replay);
  });

  it('a record whose attestation has integer-like member names and text to escape', async () => {
    const deps = { sealer: text, clock: ctx.clock, tenants: ctx.deps.store.tenants };
    const body = recordBody({
      idempotency_key: 'text-record-1',
      source_payload: { '10': ODD[0], '9': ODD[3], content_sha256: 'e'.repeat(64) },
      metadata: { '2': 'two', '1': ODD[1], model: 'image-gen' },
    }) as RecordBody;
    const first = await sealRecord(deps, auth(), body, true);
    expect(first.text).toMatch(/"attestation":\{"0":|"1":/);
    const replay = await sealRecord({ ...deps, sealer: ctx.deps.sealer }, auth(), body, true);
    await expectSameAsReplay(first, replay);
    // The replay asked for text comes back the same too (as body here, as text from the sealing thread).
    const again = await sealRecord(deps, auth(), body, true);
    expect(again.text ?? JSON.stringify(again.body)).toBe(first.text);
  });
});
