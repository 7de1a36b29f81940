/**
 * POST /v1/record and POST /v1/record/batch (interface-spec "Record request", Endpoints,
 * "What the service does" 7, Errors 422): digest-only payloads, raw content rejected at the
 * edge with nothing stored, payload_retention on every response, no review routing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { payloadHash } from '../../shared/attestation.ts';
import { getRecordPack, recordPacks } from '../../companion/packs/registry.ts';
import { freshTenantContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { countSealed, recordBody, sha256, usageOf } from './pack-fixtures.ts';

let ctx: TestContext;
let key: string;
let tenantId: string;
beforeEach(async () => ({ ctx, key, tenantId } = await freshTenantContext()));
afterEach(() => ctx.close());

const record = (json: unknown) => ctx.request('/v1/record', { json, key });
const batch = (json: unknown) => ctx.request('/v1/record/batch', { json, key });

const RETENTION = {
  raw_content_stored: false,
  stored: 'hash commitments only',
  metadata_values_retained: false,
  caller_retains: 'source_payload and metadata, to re-prove payload_hash',
};

/** A minimal valid body for any event type: its required digests only. */
function minimal(pack: string, eventType: string, required: readonly string[]) {
  return {
    pack,
    event_type: eventType,
    occurred_at: '2024-12-31T12:00:00+01:00',
    source_payload: Object.fromEntries(required.map((k) => [k, sha256(`${eventType}:${k}`)])),
  };
}

