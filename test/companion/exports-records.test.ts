/**
 * The records export and its summary against a real SQLite file, real seals and the real app:
 * half-open boundaries, keyset paging under concurrent writes, strict parameters, NDJSON, and
 * every exported record verifying offline with shared/ code alone.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import { failedChecks, verifyEvidence } from '../../shared/verify.ts';
import { EXPORT_PAGE_SIZE, NDJSON, recordLine } from '../../companion/exports/records-export.ts';
import { recordBody as storedRecordBody } from '../../companion/evidence/record-view.ts';
import type { SealedRecordRow } from '../../companion/evidence/store.ts';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { gateBody, recordBody } from './pack-fixtures.ts';

let ctx: TestContext;
let key: string;
let tenantId: string;
beforeEach(async () => {
  ctx = await createTestContext();
  // Production: no sandbox allowance, so a test can seal a few thousand records.
  ({ apiKey: key, tenantId } = ctx.productionTenant());
});
afterEach(async () => {
  await ctx.close();
});

const exportPage = (query = '', headers: Record<string, string> = {}) => ctx.request(`/tenant/exports/records${query}`, { key, headers });

/** NDJSON is read as text (the JSON helper would try to parse it as one document). */
async function exportNdjson(query = ''): Promise<{ headers: Headers; lines: any[] }> {
  const res = await ctx.app.request(`/tenant/exports/records${query}`, { headers: { 'x-service-key': key, accept: NDJSON } });
  expect(res.status).toBe(200);
  const text = await res.text();
  return { headers: res.headers, lines: text === '' ? [] : text.trimEnd().split('\n').map((l) => JSON.parse(l)) };
}

async function sealBatch(n: number, k = key): Promise<string[]> {
  const res = await ctx.request('/v1/record/batch', { json: Array.from({ length: n }, () => recordBody()), key: k });
  expect(res.status).toBe(201);
  return (res.body.results as any[]).map((r) => r.action_key as string);
}

async function sealAt(at: string): Promise<string> {
  ctx.clock.set(at);
  return (await sealBatch(1))[0]!;
}

/** Pages with next_cursor (from `cursor` on) until a page comes back empty; `between` runs after each page. */
async function pageAll(cursor: string | null = null, between: () => Promise<unknown> = async () => {}): Promise<{ keys: string[]; pages: number }> {
  const keys: string[] = [];
  let pages = 0;
  for (;;) {
    const res = await exportPage(cursor ? `?cursor=${encodeURIComponent(cursor)}` : '');
    expect(res.status).toBe(200);
    pages++;
    keys.push(...res.body.records.map((r: any) => r.action_key));
    if (res.body.records.length === 0) {
      expect(res.body.next_cursor).toBeNull();
      return { keys, pages };
    }
    cursor = res.body.next_cursor;
    await between();
  }
}

