/**
 * The exports store (records keyset pages, coverage, decision counts, review coverage, schema
 * bindings and validation runs) behaves the same on SQLite and PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import { createPostgresExportStore } from '../../../companion/exports/postgres-store.ts';
import { createSqliteExportStore } from '../../../companion/exports/sqlite-store.ts';
import type { BindingRow, ExportRecordRow, ExportStore, RecordFilter, RecordPosition, RunRow } from '../../../companion/exports/store.ts';
import { databasePerCase, engines, lockWaitBefore, seedTenants } from './engines.ts';
import type { StoreFactories } from './engines.ts';

const EXPORTS: StoreFactories<ExportStore> = { sqlite: createSqliteExportStore, postgres: createPostgresExportStore };
const AT = '2025-01-01T00:00:00.000Z';
const H = (c: string) => c.repeat(64);

interface Seal {
  seq: number;
  at: string;
  tenant?: string;
  vertical?: string;
  type?: string;
  pack?: string;
  kind?: string;
  decision?: string | null;
  status?: string;
  route?: string | null;
  devKey?: 0 | 1;
  credits?: number;
}

/** <vertical>:<type>:<26-character ULID>, unique across tenants. */
const keyOf = (s: Seal) => `${s.vertical ?? 'hr'}:${s.type ?? 'offer_letter'}:01J${(s.tenant ?? 'ten_a').slice(-1).toUpperCase()}${String(s.seq).padStart(22, '0')}`;

/** The row the store should answer for a seal, every field as stored. */
const expected = (s: Seal): ExportRecordRow => ({
  tenantSeq: s.seq,
  actionKey: keyOf(s),
  vertical: s.vertical ?? 'hr',
  pack: s.pack ?? 'hr-core',
  kind: s.kind ?? 'gate',
  decision: s.decision === undefined ? 'allow' : s.decision,
  status: s.status ?? 'sealed',
  reviewRoute: s.route === undefined ? null : s.route,
  payloadHash: H('a'),
  packetHash: H('b'),
  attestation: `{"seq":${s.seq},"note":"é ✓ \\u0000"}`,
  attestationHash: H('c'),
  signature: `sig-${s.seq}`,
  keyId: 'key_1',
  devKey: s.devKey ?? 1,
  recordedAt: s.at,
  credits: s.credits ?? 2,
  details: `{"next_step":"n${s.seq}"}`,
});

const pos = (s: Seal): RecordPosition => ({ recordedAt: s.at, tenantSeq: s.seq });