describe('POST /v1/record', () => {
  it('records an eu-ai-act output_marked event: status recorded, sealed packet, verify_request, payload_retention', async () => {
    const body = recordBody();
    const res = await record(body);
    expect(res.status).toBe(201);
    const r = res.body;
    expect(Object.keys(r).sort()).toEqual(
      ['action_key', 'event_type', 'evidence_packet', 'occurred_at', 'pack', 'payload_hash', 'payload_retention', 'review_route', 'status', 'verify_request'].sort(),
    );
    expect(r).toMatchObject({ status: 'recorded', pack: 'eu-ai-act', event_type: 'output_marked', review_route: null, payload_retention: RETENTION });
    expect(r.action_key).toMatch(/^eu-ai-act:output-marked:[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(r.evidence_packet).toMatchObject({ action_key: r.action_key, href: `/eu-ai-act/evidence-packets/${r.action_key}`, status: 'recorded' });
    expect(r.payload_hash).toBe(payloadHash(body));
    expect(r.verify_request).toEqual({ ...r.evidence_packet, decision: null, payload_hash: r.payload_hash, review_route: null });
    const att = r.evidence_packet.seal.attestation;
    expect(att).toMatchObject({ kind: 'record', pack: 'eu-ai-act', decision: null, status: 'recorded', review_route: null, manifest_digest: getRecordPack('eu-ai-act').digest });
    // The digests are committed, the metadata only as a digest.
    expect(att.context.source_payload).toEqual(body.source_payload);
    expect(att.context.metadata_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(att.context.occurred_at).toBe(body.occurred_at);

    const verify = await ctx.request('/v1/verify', { json: r.verify_request });
    expect(verify.body).toMatchObject({ verified: true, key_status: 'sandbox' });
  });

  it('records every event type of both record packs with its required digests alone', async () => {
    for (const pack of recordPacks()) {
      for (const e of pack.manifest.event_types) {
        const res = await record(minimal(pack.manifest.name, e.id, e.source_payload.required));
        expect(res.status, `${e.id}: ${res.text}`).toBe(201);
        expect(res.body.action_key.startsWith(`${pack.manifest.name}:${e.action_type}:`)).toBe(true);
        expect(res.body.payload_retention).toEqual(RETENTION);
      }
    }
    const [row] = await ctx.sql("SELECT count(*) AS n FROM sealed_records WHERE kind = 'record' AND decision IS NULL AND review_route IS NULL");
    expect(row).toEqual({ n: 8 });
  });

  it('does not store metadata values (the tenant has not chosen to retain them), only their digest', async () => {
    const res = await record(recordBody({ metadata: { model: 'model-OKAPI-913', model_version: 'v-TAPIR-22' } }));
    expect(res.status).toBe(201);
    for (const { name: file, bytes } of await ctx.storedBytes()) {
      expect(bytes.includes(Buffer.from('OKAPI-913')), file).toBe(false);
      expect(bytes.includes(Buffer.from('TAPIR-22')), file).toBe(false);
    }
  });

  it('rejects a pack/event mismatch, a missing digest and a future occurred_at as validation errors', async () => {
    const wrongPack = await record(recordBody({ pack: 'ca-sb942' }));
    expect(wrongPack.body).toMatchObject({ status: 422, code: 'validation_failed' });
    expect(wrongPack.body.errors).toEqual([expect.objectContaining({ path: '/pack', message: 'event_type output_marked belongs to the eu-ai-act pack' })]);

    const noDigest = await record(recordBody({ source_payload: {} }));
    expect(noDigest.body.code).toBe('validation_failed');
    expect(noDigest.body.errors).toEqual([expect.objectContaining({ path: '/source_payload/content_sha256' })]);

    const unknownEvent = await record(recordBody({ event_type: 'output_deleted' }));
    expect(unknownEvent.body.errors).toEqual([expect.objectContaining({ path: '/event_type' })]);

    const future = await record(recordBody({ occurred_at: '2025-01-01T00:10:00Z' })); // the test clock reads 00:00
    expect(future.status).toBe(422);
    expect(future.body.errors).toEqual([expect.objectContaining({ path: '/occurred_at' })]);
    expect((await record(recordBody({ occurred_at: '2025-01-01T00:04:00Z' }))).status).toBe(201);
  });
});

describe('raw content in source_payload or metadata: 422 raw_content_rejected, nothing stored', () => {
  const base64Blob = Buffer.from('Patient Jane Roe, DOB 1980-02-03, diagnosis: ...'.repeat(4)).toString('base64');
  const cases: [string, Record<string, unknown>, string[]][] = [
    ['free text as a digest', { source_payload: { content_sha256: 'The board approved the merger on Friday.' } }, ['/source_payload/content_sha256']],
    ['a base64 blob', { source_payload: { content_sha256: base64Blob } }, ['/source_payload/content_sha256']],
    ['a non-digest value (uppercase hex)', { source_payload: { content_sha256: sha256('x').toUpperCase() } }, ['/source_payload/content_sha256']],
    ['a non-digest value (a number)', { source_payload: { content_sha256: 12345 } }, ['/source_payload/content_sha256']],
    ['an unknown key', { source_payload: { content_sha256: sha256('x'), content_text: 'raw words' } }, ['/source_payload/content_text']],
    ['a nested object', { source_payload: { content_sha256: { text: 'raw words' } } }, ['/source_payload/content_sha256']],
    ['a string instead of digests', { source_payload: 'raw words' }, ['/source_payload']],
    ['free text in metadata', { metadata: { model: 'a model that wrote: Dear Mr. Smith' } }, ['/metadata/model']],
    ['an unknown metadata key', { metadata: { prompt: 'write a poem' } }, ['/metadata/prompt']],
    [
      'several offences at once, each path named',
      { source_payload: { content_sha256: 'text', marked_content_sha256: base64Blob, note: 'x' }, metadata: { model_version: { nested: true } } },
      ['/metadata/model_version', '/source_payload/content_sha256', '/source_payload/marked_content_sha256', '/source_payload/note'],
    ],
  ];

  for (const [name, overrides, paths] of cases) {
    it(name, async () => {
      const before = await countSealed(ctx);
      const res = await record(recordBody(overrides));
      expect(res.status).toBe(422);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.body.code).toBe('raw_content_rejected');
      expect(res.body.errors.map((e: any) => e.path).sort()).toEqual(paths);
      expect(await countSealed(ctx)).toBe(before);
      expect((await usageOf(ctx, tenantId)).actions_used).toBe(0);
      // The refused value is never echoed back.
      expect(res.text).not.toContain('Dear Mr. Smith');
      expect(res.text).not.toContain(base64Blob.slice(0, 24));
    });
  }

  it('never writes the rejected content to the database files', async () => {
    await record(recordBody({ source_payload: { content_sha256: 'MARMOT-4471 confidential launch plan' } }));
    for (const { name: file, bytes } of await ctx.storedBytes()) expect(bytes.includes(Buffer.from('MARMOT-4471')), file).toBe(false);
  });
});

describe('POST /v1/record/batch', () => {
  it('records a bare array, one sealed result per item, 201 when all are recorded', async () => {
    const items = [recordBody(), minimal('ca-sb942', 'license_revoked', ['license_sha256', 'revocation_notice_sha256']), recordBody({ occurred_at: '2024-12-30T08:00:00Z' })];
    const res = await batch(items);
    expect(res.status).toBe(201);
    expect(res.body.summary).toEqual({ total: 3, recorded: 3, failed: 0 });
    expect(res.body.failed_indexes).toEqual([]);
    expect(res.body.results.map((r: any) => [r.index, r.status])).toEqual([
      [0, 'recorded'],
      [1, 'recorded'],
      [2, 'recorded'],
    ]);
    for (const [i, r] of res.body.results.entries()) {
      expect(r.payload_hash).toBe(payloadHash(items[i]!));
      expect(r.payload_retention).toEqual(RETENTION);
      expect(r.verify_request.action_key).toBe(r.action_key);
      expect(r.idempotent_replayed).toBe(false);
    }
    expect(res.body.results[1].action_key).toMatch(/^ca-sb942:license-revoked:/);
    expect(await countSealed(ctx)).toBe(3);
  });

  it('answers 422 batch_must_be_array to a wrapped object, and stores nothing', async () => {
    const res = await batch({ records: [recordBody()] });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('batch_must_be_array');
    expect(await countSealed(ctx)).toBe(0);
  });

  it('answers 422 to an empty array and to more than 100 items', async () => {
    expect((await batch([])).body).toMatchObject({ status: 422, code: 'validation_failed' });
    const tooMany = await batch(Array.from({ length: 101 }, () => recordBody()));
    expect(tooMany.body).toMatchObject({ status: 422, code: 'validation_failed' });
    expect(await countSealed(ctx)).toBe(0);
  });

  it('reports mixed good and bad items per index with each problem, recording only the good ones (200)', async () => {
    const items = [
      recordBody(),
      recordBody({ source_payload: { content_sha256: 'raw words here' } }),
      recordBody({ occurred_at: '2024-12-01T00:00:00Z' }),
      { ...recordBody(), event_type: 'made_up' },
      'not an object',
    ];
    const res = await batch(items);
    expect(res.status).toBe(200);
    expect(res.body.summary).toEqual({ total: 5, recorded: 2, failed: 3 });
    expect(res.body.failed_indexes).toEqual([1, 3, 4]);
    const [ok0, raw1, ok2, bad3, bad4] = res.body.results;
    expect(ok0).toMatchObject({ index: 0, status: 'recorded' });
    expect(ok2).toMatchObject({ index: 2, status: 'recorded' });
    expect(raw1).toMatchObject({ index: 1, status: 'failed', problem: { status: 422, code: 'raw_content_rejected' } });
    expect(raw1.problem.errors).toEqual([expect.objectContaining({ in: 'body', path: '/source_payload/content_sha256' })]);
    expect(bad3).toMatchObject({ index: 3, status: 'failed', problem: { code: 'validation_failed', errors: [expect.objectContaining({ path: '/event_type' })] } });
    expect(bad4).toMatchObject({ index: 4, status: 'failed', problem: { code: 'validation_failed', errors: [expect.objectContaining({ path: '' })] } });
    expect(await countSealed(ctx)).toBe(2);
    expect((await usageOf(ctx, tenantId)).actions_used).toBe(2);
  });

  it('shares idempotency with the single endpoint: a repeated key inside a batch and later alone replays', async () => {
    const item = recordBody({ idempotency_key: 'rec-1' });
    const res = await batch([item, item]);
    expect(res.status).toBe(201);
    const [a, b] = res.body.results;
    expect(b.action_key).toBe(a.action_key);
    expect([a.idempotent_replayed, b.idempotent_replayed]).toEqual([false, true]);
    const alone = await record(item);
    expect(alone.headers.get('idempotent-replayed')).toBe('true');
    expect(alone.body.action_key).toBe(a.action_key);
    expect(await countSealed(ctx)).toBe(1);
  });
});

describe('record idempotency', () => {
  it('seals 20 concurrent identical requests once, with identical bodies, metered once', async () => {
    const body = recordBody({ idempotency_key: 'rec-concurrent' });
    const results = await Promise.all(Array.from({ length: 20 }, () => record(body)));
    for (const r of results) expect(r.status).toBe(201);
    expect(new Set(results.map((r) => r.text)).size).toBe(1);
    expect(results.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(19);
    expect(await countSealed(ctx)).toBe(1);
    expect((await usageOf(ctx, tenantId)).actions_used).toBe(1);
  });

  it('answers 422 to the same key with a different body', async () => {
    expect((await record(recordBody({ idempotency_key: 'rec-2' }))).status).toBe(201);
    const reused = await record(recordBody({ idempotency_key: 'rec-2', occurred_at: '2024-12-31T00:00:00Z' }));
    expect(reused.status).toBe(422);
    expect(reused.body.code).toBe('idempotency_key_reused');
    expect(await countSealed(ctx)).toBe(1);
  });
});