describe('GET /tenant/exports/records', () => {
  it('is half-open on the signed recorded_at: a record exactly at from is included, one exactly at to is excluded', async () => {
    const a = await sealAt('2025-03-01T10:00:00.000Z');
    const b = await sealAt('2025-03-01T11:00:00.000Z');
    const c = await sealAt('2025-03-01T12:00:00.000Z');
    const keysOf = async (q: string) => (await exportPage(q)).body.records.map((r: any) => r.action_key);
    expect(await keysOf('?from=2025-03-01T11:00:00.000Z&to=2025-03-01T12:00:00.000Z')).toEqual([b]);
    expect(await keysOf('?from=2025-03-01T10:00:00.000Z&to=2025-03-01T11:00:00.000Z')).toEqual([a]);
    expect(await keysOf('?from=2025-03-01T10:00:00.001Z&to=2025-03-01T12:00:00.001Z')).toEqual([b, c]);
    // Offsets are instants: 13:00+02:00 is 11:00Z.
    expect(await keysOf('?from=2025-03-01T13:00:00%2B02:00&to=2025-03-01T12:00:00.000Z')).toEqual([b]);
    expect(await keysOf('')).toEqual([a, b, c]);
  });

  it('answers an empty window (from equal to to, even on a record) with an empty page of the usual shape, JSON and NDJSON', async () => {
    await sealAt('2025-03-01T10:00:00.000Z');
    for (const query of ['?from=2025-03-01T10:00:00.000Z&to=2025-03-01T10:00:00.000Z', '?from=2025-03-01T12:00:00%2B02:00&to=2025-03-01T10:00:00Z']) {
      const res = await exportPage(query);
      expect(res.status, query).toBe(200);
      expect(res.body).toEqual({ notice: expect.any(String), from: '2025-03-01T10:00:00.000Z', to: '2025-03-01T10:00:00.000Z', records: [], count: 0, next_cursor: null });
      expect(res.headers.get('x-total-count')).toBe('0');
      expect(res.headers.get('link')).toBeNull();
      const nd = await exportNdjson(query);
      expect(nd.lines).toEqual([]);
      expect(nd.headers.get('x-next-cursor')).toBeNull();
    }
  });

  it('pages in stable chronological order and never skips or repeats a record while seals land between and during pages', async () => {
    const sealed: string[] = [];
    // Many records share a millisecond: the order within one recorded_at is tenant_seq.
    for (let i = 0; i < 12; i++) sealed.push(...(await sealBatch(100)));
    let round = 0;
    const { keys, pages } = await pageAll(null, async () => {
      if (round >= 4) return;
      ctx.clock.advance(round++ % 2); // some writes land in the same millisecond as the page end
      sealed.push(...(await sealBatch(100)));
    });
    expect(pages).toBeGreaterThan(2);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toEqual(sealed);

    // A page's end is fixed before its first row is written: seals committed while a partial
    // page streams (it spans several read chunks) go to the next page, never into both.
    expect(sealed.length).toBe(1600);
    const c1 = (await exportPage()).body.next_cursor as string;
    const second = await ctx.app.request(`/tenant/exports/records?cursor=${encodeURIComponent(c1)}`, { headers: { 'x-service-key': key, accept: NDJSON } });
    const reader = second.body!.getReader();
    const decoder = new TextDecoder();
    let text = decoder.decode((await reader.read()).value, { stream: true });
    const during = await sealBatch(100);
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += decoder.decode(r.value, { stream: true });
    const secondKeys = text.trim().split('\n').map((l) => JSON.parse(l).action_key);
    expect(secondKeys).toEqual(sealed.slice(EXPORT_PAGE_SIZE));
    const rest = await pageAll(second.headers.get('x-next-cursor'));
    expect(rest.keys).toEqual(during);
  });

  it('makes every record self-contained: each verify_request verifies offline against the published keys', async () => {
    await sealBatch(30);
    const tenant = ctx.productionTenant();
    await sealBatch(5, tenant.apiKey);
    const res = await exportPage();
    expect(res.body.count).toBe(30);
    expect(res.body.notice).toMatch(/not an authorization decision/);
    const keys = trustedKeySet(ctx.deps.keyring.jwks());
    for (const record of res.body.records) {
      expect(record.evidence_packet.seal.attestation.recorded_at).toBe(record.recorded_at);
      const result = await verifyEvidence(record.verify_request, keys);
      expect(failedChecks(result)).toEqual([]);
      expect(result.key_status).toBe('active');
    }
    // The same body GET /v1/records/{action_key} answers.
    const first = res.body.records[0];
    expect(first).toEqual((await ctx.request(`/v1/records/${first.action_key}`, { key })).body);
    // A tampered copy fails: the check above can fail.
    const forged = { ...res.body.records[0].verify_request, payload_hash: '0'.repeat(64) };
    expect((await verifyEvidence(forged, keys)).verified).toBe(false);
  });

  it('streams NDJSON when asked, with the next page in the Link header and the owner-review notice in a header', async () => {
    const sealed = await sealBatch(3);
    const res = await exportNdjson('?from=2020-01-01T00:00:00Z');
    expect(res.headers.get('content-type')).toBe(NDJSON);
    expect(res.headers.get('x-service-export-notice')).toMatch(/owner review/);
    expect(res.headers.get('x-total-count')).toBe('3');
    expect(res.lines.map((l) => l.action_key)).toEqual(sealed);
    const cursor = res.headers.get('x-next-cursor')!;
    expect(res.headers.get('link')).toBe(`</tenant/exports/records?from=2020-01-01T00%3A00%3A00.000Z&cursor=${cursor}>; rel="next"`);
    const last = await exportNdjson(`?from=2020-01-01T00:00:00Z&cursor=${cursor}`);
    expect(last.lines).toEqual([]);
    expect(last.headers.get('link')).toBeNull();
  });

  it('writes each record byte for byte as GET /v1/records serialises it, the signed attestation verbatim', async () => {
    const sealed = await sealBatch(2);
    for (const pack of ['law', 'defense'] as const) {
      const gate = await ctx.request('/v1/gate', { json: gateBody(pack), key });
      expect(gate.status).toBe(201);
      sealed.push(gate.body.action_key);
    }
    const res = await ctx.app.request('/tenant/exports/records', { headers: { 'x-service-key': key, accept: NDJSON } });
    const lines = (await res.text()).trimEnd().split('\n');
    const rows: SealedRecordRow[] = [];
    for (const k of sealed) rows.push((await ctx.store.evidence.findRecord(tenantId, k))!);
    expect(rows.some((r) => r.details !== '{}')).toBe(true); // gate decisions carry details
    expect(lines).toEqual(rows.map((r) => JSON.stringify(storedRecordBody(r))));
    for (const [i, r] of rows.entries()) {
      // The attestation text appears exactly as signed, in the packet and in the verify request.
      expect(lines[i]!.split(r.attestation)).toHaveLength(3);
    }
    // Details naming a member of the body itself: the general path gives the same bytes.
    for (const details of ['{"status":"from details","next_step":{"why":"é ✓"}}', '{"next_step":"x","7":"an index key"}', '{"next_step":{"why":"é ✓"}}']) {
      const odd = { ...rows[0]!, details };
      expect(recordLine({ ...odd, devKey: odd.devKey ? 1 : 0 })).toBe(JSON.stringify(storedRecordBody(odd)));
    }
  });

  it('rejects unknown parameters, bad timestamps, a range that ends before it starts and a forged cursor with 422 naming each field', async () => {
    const unknown = await exportPage('?from=2025-01-01T00:00:00Z&limit=5&tenant_id=ten_x');
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors.map((e: any) => e.path).sort()).toEqual(['/limit', '/tenant_id']);
    for (const [query, path] of [
      ['?from=yesterday', '/from'],
      ['?to=2025-01-01T00:00:00.0001Z', '/to'],
      ['?from=2025-01-02T00:00:00Z&to=2025-01-01T00:00:00Z', '/to'],
      ['?from=2025-01-01T00:00:00.001Z&to=2025-01-01T00:00:00Z', '/to'],
      ['?cursor=not-a-cursor', '/cursor'],
      [`?cursor=${Buffer.from(JSON.stringify([1, 'x', 1])).toString('base64url')}`, '/cursor'],
    ] as const) {
      const res = await exportPage(query);
      expect(res.status, query).toBe(422);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.body.errors.map((e: any) => e.path)).toEqual([path]);
    }
    expect((await ctx.request('/tenant/exports/records')).status).toBe(401);
  });
});