describe.each(engines())('exports store on $name', (engine) => {
  const db = databasePerCase(engine, (fresh) => seedTenants(fresh, ['ten_a', 'ten_b'], AT));

  const seal = async (s: Seal) => {
    const e = expected(s);
    await db.exec(
      `INSERT INTO sealed_records (tenant_id, tenant_seq, action_key, vertical, pack, kind, decision, status, review_route, payload_hash,
         packet_hash, attestation, attestation_hash, signature, key_id, dev_key, recorded_at, credits, details)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      s.tenant ?? 'ten_a', e.tenantSeq, e.actionKey, e.vertical, e.pack, e.kind, e.decision, e.status, e.reviewRoute, e.payloadHash,
      e.packetHash, e.attestation, e.attestationHash, e.signature, e.keyId, e.devKey, e.recordedAt, e.credits, e.details,
    );
  };

  // Tenant A's log, inserted out of tenant_seq order (ids do not follow the keyset), with runs
  // of equal recorded_at that page boundaries must split by tenant_seq; tenant B interleaved.
  const T = (n: number) => `2025-03-01T10:00:0${n}.000Z`;
  const LOG: Seal[] = [
    { seq: 0, at: '2025-02-28T23:59:59.999Z' }, // before the range
    { seq: 1, at: T(1), pack: 'hr-core', kind: 'gate', decision: 'allow' },
    { seq: 2, at: T(1), pack: 'fin-core', kind: 'gate', decision: 'block', devKey: 0, credits: 0 },
    { seq: 3, at: T(1), pack: 'hr-core', kind: 'record', decision: null, route: 'slack:#hr', credits: 7 },
    { seq: 4, at: T(2), pack: 'hr-core', kind: 'gate', decision: 'block' },
    { seq: 5, at: T(2), pack: 'fin-core', kind: 'gate', decision: 'allow' },
    { seq: 6, at: T(3), pack: 'hr-core', kind: 'gate', decision: 'review' },
    { seq: 7, at: T(3), pack: 'hr-core', kind: 'gate', decision: 'allow' },
    { seq: 8, at: T(4), pack: 'fin-core', kind: 'record', decision: null },
    { seq: 9, at: T(5) }, // at `to`: outside the half-open range
  ];
  const FROM = T(1);
  const TO = T(5);
  const inRange = LOG.filter((s) => s.at >= FROM && s.at < TO);
  const seedLog = async () => {
    for (const s of [LOG[5], LOG[2], LOG[9], LOG[0], LOG[7], LOG[1], LOG[3], LOG[8], LOG[4], LOG[6]]) await seal(s!);
    await seal({ seq: 1, at: T(1), tenant: 'ten_b' });
    await seal({ seq: 2, at: T(2), tenant: 'ten_b', decision: 'block' });
  };

  /** Every page of `size` through pageEnd, each read in chunks of `chunk` through records. */
  const walk = async (store: ExportStore, size: number, chunk: number, filter?: RecordFilter) => {
    const pages: { end: RecordPosition; rows: ExportRecordRow[] }[] = [];
    let after: RecordPosition | undefined;
    for (;;) {
      const end = await store.pageEnd('ten_a', { from: FROM, to: TO, after, filter }, size);
      if (!end) return pages;
      const rows: ExportRecordRow[] = [];
      let cursor = after;
      for (;;) {
        const got = await store.records('ten_a', { from: FROM, after: cursor, end, filter }, chunk);
        expect(got.length).toBeLessThanOrEqual(chunk);
        rows.push(...got);
        if (got.length < chunk) break;
        cursor = pos({ seq: got.at(-1)!.tenantSeq, at: got.at(-1)!.recordedAt });
      }
      pages.push({ end, rows });
      after = end;
      if (pages.length > 20) throw new Error('pagination does not advance');
    }
  };

  it('pages the range by (recorded_at, tenant_seq), splitting equal recorded_at across page and chunk boundaries', async () => {
    await seedLog();
    const store = db.store(EXPORTS);
    const pages = await walk(store, 2, 1);
    expect(pages.map((p) => p.end)).toEqual([pos(LOG[2]!), pos(LOG[4]!), pos(LOG[6]!), pos(LOG[8]!)]);
    expect(pages.map((p) => p.rows.map((r) => r.tenantSeq))).toEqual([[1, 2], [3, 4], [5, 6], [7, 8]]);
    // Every field as stored: null decision and route, dev_key 0/1 as numbers, the attestation verbatim.
    expect(pages.flatMap((p) => p.rows)).toEqual(inRange.map(expected));

    // Other sizes cover the same records once each, in the same order.
    for (const [size, chunk] of [[3, 2], [4, 4], [100, 3], [1, 1]] as const) {
      const rows = (await walk(store, size, chunk)).flatMap((p) => p.rows);
      expect(rows.map((r) => r.tenantSeq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    }
  });

  it('answers pageEnd with the limit-th record, the last when fewer remain, undefined when none', async () => {
    await seedLog();
    const store = db.store(EXPORTS);
    expect(await store.pageEnd('ten_a', { from: FROM, to: TO, after: undefined }, 3)).toEqual(pos(LOG[3]!));
    // Strictly after a position inside a run of equal recorded_at.
    expect(await store.pageEnd('ten_a', { from: FROM, to: TO, after: pos(LOG[1]!) }, 1)).toEqual(pos(LOG[2]!));
    expect(await store.pageEnd('ten_a', { from: FROM, to: TO, after: pos(LOG[5]!) }, 50)).toEqual(pos(LOG[8]!));
    expect(await store.pageEnd('ten_a', { from: FROM, to: TO, after: pos(LOG[8]!) }, 50)).toBeUndefined();
    // `from` inclusive, `to` exclusive.
    expect(await store.pageEnd('ten_a', { from: T(5), to: '2025-03-02T00:00:00.000Z', after: undefined }, 5)).toEqual(pos(LOG[9]!));
    expect(await store.pageEnd('ten_a', { from: T(2), to: T(3), after: undefined }, 5)).toEqual(pos(LOG[5]!));
    expect(await store.pageEnd('ten_a', { from: '2025-04-01T00:00:00.000Z', to: '2025-05-01T00:00:00.000Z', after: undefined }, 5)).toBeUndefined();
    // `after` below `from` still starts at `from`.
    expect(await store.pageEnd('ten_a', { from: FROM, to: TO, after: pos(LOG[0]!) }, 1)).toEqual(pos(LOG[1]!));
    expect(await store.pageEnd('ten_c', { from: FROM, to: TO, after: undefined }, 5)).toBeUndefined();
  });

  it('reads records strictly after `after` up to and including `end`, at most `limit`, as a plain array', async () => {
    await seedLog();
    const store = db.store(EXPORTS);
    const first = await store.records('ten_a', { from: FROM, after: undefined, end: pos(LOG[4]!) }, 10);
    expect(Object.getPrototypeOf(first)).toBe(Array.prototype);
    expect(first).toEqual([LOG[1], LOG[2], LOG[3], LOG[4]].map((s) => expected(s!)));
    expect((await store.records('ten_a', { from: FROM, after: undefined, end: pos(LOG[4]!) }, 2)).map((r) => r.tenantSeq)).toEqual([1, 2]);
    expect((await store.records('ten_a', { from: FROM, after: pos(LOG[2]!), end: pos(LOG[7]!) }, 10)).map((r) => r.tenantSeq)).toEqual([3, 4, 5, 6, 7]);
    // An end inside a run of equal recorded_at stops at its tenant_seq.
    expect((await store.records('ten_a', { from: FROM, after: undefined, end: pos(LOG[2]!) }, 10)).map((r) => r.tenantSeq)).toEqual([1, 2]);
    expect(await store.records('ten_a', { from: FROM, after: pos(LOG[4]!), end: pos(LOG[4]!) }, 10)).toEqual([]);
    expect(await store.records('ten_a', { from: FROM, after: undefined, end: pos(LOG[8]!) }, 0)).toEqual([]);
    // Only the caller's tenant.
    expect((await store.records('ten_b', { from: FROM, after: undefined, end: { recordedAt: TO, tenantSeq: 99 } }, 10)).map((r) => r.tenantSeq)).toEqual([1, 2]);
  });

  it('filters pages, records and counts by pack, kind and decision, alone and together', async () => {
    await seedLog();
    const store = db.store(EXPORTS);
    const cases: [RecordFilter, number[]][] = [
      [{}, [1, 2, 3, 4, 5, 6, 7, 8]],
      [{ pack: undefined, kind: undefined, decision: undefined }, [1, 2, 3, 4, 5, 6, 7, 8]],
      [{ pack: 'fin-core' }, [2, 5, 8]],
      [{ kind: 'record' }, [3, 8]],
      [{ decision: 'allow' }, [1, 5, 7]],
      [{ pack: 'hr-core', decision: 'block' }, [4]],
      [{ pack: 'hr-core', kind: 'gate', decision: 'allow' }, [1, 7]],
      [{ pack: 'fin-core', kind: 'gate' }, [2, 5]],
      [{ kind: 'record', decision: 'allow' }, []],
      [{ pack: 'nope' }, []],
    ];
    for (const [filter, seqs] of cases) {
      for (const [size, chunk] of [[1, 1], [2, 1], [100, 2]] as const) {
        const pages = await walk(store, size, chunk, filter);
        expect(pages.flatMap((p) => p.rows)).toEqual(LOG.filter((s) => seqs.includes(s.seq)).map(expected));
        expect(pages.map((p) => p.rows.at(-1)!.tenantSeq)).toEqual(pages.map((p) => p.end.tenantSeq));
      }
      expect(await store.countRange('ten_a', FROM, TO, filter)).toBe(seqs.length);
    }
    // A filtered page end is the limit-th matching record, not the limit-th record.
    expect(await store.pageEnd('ten_a', { from: FROM, to: TO, after: undefined, filter: { pack: 'fin-core' } }, 2)).toEqual(pos(LOG[5]!));
    expect(await store.pageEnd('ten_a', { from: FROM, to: TO, after: pos(LOG[5]!), filter: { pack: 'fin-core' } }, 2)).toEqual(pos(LOG[8]!));
    // records applies the filter between after and end.
    const rows = await store.records('ten_a', { from: FROM, after: pos(LOG[1]!), end: pos(LOG[7]!), filter: { decision: 'allow' } }, 10);
    expect(rows.map((r) => r.tenantSeq)).toEqual([5, 7]);
  });

  it('counts a half-open range per tenant', async () => {
    await seedLog();
    const store = db.store(EXPORTS);
    expect(await store.countRange('ten_a', FROM, TO)).toBe(8);
    expect(await store.countRange('ten_a', '2000-01-01T00:00:00.000Z', '2100-01-01T00:00:00.000Z')).toBe(10);
    expect(await store.countRange('ten_a', T(2), T(3))).toBe(2);
    expect(await store.countRange('ten_b', FROM, TO)).toBe(2);
    expect(await store.countRange('ten_b', FROM, TO, { decision: 'block' })).toBe(1);
    expect(await store.countRange('ten_a', T(6), T(7))).toBe(0);
  });

  it('counts gate decisions per hour or day bucket, records without a decision left out', async () => {
    const seals: Seal[] = [
      { seq: 0, at: '2025-03-01T09:59:59.999Z', decision: 'allow' }, // before `from`
      { seq: 1, at: '2025-03-01T10:00:00.000Z', decision: 'allow' },
      { seq: 2, at: '2025-03-01T10:59:59.999Z', decision: 'allow' },
      { seq: 3, at: '2025-03-01T10:30:00.000Z', decision: 'block' },
      { seq: 4, at: '2025-03-01T11:00:00.000Z', decision: 'allow' },
      { seq: 5, at: '2025-03-01T11:10:00.000Z', decision: null, kind: 'record' },
      { seq: 6, at: '2025-03-02T00:00:00.000Z', decision: 'review' },
      { seq: 7, at: '2025-03-03T00:00:00.000Z', decision: 'allow' }, // at `to`
    ];
    for (const s of seals) await seal(s);
    await seal({ seq: 1, at: '2025-03-01T10:00:00.000Z', tenant: 'ten_b', decision: 'allow' });
    const store = db.store(EXPORTS);
    const from = '2025-03-01T10:00:00.000Z';
    const to = '2025-03-03T00:00:00.000Z';
    expect(await store.decisionCounts('ten_a', from, to, 13)).toEqual([
      { bucket: '2025-03-01T10', decision: 'allow', count: 2 },
      { bucket: '2025-03-01T10', decision: 'block', count: 1 },
      { bucket: '2025-03-01T11', decision: 'allow', count: 1 },
      { bucket: '2025-03-02T00', decision: 'review', count: 1 },
    ]);
    expect(await store.decisionCounts('ten_a', from, to, 10)).toEqual([
      { bucket: '2025-03-01', decision: 'allow', count: 3 },
      { bucket: '2025-03-01', decision: 'block', count: 1 },
      { bucket: '2025-03-02', decision: 'review', count: 1 },
    ]);
    expect(await store.decisionCounts('ten_a', '2025-04-01T00:00:00.000Z', '2025-05-01T00:00:00.000Z', 10)).toEqual([]);
  });

  it('groups coverage by pack, kind, action type, decision (null first) and status', async () => {
    const seals: Seal[] = [
      { seq: 0, at: T(3), pack: 'hr-core', kind: 'gate', type: 'offer_letter', decision: 'allow' },
      { seq: 1, at: T(1), pack: 'hr-core', kind: 'gate', type: 'offer_letter', decision: 'allow' },
      { seq: 2, at: T(2), pack: 'hr-core', kind: 'gate', type: 'offer_letter', decision: 'allow', status: 'needs_review' },
      { seq: 3, at: T(4), pack: 'hr-core', kind: 'gate', type: 'offer_letter', decision: null },
      { seq: 4, at: T(2), pack: 'hr-core', kind: 'gate', type: 'offer_letter', decision: 'block' },
      { seq: 5, at: T(5), pack: 'hr-core', kind: 'record', type: 'review.approved', decision: null },
      { seq: 6, at: T(1), pack: 'fin-core', kind: 'gate', vertical: 'finance', type: 'wire', decision: 'block' },
      { seq: 7, at: T(6), pack: 'hr-core', kind: 'gate', type: 'a', decision: 'allow' },
    ];
    for (const s of seals) await seal(s);
    await seal({ seq: 1, at: T(1), tenant: 'ten_b', pack: 'zz' });
    const store = db.store(EXPORTS);
    const row = (pack: string, kind: string, actionType: string, decision: string | null, status: string, count: number, first: string, last: string) => ({
      pack, kind, actionType, decision, status, count, firstRecordedAt: first, lastRecordedAt: last,
    });
    expect(await store.coverage('ten_a')).toEqual([
      row('fin-core', 'gate', 'wire', 'block', 'sealed', 1, T(1), T(1)),
      row('hr-core', 'gate', 'a', 'allow', 'sealed', 1, T(6), T(6)),
      row('hr-core', 'gate', 'offer_letter', null, 'sealed', 1, T(4), T(4)),
      row('hr-core', 'gate', 'offer_letter', 'allow', 'needs_review', 1, T(2), T(2)),
      row('hr-core', 'gate', 'offer_letter', 'allow', 'sealed', 2, T(1), T(3)),
      row('hr-core', 'gate', 'offer_letter', 'block', 'sealed', 1, T(2), T(2)),
      row('hr-core', 'record', 'review.approved', null, 'sealed', 1, T(5), T(5)),
    ]);
    expect(await store.coverage('ten_c')).toEqual([]);
  });

  it('counts records per pack below a tenant_seq', async () => {
    await seedLog();
    const store = db.store(EXPORTS);
    const below = await store.recordsByPackBelowSeq('ten_a', 5);
    expect([...below]).toEqual([['fin-core', 1], ['hr-core', 4]]);
    expect([...(await store.recordsByPackBelowSeq('ten_a', 100))]).toEqual([['fin-core', 3], ['hr-core', 7]]);
    expect([...(await store.recordsByPackBelowSeq('ten_b', 2))]).toEqual([['hr-core', 1]]);
    expect((await store.recordsByPackBelowSeq('ten_a', 0)).size).toBe(0);
  });

  it('iterates the per-pack counts in pack order', async () => {
    const packs = ['pk-m', 'pk-c', 'pk-x', 'pk-a', 'pk-q', 'pk-h', 'pk-z', 'pk-e', 'pk-t', 'pk-b'];
    for (const [i, pack] of packs.entries()) {
      for (let k = 0; k <= i % 3; k++) await seal({ seq: i * 3 + k, at: T(1), pack });
    }
    const counts = [...(await db.store(EXPORTS).recordsByPackBelowSeq('ten_a', 1000))];
    expect(counts).toEqual([...packs].sort().map((p) => [p, (packs.indexOf(p) % 3) + 1]));
  });

  it('counts review items per pack and status, open items past their window as overdue', async () => {
    const NOW = '2025-03-10T00:00:00.000Z';
    const item = async (seq: number, pack: string, status: string, expiresAt: string, tenant = 'ten_a') => {
      const s: Seal = { seq, at: '2025-03-01T00:00:00.000Z', tenant, pack, status: 'needs_review', decision: 'review' };
      await seal(s);
      const open = status === 'pending';
      let receipt: string | null = null;
      if (!open) {
        const r: Seal = { seq: seq + 1000, at: '2025-03-02T00:00:00.000Z', tenant, pack, kind: 'record', type: 'review.receipt' };
        await seal(r);
        receipt = keyOf(r);
      }
      await db.exec(
        `INSERT INTO review_items (tenant_id, action_key, pack, vertical, action_type, review_route, next_step, status, created_at, expires_at,
           window_seconds, decided_at, receipt_action_key, updated_at)
         VALUES (?, ?, ?, 'hr', 'offer_letter', NULL, 'wait', ?, ?, ?, 3600, ?, ?, ?)`,
        tenant, keyOf(s), pack, status, s.at, expiresAt, open ? null : '2025-03-02T00:00:00.000Z', receipt, s.at,
      );
    };
    await item(1, 'hr-core', 'pending', '2025-03-09T00:00:00.000Z'); // overdue
    await item(2, 'hr-core', 'pending', NOW); // window ends exactly now: overdue
    await item(3, 'hr-core', 'pending', '2025-03-11T00:00:00.000Z');
    await item(4, 'hr-core', 'escalated', '2025-03-05T00:00:00.000Z'); // overdue
    await item(5, 'hr-core', 'approved', '2025-03-05T00:00:00.000Z'); // decided: never overdue
    await item(6, 'fin-core', 'rejected', '2025-03-05T00:00:00.000Z');
    await item(7, 'fin-core', 'expired', '2025-03-05T00:00:00.000Z');
    await item(8, 'fin-core', 'escalated', '2025-03-12T00:00:00.000Z');
    await item(9, 'hr-core', 'pending', '2025-03-01T01:00:00.000Z', 'ten_b');
    const store = db.store(EXPORTS);
    expect(await store.reviewCoverage('ten_a', NOW)).toEqual([
      { pack: 'fin-core', status: 'escalated', count: 1, overdue: 0 },
      { pack: 'fin-core', status: 'expired', count: 1, overdue: 0 },
      { pack: 'fin-core', status: 'rejected', count: 1, overdue: 0 },
      { pack: 'hr-core', status: 'approved', count: 1, overdue: 0 },
      { pack: 'hr-core', status: 'escalated', count: 1, overdue: 1 },
      { pack: 'hr-core', status: 'pending', count: 3, overdue: 2 },
    ]);
    expect(await store.reviewCoverage('ten_b', NOW)).toEqual([{ pack: 'hr-core', status: 'pending', count: 1, overdue: 1 }]);
    expect(await store.reviewCoverage('ten_c', NOW)).toEqual([]);
  });

  it('lists the newest records of a pack first, ties by tenant_seq', async () => {
    await seedLog();
    const store = db.store(EXPORTS);
    const recent = await store.recentRecords('ten_a', 'hr-core', 4);
    const view = (s: Seal) => ({ actionKey: keyOf(s), vertical: 'hr', kind: s.kind ?? 'gate', recordedAt: s.at });
    expect(recent).toEqual([LOG[9], LOG[7], LOG[6], LOG[4]].map((s) => view(s!)));
    expect((await store.recentRecords('ten_a', 'fin-core', 10)).map((r) => r.actionKey)).toEqual([LOG[8], LOG[5], LOG[2]].map((s) => keyOf(s!)));
    expect((await store.recentRecords('ten_b', 'hr-core', 10)).map((r) => r.recordedAt)).toEqual([T(2), T(1)]);
    expect(await store.recentRecords('ten_a', 'nope', 10)).toEqual([]);
  });

  const binding = (key: string, over: Partial<BindingRow> = {}): BindingRow => ({
    bindingKey: key,
    tenantId: 'ten_a',
    exportKind: 'oscal',
    adapterKey: 'oscal-1',
    schemaProfileKey: 'oscal-1.1.2',
    schemaDigest: H('d'),
    bindingDigest: H('e'),
    active: true,
    createdAt: AT,
    supersededAt: null,
    ...over,
  });

  it('records, finds, supersedes and lists schema bindings', async () => {
    const store = db.store(EXPORTS);
    const old = binding('vsb_01', { active: false, supersededAt: '2025-01-02T00:00:00.000Z', createdAt: '2025-01-01T00:00:00.000Z' });
    const cur = binding('vsb_02', { createdAt: '2025-01-02T00:00:00.000Z' });
    const other = binding('vsb_03', { adapterKey: 'oscal-2', createdAt: '2025-01-02T00:00:00.000Z' });
    const csv = binding('vsb_04', { exportKind: 'csv', adapterKey: 'csv-1', createdAt: '2025-01-03T00:00:00.000Z' });
    const foreign = binding('vsb_05', { tenantId: 'ten_b' });
    // The two created together inserted against key order: the tie is broken by binding_key, not by insertion.
    for (const b of [old, other, cur, csv, foreign]) await store.insertBinding(b);

    expect(await store.findBinding('ten_a', 'vsb_01')).toEqual(old);
    expect(await store.findBinding('ten_a', 'vsb_02')).toEqual(cur);
    expect(await store.findBinding('ten_a', 'vsb_05')).toBeUndefined();
    expect(await store.findBinding('ten_a', 'vsb_99')).toBeUndefined();
    expect(await store.activeBinding('ten_a', 'oscal', 'oscal-1')).toEqual(cur);
    expect(await store.activeBinding('ten_a', 'oscal', 'oscal-2')).toEqual(other);
    expect(await store.activeBinding('ten_a', 'csv', 'oscal-1')).toBeUndefined();
    expect(await store.activeBinding('ten_b', 'oscal', 'oscal-1')).toEqual(foreign);

    // A second active binding for the same kind and adapter is refused.
    await expect(store.insertBinding(binding('vsb_06'))).rejects.toThrow();
    // Newest first, ties by binding_key descending.
    expect((await store.listBindings('ten_a', { activeOnly: false })).map((b) => b.bindingKey)).toEqual(['vsb_04', 'vsb_03', 'vsb_02', 'vsb_01']);
    expect((await store.listBindings('ten_a', { activeOnly: true })).map((b) => b.bindingKey)).toEqual(['vsb_04', 'vsb_03', 'vsb_02']);
    expect(await store.listBindings('ten_a', { exportKind: 'oscal', adapterKey: 'oscal-1', activeOnly: false })).toEqual([cur, old]);
    expect((await store.listBindings('ten_a', { exportKind: 'oscal', activeOnly: true })).map((b) => b.bindingKey)).toEqual(['vsb_03', 'vsb_02']);
    expect((await store.listBindings('ten_a', { adapterKey: 'csv-1', activeOnly: false })).map((b) => b.bindingKey)).toEqual(['vsb_04']);
    expect((await store.listBindings('ten_a', { exportKind: undefined, adapterKey: undefined, activeOnly: false })).length).toBe(4);
    expect(await store.listBindings('ten_c', { activeOnly: false })).toEqual([]);

    const at = '2025-01-05T00:00:00.000Z';
    expect(await store.supersedeBinding('ten_b', 'vsb_02', at)).toBe(false); // another tenant's key
    expect(await store.supersedeBinding('ten_a', 'vsb_01', at)).toBe(false); // already superseded
    expect(await store.findBinding('ten_a', 'vsb_01')).toEqual(old);
    expect(await store.supersedeBinding('ten_a', 'vsb_02', at)).toBe(true);
    expect(await store.supersedeBinding('ten_a', 'vsb_02', '2025-01-06T00:00:00.000Z')).toBe(false);
    expect(await store.findBinding('ten_a', 'vsb_02')).toEqual({ ...cur, active: false, supersededAt: at });
    expect(await store.activeBinding('ten_a', 'oscal', 'oscal-1')).toBeUndefined();
    // Now a new active one fits.
    await store.insertBinding(binding('vsb_06', { createdAt: at }));
    expect((await store.activeBinding('ten_a', 'oscal', 'oscal-1'))?.bindingKey).toBe('vsb_06');
  });

  const run = (key: string, over: Partial<RunRow> = {}): RunRow => ({
    runKey: key,
    tenantId: 'ten_a',
    exportKind: 'oscal',
    adapterKey: 'oscal-1',
    bindingKey: null,
    schemaProfileKey: 'oscal-1.1.2',
    schemaDigest: H('d'),
    exportDigest: H('f'),
    validationStatus: 'passed',
    errorCount: 0,
    createdAt: AT,
    ...over,
  });

  it('records, finds, lists and counts validation runs', async () => {
    const store = db.store(EXPORTS);
    await store.insertBinding(binding('vsb_01'));
    const runs = [
      run('vrun_03', { bindingKey: 'vsb_01' }),
      run('vrun_01'),
      run('vrun_05', { validationStatus: 'failed', errorCount: 12, bindingKey: 'vsb_01' }),
      run('vrun_02', { exportKind: 'csv', adapterKey: 'csv-1', validationStatus: 'failed', errorCount: 1 }),
      run('vrun_04', { adapterKey: 'oscal-2' }),
    ];
    for (const r of runs) await store.insertRun(r);
    await store.insertRun(run('vrun_06', { tenantId: 'ten_b' }));
    await expect(store.insertRun(run('vrun_01'))).rejects.toThrow();

    expect(await store.findRun('ten_a', 'vrun_05')).toEqual(runs[2]);
    expect(await store.findRun('ten_a', 'vrun_01')).toEqual(runs[1]);
    expect(await store.findRun('ten_a', 'vrun_06')).toBeUndefined();

    const keys = async (f: Parameters<ExportStore['listRuns']>[1], limit: number) => (await store.listRuns('ten_a', f, limit)).map((r) => r.runKey);
    expect(await store.listRuns('ten_a', {}, 2)).toEqual([runs[2], runs[4]]);
    expect(await keys({}, 10)).toEqual(['vrun_05', 'vrun_04', 'vrun_03', 'vrun_02', 'vrun_01']);
    expect(await keys({ exportKind: 'oscal' }, 10)).toEqual(['vrun_05', 'vrun_04', 'vrun_03', 'vrun_01']);
    expect(await keys({ exportKind: 'oscal' }, 1)).toEqual(['vrun_05']);
    expect(await keys({ adapterKey: 'oscal-2' }, 10)).toEqual(['vrun_04']);
    expect(await keys({ bindingKey: 'vsb_01' }, 10)).toEqual(['vrun_05', 'vrun_03']);
    expect(await keys({ validationStatus: 'failed' }, 10)).toEqual(['vrun_05', 'vrun_02']);
    expect(await keys({ exportKind: 'oscal', adapterKey: 'oscal-1', bindingKey: 'vsb_01', validationStatus: 'passed' }, 10)).toEqual(['vrun_03']);
    expect(await keys({ exportKind: undefined, adapterKey: undefined, bindingKey: undefined, validationStatus: undefined }, 10)).toHaveLength(5);
    expect(await keys({ exportKind: 'nope' }, 10)).toEqual([]);

    expect(await store.countRuns('ten_a', {})).toEqual({ total: 5, passed: 3, failed: 2 });
    expect(await store.countRuns('ten_a', { exportKind: 'oscal' })).toEqual({ total: 4, passed: 3, failed: 1 });
    expect(await store.countRuns('ten_a', { bindingKey: 'vsb_01' })).toEqual({ total: 2, passed: 1, failed: 1 });
    expect(await store.countRuns('ten_a', { validationStatus: 'failed', adapterKey: 'csv-1' })).toEqual({ total: 1, passed: 0, failed: 1 });
    expect(await store.countRuns('ten_a', { exportKind: 'nope' })).toEqual({ total: 0, passed: 0, failed: 0 });
    expect(await store.countRuns('ten_c', {})).toEqual({ total: 0, passed: 0, failed: 0 });
  });

  it('rolls back a supersession, a new binding and a run with their transaction', async () => {
    await db.store(EXPORTS).insertBinding(binding('vsb_01'));
    await expect(
      db.transaction(async (tx) => {
        const store = tx.store(EXPORTS);
        expect(await store.supersedeBinding('ten_a', 'vsb_01', '2025-01-02T00:00:00.000Z')).toBe(true);
        await store.insertBinding(binding('vsb_02', { createdAt: '2025-01-02T00:00:00.000Z' }));
        await store.insertRun(run('vrun_01', { bindingKey: 'vsb_02' }));
        expect((await store.activeBinding('ten_a', 'oscal', 'oscal-1'))?.bindingKey).toBe('vsb_02');
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    const store = db.store(EXPORTS);
    expect(await store.activeBinding('ten_a', 'oscal', 'oscal-1')).toEqual(binding('vsb_01'));
    expect(await store.findBinding('ten_a', 'vsb_02')).toBeUndefined();
    expect(await store.findRun('ten_a', 'vrun_01')).toBeUndefined();
    expect(await store.countRuns('ten_a', {})).toEqual({ total: 0, passed: 0, failed: 0 });
  });

  it('commits a supersession and the binding replacing it together', async () => {
    await db.store(EXPORTS).insertBinding(binding('vsb_01'));
    await db.transaction(async (tx) => {
      const store = tx.store(EXPORTS);
      await store.supersedeBinding('ten_a', 'vsb_01', '2025-01-02T00:00:00.000Z');
      await store.insertBinding(binding('vsb_02', { createdAt: '2025-01-02T00:00:00.000Z' }));
    });
    const store = db.store(EXPORTS);
    expect((await store.listBindings('ten_a', { activeOnly: false })).map((b) => [b.bindingKey, b.active, b.supersededAt])).toEqual([
      ['vsb_02', true, null],
      ['vsb_01', false, '2025-01-02T00:00:00.000Z'],
    ]);
  });

  if (engine.name === 'postgres') it('supersedes a binding once when two transactions race for it', async () => {
    await db.store(EXPORTS).insertBinding(binding('vsb_01'));
    let updated!: () => void;
    const firstUpdated = new Promise<void>((resolve) => (updated = resolve));
    const [first, second] = await Promise.all([
      db.transaction(async (tx) => {
        const won = await tx.store(EXPORTS).supersedeBinding('ten_a', 'vsb_01', '2025-01-02T00:00:00.000Z');
        updated();
        await lockWaitBefore(db); // held until the second UPDATE waits on this row's lock
        return won;
      }),
      db.transaction(async (tx) => {
        await firstUpdated;
        // Still active in this transaction's snapshot until the first commits.
        return tx.store(EXPORTS).supersedeBinding('ten_a', 'vsb_01', '2025-01-03T00:00:00.000Z');
      }),
    ]);
    expect([first, second]).toEqual([true, false]);
    expect(await db.store(EXPORTS).findBinding('ten_a', 'vsb_01')).toEqual({ ...binding('vsb_01'), active: false, supersededAt: '2025-01-02T00:00:00.000Z' });

    // Unsynchronised, any number of racers: exactly one wins.
    await db.store(EXPORTS).insertBinding(binding('vsb_02', { createdAt: '2025-01-04T00:00:00.000Z' }));
    const wins = await Promise.all(
      [1, 2, 3, 4].map((i) => db.transaction((tx) => tx.store(EXPORTS).supersedeBinding('ten_a', 'vsb_02', `2025-01-0${4 + i}T00:00:00.000Z`))),
    );
    expect(wins.filter(Boolean)).toHaveLength(1);
  });

  if (engine.name === 'postgres') it('keeps one active binding when two replacements race: the later one is refused', async () => {
    // validation.ts recordBinding: activeBinding, supersedeBinding, insertBinding in one transaction.
    await db.store(EXPORTS).insertBinding(binding('vsb_01'));
    let replaced!: () => void;
    const firstReplaced = new Promise<void>((resolve) => (replaced = resolve));
    const replace = async (store: ExportStore, key: string, at: string) => {
      const current = await store.activeBinding('ten_a', 'oscal', 'oscal-1');
      const superseded = current ? await store.supersedeBinding('ten_a', current.bindingKey, at) : false;
      await store.insertBinding(binding(key, { createdAt: at }));
      return superseded;
    };
    const results = await Promise.allSettled([
      db.transaction(async (tx) => {
        const superseded = await replace(tx.store(EXPORTS), 'vsb_02', '2025-01-02T00:00:00.000Z');
        replaced();
        await lockWaitBefore(db); // held until the second's UPDATE waits on the superseded row's lock
        return superseded;
      }),
      db.transaction(async (tx) => {
        await firstReplaced;
        return replace(tx.store(EXPORTS), 'vsb_03', '2025-01-03T00:00:00.000Z');
      }),
    ]);
    expect(results[0]).toEqual({ status: 'fulfilled', value: true });
    expect(results[1]).toMatchObject({ status: 'rejected', reason: { code: '23505', constraint_name: 'validation_schema_bindings_active' } });
    const store = db.store(EXPORTS);
    expect((await store.listBindings('ten_a', { activeOnly: false })).map((b) => [b.bindingKey, b.active])).toEqual([
      ['vsb_02', true],
      ['vsb_01', false],
    ]);
  });
});