describe('GET /tenant/exports/records with filters', () => {
  it('returns only the records of the pack, kind and decision asked for, counts them, and keeps the filters in the next link', async () => {
    const [record] = await sealBatch(1);
    const law = await ctx.request('/v1/gate', { json: gateBody('law'), key });
    const medicine = await ctx.request('/v1/gate', { json: gateBody('medicine'), key });
    expect([law.status, medicine.status]).toEqual([201, 201]);
    const keys = async (query: string) => {
      const res = await exportPage(query);
      expect(res.status, query).toBe(200);
      return { keys: res.body.records.map((r: any) => r.action_key), total: res.headers.get('x-total-count'), link: res.headers.get('link') };
    };
    expect(await keys('?pack=law')).toMatchObject({ keys: [law.body.action_key], total: '1' });
    expect((await keys('?kind=record')).keys).toEqual([record]);
    expect((await keys('?kind=gate')).keys).toEqual([law.body.action_key, medicine.body.action_key]);
    expect((await keys(`?kind=gate&decision=${law.body.decision}&pack=medicine`)).keys).toEqual(
      medicine.body.decision === law.body.decision ? [medicine.body.action_key] : [],
    );
    expect((await keys('?pack=law')).link).toMatch(/[?&]pack=law&cursor=/);
    // The same page shape, record for record, as the unfiltered export.
    const all = (await exportPage()).body.records;
    expect((await exportPage('?pack=law')).body.records).toEqual(all.filter((r: any) => r.pack === 'law'));
    const nd = await exportNdjson('?kind=record');
    expect(nd.lines.map((l) => l.action_key)).toEqual([record]);
  });

  it('refuses an empty or overlong filter at its field', async () => {
    const res = await exportPage(`?pack=&decision=${'x'.repeat(65)}`);
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: any) => e.path).sort()).toEqual(['/decision', '/pack']);
  });
});

describe('sealer clock', () => {
  it("never stamps a record earlier than its tenant's log head, even when the server clock steps back", async () => {
    const first = await sealAt('2025-05-01T12:00:00.000Z');
    ctx.clock.set('2025-05-01T11:59:00.000Z'); // NTP steps the clock back a minute
    const [second] = await sealBatch(1);
    const rows = (await exportPage()).body.records;
    expect(rows.map((r: any) => r.action_key)).toEqual([first, second]);
    expect(rows[1].recorded_at).toBe('2025-05-01T12:00:00.000Z');
  });
});

describe('GET /tenant/exports/records/summary', () => {
  it('counts per pack: decisions by seal kind, review states, events by type, anchored in a closed epoch vs not yet', async () => {
    await sealBatch(2);
    const disclosure = recordBody({ event_type: 'disclosure_rendered', source_payload: { disclosure_sha256: 'a'.repeat(64) }, metadata: {} });
    expect((await ctx.request('/v1/record', { json: disclosure, key })).status).toBe(201);
    const gate = await ctx.request('/v1/gate', { json: gateBody('law'), key });
    expect(gate.status).toBe(201);
    const review = await ctx.request('/v1/reviews', {
      json: { pack: 'law', action_key: gate.body.action_key, reviewer: 'partner-7', decision: 'approved' },
      key,
    });
    expect(review.status).toBe(201);
    await ctx.request('/v1/gate', { json: gateBody('defense'), key });

    const res = await ctx.request('/tenant/exports/records/summary', { key });
    expect(res.status).toBe(200);
    const byPack = Object.fromEntries(res.body.packs.map((p: any) => [p.pack, p]));
    expect(byPack['eu-ai-act'].records_by_event_type).toEqual({ output_marked: 2, disclosure_rendered: 1 });
    expect(byPack['eu-ai-act'].decisions_by_kind).toEqual({ record: { recorded: 3 } });
    expect(byPack.law.decisions_by_kind).toEqual({ gate: { [gate.body.decision]: 1 }, review: { approved: 1 } });
    expect(byPack.law.reviews).toMatchObject({ approved: 1, pending: 0 });
    expect(byPack.defense.reviews).toMatchObject({ pending: 1, approved: 0 });
    expect(byPack.law.anchoring).toEqual({ anchored: 0, not_yet_anchored: 2 });
    expect(byPack.medicine.records).toBe(0);
    expect(res.body.records).toBe(6);
    expect((await ctx.request('/tenant/exports/records/summary?x=1', { key })).status).toBe(422);

    // The hourly epoch anchors everything sealed before it; a later seal waits for the next one.
    ctx.clock.set('2025-01-01T01:00:00.000Z');
    expect(await ctx.deps.workers.epochs.closeDue()).toHaveLength(1);
    await ctx.request('/v1/gate', { json: gateBody('law'), key });
    const after = await ctx.request('/tenant/exports/records/summary', { key });
    const law = after.body.packs.find((p: any) => p.pack === 'law');
    expect(law.anchoring).toEqual({ anchored: 2, not_yet_anchored: 1 });
    expect(after.body.packs.find((p: any) => p.pack === 'eu-ai-act').anchoring).toEqual({ anchored: 3, not_yet_anchored: 0 });
  });
});
