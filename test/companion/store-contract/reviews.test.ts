/** The review items, receipts and escalation steps (reviews capability) behave the same on SQLite and PostgreSQL. */
import { beforeEach, describe, expect, it } from 'vitest';
import { createPostgresReviewStore } from '../../../companion/reviews/postgres-store.ts';
import { createSqliteReviewStore } from '../../../companion/reviews/sqlite-store.ts';
import type { InsightsRow, NewReviewItem, ReviewItem, ReviewStore } from '../../../companion/reviews/store.ts';
import { databasePerCase, engines, interleaved, seedTenants } from './engines.ts';
import type { StoreFactories } from './engines.ts';

const REVIEWS: StoreFactories<ReviewStore> = { sqlite: createSqliteReviewStore, postgres: createPostgresReviewStore };
const AT = '2025-01-01T00:00:00.000Z';
const HASH = 'a'.repeat(64);

/** A time `seconds` after AT. */
const t = (seconds: number) => new Date(Date.parse(AT) + seconds * 1000).toISOString();
const DAY = 86_400;

describe.each(engines())('review store on $name', (engine) => {
  const db = databasePerCase(engine, (fresh) => seedTenants(fresh, ['ten_a', 'ten_b'], AT));
  let seq = 0;
  beforeEach(() => {
    seq = 0;
  });

  /** A sealed record for an item or a receipt to refer to (both are foreign keys). */
  async function seal(actionKey: string, tenantId = 'ten_a'): Promise<void> {
    await db.exec(
      `INSERT INTO sealed_records (tenant_id, tenant_seq, action_key, vertical, pack, kind, decision, status, review_route, payload_hash,
         packet_hash, attestation, attestation_hash, signature, key_id, dev_key, recorded_at, credits, details)
       VALUES (?, ?, ?, 'finance', 'finance-core', 'gate', 'needs_review', 'sealed', NULL, ?, ?, '{}', ?, 'sig', 'key_1', 1, ?, 0, '{}')`,
      tenantId,
      ++seq,
      actionKey,
      HASH,
      HASH,
      HASH,
      AT,
    );
  }

  function newItem(actionKey: string, over: Partial<NewReviewItem> = {}): NewReviewItem {
    return {
      tenantId: 'ten_a',
      actionKey,
      pack: 'finance-core',
      vertical: 'finance',
      actionType: 'refund',
      reviewRoute: null,
      nextStep: 'Pause here until a reviewer decides.',
      createdAt: AT,
      expiresAt: t(DAY),
      windowSeconds: DAY,
      rule: null,
      approvalsRequired: 1,
      scheduleDueAt: null,
      ...over,
    };
  }

  /** Seals the action and opens its item. */
  async function open(actionKey: string, over: Partial<NewReviewItem> = {}): Promise<NewReviewItem> {
    const item = newItem(actionKey, over);
    await seal(actionKey, item.tenantId);
    await db.store(REVIEWS).openItem(item);
    return item;
  }

  /** A sealed receipt key. */
  async function receipt(key: string, tenantId = 'ten_a'): Promise<string> {
    await seal(key, tenantId);
    return key;
  }

  const fresh = (item: NewReviewItem, over: Partial<ReviewItem> = {}): ReviewItem => ({
    ...item,
    status: 'pending',
    escalationCount: 0,
    reviewer: null,
    decidedAt: null,
    receiptActionKey: null,
    approvals: 0,
    remindedAt: null,
    escalationLevel: 0,
    ...over,
  });

  const keys = (items: ReviewItem[]) => items.map((i) => i.actionKey);

  it('opens an item and finds it, in its tenant only', async () => {
    const rule = { approvals_required: 2, remind_after_seconds: 3600, escalation: [{ after_seconds: 7200, route: 'workflow:general-counsel' }] };
    const a = await open('fin:refund:1', { reviewRoute: 'chat:finance', rule, approvalsRequired: 2, scheduleDueAt: t(3600) });
    const b = await open('fin:refund:2');
    const reviews = db.store(REVIEWS);
    expect(await reviews.findItem('ten_a', 'fin:refund:1')).toEqual(fresh(a));
    expect(await reviews.findItem('ten_a', 'fin:refund:2')).toEqual(fresh(b));
    expect((await reviews.findItem('ten_a', 'fin:refund:2'))?.rule).toBeNull();
    expect(await reviews.findItem('ten_b', 'fin:refund:1')).toBeUndefined();
    expect(await reviews.findItem('ten_a', 'fin:refund:3')).toBeUndefined();
    // One item per action.
    await expect(reviews.openItem(a)).rejects.toThrow();
    expect(await reviews.findItem('ten_a', 'fin:refund:1')).toEqual(fresh(a));
  });

  it('decides an open item once, inside its window; an escalation keeps it open and counts', async () => {
    const a = await open('fin:refund:1');
    const b = await open('fin:refund:2');
    const c = await open('fin:refund:3');
    const reviews = db.store(REVIEWS);
    const [r1, r2, r3, r4, r5] = await Promise.all(['r:1', 'r:2', 'r:3', 'r:4', 'r:5'].map((k) => receipt(k)));

    expect(await reviews.decide('ten_a', a.actionKey, { decision: 'rejected', reviewer: 'ann', at: t(60), receiptActionKey: r1! })).toBe(true);
    expect(await reviews.findItem('ten_a', a.actionKey)).toEqual(fresh(a, { status: 'rejected', reviewer: 'ann', decidedAt: t(60), receiptActionKey: r1! }));
    // Final: a second decision changes nothing.
    expect(await reviews.decide('ten_a', a.actionKey, { decision: 'escalated', reviewer: 'bob', at: t(61), receiptActionKey: r2! })).toBe(false);
    expect((await reviews.findItem('ten_a', a.actionKey))?.reviewer).toBe('ann');

    expect(await reviews.decide('ten_a', b.actionKey, { decision: 'escalated', reviewer: 'bob', at: t(70), receiptActionKey: r2! })).toBe(true);
    expect(await reviews.findItem('ten_a', b.actionKey)).toEqual(
      fresh(b, { status: 'escalated', reviewer: 'bob', decidedAt: t(70), receiptActionKey: r2!, escalationCount: 1 }),
    );
    expect(await reviews.decide('ten_a', b.actionKey, { decision: 'escalated', reviewer: 'cat', at: t(80), receiptActionKey: r3! })).toBe(true);
    expect(await reviews.decide('ten_a', b.actionKey, { decision: 'rejected', reviewer: 'dan', at: t(90), receiptActionKey: r4! })).toBe(true);
    expect(await reviews.findItem('ten_a', b.actionKey)).toEqual(
      fresh(b, { status: 'rejected', reviewer: 'dan', decidedAt: t(90), receiptActionKey: r4!, escalationCount: 2 }),
    );

    // The window ends at expires_at exactly; another tenant cannot decide.
    expect(await reviews.decide('ten_a', c.actionKey, { decision: 'rejected', reviewer: 'ann', at: c.expiresAt, receiptActionKey: r5! })).toBe(false);
    expect(await reviews.decide('ten_b', c.actionKey, { decision: 'rejected', reviewer: 'ann', at: t(60), receiptActionKey: r5! })).toBe(false);
    expect(await reviews.decide('ten_a', 'fin:refund:9', { decision: 'rejected', reviewer: 'ann', at: t(60), receiptActionKey: r5! })).toBe(false);
    expect(await reviews.findItem('ten_a', c.actionKey)).toEqual(fresh(c));
  });

  it('counts approvals against the expected state; the last one closes the item approved', async () => {
    const a = await open('fin:refund:1', { approvalsRequired: 2 });
    const reviews = db.store(REVIEWS);
    const [r1, r2, r3] = await Promise.all(['r:1', 'r:2', 'r:3'].map((k) => receipt(k)));
    const approve = (reviewer: string, at: string, receiptActionKey: string, expected: { status: 'pending' | 'escalated'; approvals: number }) =>
      reviews.approve('ten_a', a.actionKey, { reviewer, at, receiptActionKey, expected });

    expect(await approve('ann', t(60), r1!, { status: 'pending', approvals: 0 })).toBe(true);
    expect(await reviews.findItem('ten_a', a.actionKey)).toEqual(fresh(a, { approvals: 1 }));
    // Stale expectations: the count or the status moved.
    expect(await approve('bob', t(70), r2!, { status: 'pending', approvals: 0 })).toBe(false);
    expect(await approve('bob', t(70), r2!, { status: 'escalated', approvals: 1 })).toBe(false);
    // Not in another tenant, nor after the window.
    expect(await reviews.approve('ten_b', a.actionKey, { reviewer: 'bob', at: t(70), receiptActionKey: r2!, expected: { status: 'pending', approvals: 1 } })).toBe(
      false,
    );
    expect(await approve('bob', a.expiresAt, r2!, { status: 'pending', approvals: 1 })).toBe(false);
    expect(await reviews.findItem('ten_a', a.actionKey)).toEqual(fresh(a, { approvals: 1 }));

    expect(await approve('bob', t(80), r2!, { status: 'pending', approvals: 1 })).toBe(true);
    expect(await reviews.findItem('ten_a', a.actionKey)).toEqual(fresh(a, { approvals: 2, status: 'approved', reviewer: 'bob', decidedAt: t(80), receiptActionKey: r2! }));
    expect(await approve('cat', t(90), r3!, { status: 'approved' as 'pending', approvals: 2 })).toBe(false);

    // An escalated item is approved from "escalated".
    const b = await open('fin:refund:2');
    const [r4, r5] = await Promise.all(['r:4', 'r:5'].map((k) => receipt(k)));
    await reviews.decide('ten_a', b.actionKey, { decision: 'escalated', reviewer: 'ann', at: t(10), receiptActionKey: r4! });
    expect(await reviews.approve('ten_a', b.actionKey, { reviewer: 'cat', at: t(20), receiptActionKey: r5!, expected: { status: 'escalated', approvals: 0 } })).toBe(true);
    expect(await reviews.findItem('ten_a', b.actionKey)).toEqual(
      fresh(b, { status: 'approved', approvals: 1, reviewer: 'cat', decidedAt: t(20), receiptActionKey: r5!, escalationCount: 1 }),
    );
  });

  it('expires an open item once its window ended, and only then', async () => {
    const a = await open('fin:refund:1');
    const b = await open('fin:refund:2');
    const reviews = db.store(REVIEWS);
    const [r1, r2, r3] = await Promise.all(['r:1', 'r:2', 'r:3'].map((k) => receipt(k)));
    expect(await reviews.expire('ten_a', a.actionKey, t(DAY - 1), r1!)).toBe(false);
    expect(await reviews.expire('ten_b', a.actionKey, t(DAY), r1!)).toBe(false);
    expect(await reviews.expire('ten_a', a.actionKey, t(DAY + 5), r1!)).toBe(true);
    expect(await reviews.findItem('ten_a', a.actionKey)).toEqual(fresh(a, { status: 'expired', reviewer: null, decidedAt: a.expiresAt, receiptActionKey: r1! }));
    expect(await reviews.expire('ten_a', a.actionKey, t(DAY + 6), r2!)).toBe(false);
    // A decided item does not expire; an escalated one does (at expires_at exactly).
    await reviews.decide('ten_a', b.actionKey, { decision: 'escalated', reviewer: 'ann', at: t(10), receiptActionKey: r2! });
    expect(await reviews.expire('ten_a', b.actionKey, t(DAY), r3!)).toBe(true);
    expect(await reviews.findItem('ten_a', b.actionKey)).toEqual(
      fresh(b, { status: 'expired', reviewer: null, decidedAt: b.expiresAt, receiptActionKey: r3!, escalationCount: 1 }),
    );
  });

  it('keeps receipts per reviewed action, oldest first, one approval per reviewer', async () => {
    const a = await open('fin:refund:1', { approvalsRequired: 3 });
    await open('fin:refund:2');
    await open('fin:refund:3', { tenantId: 'ten_b' });
    const reviews = db.store(REVIEWS);
    for (const k of ['r:b', 'r:a', 'r:c', 'r:d', 'r:e', 'r:f']) await receipt(k);
    await reviews.addReceipt({ receiptActionKey: 'r:b', tenantId: 'ten_a', reviewedActionKey: a.actionKey, decision: 'approved', reviewer: 'ann', recordedAt: t(20) });
    await reviews.addReceipt({ receiptActionKey: 'r:c', tenantId: 'ten_a', reviewedActionKey: a.actionKey, decision: 'escalated', reviewer: 'bob', recordedAt: t(10) });
    // Same recorded_at: the receipt key breaks the tie.
    await reviews.addReceipt({ receiptActionKey: 'r:a', tenantId: 'ten_a', reviewedActionKey: a.actionKey, decision: 'expired', reviewer: null, recordedAt: t(20) });
    await reviews.addReceipt({ receiptActionKey: 'r:d', tenantId: 'ten_a', reviewedActionKey: 'fin:refund:2', decision: 'rejected', reviewer: 'ann', recordedAt: t(5) });
    await reviews.addReceipt({ receiptActionKey: 'r:e', tenantId: 'ten_b', reviewedActionKey: 'fin:refund:3', decision: 'approved', reviewer: 'ann', recordedAt: t(5) });
    // The same reviewer cannot approve the same action twice.
    await expect(
      reviews.addReceipt({ receiptActionKey: 'r:f', tenantId: 'ten_a', reviewedActionKey: a.actionKey, decision: 'approved', reviewer: 'ann', recordedAt: t(30) }),
    ).rejects.toThrow();

    // Written without who decided (migrations/0018): read back as no one.
    const unattributed = { principalId: null, principalName: null, countsAs: null, countsAsName: null, asserted: false, assertedRoute: null, identityProvider: null, identitySubject: null, actingPerson: null };
    expect(await reviews.receiptsFor('ten_a', a.actionKey)).toEqual([
      { receiptActionKey: 'r:c', tenantId: 'ten_a', reviewedActionKey: a.actionKey, decision: 'escalated', reviewer: 'bob', recordedAt: t(10), ...unattributed },
      { receiptActionKey: 'r:a', tenantId: 'ten_a', reviewedActionKey: a.actionKey, decision: 'expired', reviewer: null, recordedAt: t(20), ...unattributed },
      { receiptActionKey: 'r:b', tenantId: 'ten_a', reviewedActionKey: a.actionKey, decision: 'approved', reviewer: 'ann', recordedAt: t(20), ...unattributed },
    ]);
    expect(await reviews.receiptsFor('ten_a', 'fin:refund:3')).toEqual([]);
    expect((await reviews.receiptsFor('ten_b', 'fin:refund:3')).map((r) => r.receiptActionKey)).toEqual(['r:e']);
    expect(await reviews.receiptsFor('ten_a', 'fin:refund:9')).toEqual([]);
  });

  it('keeps who decided each receipt, and one approval per person an approval counts as or who made it', async () => {
    const a = await open('fin:refund:1', { approvalsRequired: 3 });
    const reviews = db.store(REVIEWS);
    for (const k of ['r:1', 'r:2', 'r:3', 'r:4']) await receipt(k);
    const base = { tenantId: 'ten_a', reviewedActionKey: a.actionKey, decision: 'approved' as const, recordedAt: t(10) };
    const delegated = {
      principalId: 'sva_1',
      principalName: 'Intranet',
      countsAs: 'per_ann',
      countsAsName: 'Ann',
      asserted: true,
      assertedRoute: null,
      identityProvider: null,
      identitySubject: null,
      actingPerson: null,
    };
    await reviews.addReceipt({ ...base, receiptActionKey: 'r:1', reviewer: 'ann@example.com', ...delegated });
    // Ann again, under another reviewer name: refused by the store itself.
    await expect(reviews.addReceipt({ ...base, receiptActionKey: 'r:2', reviewer: 'per_ann', principalId: 'per_ann', countsAs: 'per_ann', actingPerson: 'per_ann' })).rejects.toThrow();
    // Bob naming Carol with his own credential, then Bob naming Dan: Bob made both.
    await reviews.addReceipt({ ...base, receiptActionKey: 'r:3', reviewer: 'carol', principalId: 'per_bob', countsAs: 'per_carol', asserted: true, actingPerson: 'per_bob' });
    await expect(reviews.addReceipt({ ...base, receiptActionKey: 'r:4', reviewer: 'dan', principalId: 'per_bob', countsAs: 'per_dan', asserted: true, actingPerson: 'per_bob' })).rejects.toThrow();
    expect((await reviews.receiptsFor('ten_a', a.actionKey)).map((r) => r.receiptActionKey)).toEqual(['r:1', 'r:3']);
    expect((await reviews.receiptsFor('ten_a', a.actionKey))[0]).toEqual({ ...base, receiptActionKey: 'r:1', reviewer: 'ann@example.com', ...delegated });
  });

  it('lists open items of a tenant whose window runs, oldest first, by route and up to the limit', async () => {
    // Created out of order; two share a created_at (insertion order breaks the tie).
    await open('k:3', { createdAt: t(30), reviewRoute: 'chat:finance' });
    await open('k:1', { createdAt: t(10) });
    await open('k:2b', { createdAt: t(20), reviewRoute: 'chat:finance' });
    await open('k:2a', { createdAt: t(20), reviewRoute: 'chat:legal' });
    await open('k:short', { createdAt: t(5), expiresAt: t(100), windowSeconds: 95 });
    await open('k:done', { createdAt: t(1) });
    await open('k:other', { tenantId: 'ten_b', createdAt: t(2) });
    const reviews = db.store(REVIEWS);
    await reviews.decide('ten_a', 'k:done', { decision: 'rejected', reviewer: 'ann', at: t(50), receiptActionKey: await receipt('r:1') });
    await reviews.decide('ten_a', 'k:3', { decision: 'escalated', reviewer: 'ann', at: t(50), receiptActionKey: await receipt('r:2') });

    expect(keys(await reviews.listOpen('ten_a', t(60), { limit: 10 }))).toEqual(['k:short', 'k:1', 'k:2b', 'k:2a', 'k:3']);
    expect(keys(await reviews.listOpen('ten_a', t(100), { limit: 10 }))).toEqual(['k:1', 'k:2b', 'k:2a', 'k:3']);
    expect(keys(await reviews.listOpen('ten_a', t(60), { limit: 2 }))).toEqual(['k:short', 'k:1']);
    expect(keys(await reviews.listOpen('ten_a', t(60), { route: 'chat:finance', limit: 10 }))).toEqual(['k:2b', 'k:3']);
    expect(keys(await reviews.listOpen('ten_a', t(60), { route: 'chat:finance', limit: 1 }))).toEqual(['k:2b']);
    expect(keys(await reviews.listOpen('ten_a', t(60), { route: undefined, limit: 10 }))).toHaveLength(5);
    expect(await reviews.listOpen('ten_a', t(60), { route: 'chat:none', limit: 10 })).toEqual([]);
    expect(keys(await reviews.listOpen('ten_b', t(60), { limit: 10 }))).toEqual(['k:other']);
    const [first] = await reviews.listOpen('ten_a', t(60), { route: 'chat:finance', limit: 1 });
    expect(first).toEqual(await reviews.findItem('ten_a', 'k:2b'));
  });

  it('lists due items across tenants, earliest deadline first', async () => {
    await open('k:1', { expiresAt: t(300), windowSeconds: 300 });
    await open('k:2', { tenantId: 'ten_b', expiresAt: t(100), windowSeconds: 100 });
    await open('k:3', { expiresAt: t(200), windowSeconds: 200 });
    await open('k:3b', { expiresAt: t(200), windowSeconds: 200 });
    await open('k:late', { expiresAt: t(1000), windowSeconds: 1000 });
    await open('k:done', { expiresAt: t(50), windowSeconds: 50 });
    const reviews = db.store(REVIEWS);
    await reviews.expire('ten_a', 'k:done', t(60), await receipt('r:1'));
    await reviews.decide('ten_a', 'k:3b', { decision: 'escalated', reviewer: 'ann', at: t(10), receiptActionKey: await receipt('r:2') });

    expect(keys(await reviews.listDue(t(300), 10))).toEqual(['k:2', 'k:3', 'k:3b', 'k:1']);
    expect(keys(await reviews.listDue(t(299), 10))).toEqual(['k:2', 'k:3', 'k:3b']);
    expect(keys(await reviews.listDue(t(300), 2))).toEqual(['k:2', 'k:3']);
    expect(await reviews.listDue(t(99), 10)).toEqual([]);
    const [due] = await reviews.listDue(t(100), 10);
    expect(due).toEqual(await reviews.findItem('ten_b', 'k:2'));
  });

  it('lists open items whose schedule is due while their window runs, across tenants', async () => {
    await open('k:1', { scheduleDueAt: t(300) });
    await open('k:2', { tenantId: 'ten_b', scheduleDueAt: t(100) });
    await open('k:3', { scheduleDueAt: t(200) });
    await open('k:none', { scheduleDueAt: null });
    await open('k:closed', { scheduleDueAt: t(50) });
    await open('k:ended', { scheduleDueAt: t(50), expiresAt: t(150), windowSeconds: 150 });
    const reviews = db.store(REVIEWS);
    await reviews.decide('ten_a', 'k:closed', { decision: 'rejected', reviewer: 'ann', at: t(10), receiptActionKey: await receipt('r:1') });

    expect(keys(await reviews.listScheduled(t(149), 10))).toEqual(['k:ended', 'k:2']);
    expect(keys(await reviews.listScheduled(t(300), 10))).toEqual(['k:2', 'k:3', 'k:1']);
    expect(keys(await reviews.listScheduled(t(300), 1))).toEqual(['k:2']);
    expect(await reviews.listScheduled(t(49), 10)).toEqual([]);
  });

  it('marks the reminder once, on an open item in its window', async () => {
    const a = await open('k:1', { scheduleDueAt: t(100) });
    const b = await open('k:2', { scheduleDueAt: t(100), expiresAt: t(500), windowSeconds: 500 });
    const c = await open('k:3', { scheduleDueAt: t(100) });
    const reviews = db.store(REVIEWS);
    expect(await reviews.markReminded('ten_b', 'k:1', t(100), t(400))).toBe(false);
    expect(await reviews.markReminded('ten_a', 'k:1', t(100), t(400))).toBe(true);
    expect(await reviews.findItem('ten_a', 'k:1')).toEqual(fresh(a, { remindedAt: t(100), scheduleDueAt: t(400) }));
    expect(await reviews.markReminded('ten_a', 'k:1', t(200), null)).toBe(false);
    expect((await reviews.findItem('ten_a', 'k:1'))?.remindedAt).toBe(t(100));

    expect(await reviews.markReminded('ten_a', 'k:2', t(500), null)).toBe(false);
    expect(await reviews.markReminded('ten_a', 'k:2', t(499), null)).toBe(true);
    expect(await reviews.findItem('ten_a', 'k:2')).toEqual(fresh(b, { remindedAt: t(499), scheduleDueAt: null }));

    await reviews.decide('ten_a', 'k:3', { decision: 'rejected', reviewer: 'ann', at: t(10), receiptActionKey: await receipt('r:1') });
    expect(await reviews.markReminded('ten_a', 'k:3', t(100), null)).toBe(false);
    expect((await reviews.findItem('ten_a', 'k:3'))?.remindedAt).toBeNull();
    expect(c.scheduleDueAt).toBe(t(100));
  });

  it('takes escalation steps in order, once each, recording the route left', async () => {
    const a = await open('k:1', { reviewRoute: 'chat:finance', scheduleDueAt: t(100) });
    await open('k:2', { reviewRoute: null });
    await open('k:closed');
    await open('k:ended', { expiresAt: t(100), windowSeconds: 100 });
    const reviews = db.store(REVIEWS);

    // Level 2 before level 1, a stranger tenant, an unknown item: nothing moves.
    expect(await reviews.escalateRoute('ten_a', 'k:1', { level: 2, route: 'workflow:cfo', at: t(100), scheduleDueAt: null })).toBe(false);
    expect(await reviews.escalateRoute('ten_b', 'k:1', { level: 1, route: 'workflow:cfo', at: t(100), scheduleDueAt: null })).toBe(false);
    expect(await reviews.escalateRoute('ten_a', 'k:9', { level: 1, route: 'workflow:cfo', at: t(100), scheduleDueAt: null })).toBe(false);
    expect(await reviews.findItem('ten_a', 'k:1')).toEqual(fresh(a));

    expect(await reviews.escalateRoute('ten_a', 'k:1', { level: 1, route: 'workflow:controller', at: t(100), scheduleDueAt: t(200) })).toBe(true);
    expect(await reviews.findItem('ten_a', 'k:1')).toEqual(fresh(a, { escalationLevel: 1, reviewRoute: 'workflow:controller', scheduleDueAt: t(200) }));
    expect(await reviews.escalateRoute('ten_a', 'k:1', { level: 1, route: 'workflow:other', at: t(150), scheduleDueAt: null })).toBe(false);
    expect(await reviews.escalateRoute('ten_a', 'k:1', { level: 2, route: 'workflow:cfo', at: t(200), scheduleDueAt: null })).toBe(true);
    expect(await reviews.findItem('ten_a', 'k:1')).toEqual(fresh(a, { escalationLevel: 2, reviewRoute: 'workflow:cfo', scheduleDueAt: null }));

    expect(await reviews.escalateRoute('ten_a', 'k:2', { level: 1, route: 'chat:legal', at: t(50), scheduleDueAt: null })).toBe(true);
    await reviews.decide('ten_a', 'k:closed', { decision: 'rejected', reviewer: 'ann', at: t(10), receiptActionKey: await receipt('r:1') });
    expect(await reviews.escalateRoute('ten_a', 'k:closed', { level: 1, route: 'chat:legal', at: t(50), scheduleDueAt: null })).toBe(false);
    expect(await reviews.escalateRoute('ten_a', 'k:ended', { level: 1, route: 'chat:legal', at: t(100), scheduleDueAt: null })).toBe(false);

    expect(await reviews.escalationsFor('ten_a', 'k:1')).toEqual([
      { level: 1, fromRoute: 'chat:finance', toRoute: 'workflow:controller', at: t(100) },
      { level: 2, fromRoute: 'workflow:controller', toRoute: 'workflow:cfo', at: t(200) },
    ]);
    expect(await reviews.escalationsFor('ten_a', 'k:2')).toEqual([{ level: 1, fromRoute: null, toRoute: 'chat:legal', at: t(50) }]);
    expect(await reviews.escalationsFor('ten_a', 'k:closed')).toEqual([]);
    expect(await reviews.escalationsFor('ten_a', 'k:ended')).toEqual([]);
    expect(await reviews.escalationsFor('ten_b', 'k:1')).toEqual([]);
    expect((await reviews.findItem('ten_a', 'k:ended'))?.escalationLevel).toBe(0);
  });

  const zero = (actionType: string | null): InsightsRow => ({
    actionType,
    total: 0,
    pending: 0,
    oldestPendingAt: null,
    approved: 0,
    rejected: 0,
    expired: 0,
    escalated: 0,
    medianSecondsToDecide: null,
    p90SecondsToDecide: null,
  });

  it('answers insights for a tenant without items with one zero row', async () => {
    await open('k:other', { tenantId: 'ten_b' });
    expect(await db.store(REVIEWS).insights('ten_a', t(10), null)).toEqual([zero(null)]);
    expect(await db.store(REVIEWS).insights('ten_b', t(10), t(1))).toEqual([zero(null)]);
  });

  it('counts insights per action type and tenant-wide, with lazy expiry, nearest-rank times and since', async () => {
    const now = t(9 * DAY);
    const day = (n: number, seconds = 0) => t(n * DAY + seconds);
    const window = { expiresAt: t(20 * DAY), windowSeconds: 20 * DAY };
    const r = async (n: number) => receipt(`r:${n}`);
    // refund: approved in 10 s, rejected in 30 s, pending, past its window (lazy expiry), escalated and open.
    await open('refund:1', { createdAt: day(0), ...window });
    await open('refund:2', { createdAt: day(1), ...window });
    await open('refund:3', { createdAt: day(2), ...window });
    await open('refund:4', { createdAt: day(3), expiresAt: day(4), windowSeconds: DAY });
    await open('refund:5', { createdAt: day(4), ...window });
    // wire: approved in 4.5 s from an odd millisecond (SQLite's doubles make it 4), approved in
    // 100 s after an escalation step, expired.
    const odd = '2025-01-06T12:34:56.789Z';
    await open('wire:1', { actionType: 'wire', createdAt: odd, ...window });
    await open('wire:2', { actionType: 'wire', createdAt: day(6), ...window });
    await open('wire:3', { actionType: 'wire', createdAt: day(7), expiresAt: day(8), windowSeconds: DAY });
    await open('other:1', { tenantId: 'ten_b', createdAt: day(1), ...window });
    const reviews = db.store(REVIEWS);
    const approve = async (key: string, at: string, n: number) =>
      expect(await reviews.approve('ten_a', key, { reviewer: 'ann', at, receiptActionKey: await r(n), expected: { status: 'pending', approvals: 0 } })).toBe(true);
    await approve('refund:1', day(0, 10), 1);
    expect(await reviews.decide('ten_a', 'refund:2', { decision: 'rejected', reviewer: 'bob', at: day(1, 30), receiptActionKey: await r(2) })).toBe(true);
    expect(await reviews.decide('ten_a', 'refund:5', { decision: 'escalated', reviewer: 'bob', at: day(4, 30), receiptActionKey: await r(3) })).toBe(true);
    await approve('wire:1', new Date(Date.parse(odd) + 4500).toISOString(), 4);
    expect(await reviews.escalateRoute('ten_a', 'wire:2', { level: 1, route: 'chat:cfo', at: day(6, 50), scheduleDueAt: null })).toBe(true);
    await approve('wire:2', day(6, 100), 5);
    expect(await reviews.expire('ten_a', 'wire:3', day(8), await r(6))).toBe(true);

    expect(await db.store(REVIEWS).insights('ten_a', now, null)).toEqual([
      {
        actionType: 'refund',
        total: 5,
        pending: 2,
        oldestPendingAt: day(2),
        approved: 1,
        rejected: 1,
        expired: 1,
        escalated: 1,
        medianSecondsToDecide: 10,
        p90SecondsToDecide: 30,
      },
      {
        actionType: 'wire',
        total: 3,
        pending: 0,
        oldestPendingAt: null,
        approved: 2,
        rejected: 0,
        expired: 1,
        escalated: 1,
        medianSecondsToDecide: 4,
        p90SecondsToDecide: 100,
      },
      {
        actionType: null,
        total: 8,
        pending: 2,
        oldestPendingAt: day(2),
        approved: 3,
        rejected: 1,
        expired: 2,
        escalated: 2,
        medianSecondsToDecide: 10,
        p90SecondsToDecide: 100,
      },
    ]);
    // Created at or after `since` only; before refund:4's deadline it is pending, not expired.
    expect(await db.store(REVIEWS).insights('ten_a', day(3, 60), day(3))).toEqual([
      { ...zero('refund'), total: 2, pending: 2, oldestPendingAt: day(3), escalated: 1 },
      { ...zero('wire'), total: 3, approved: 2, expired: 1, escalated: 1, medianSecondsToDecide: 4, p90SecondsToDecide: 100 },
      { ...zero(null), total: 5, pending: 2, oldestPendingAt: day(3), approved: 2, expired: 1, escalated: 2, medianSecondsToDecide: 4, p90SecondsToDecide: 100 },
    ]);
    expect(await db.store(REVIEWS).insights('ten_a', now, day(10))).toEqual([zero(null)]);
  });

  it('rounds seconds to decide as SQLite does, half-seconds included', async () => {
    // [created_at, milliseconds to decide, seconds SQLite reports]
    const cases: [string, number, number][] = [
      ['2025-01-01T00:00:00.000Z', 500, 1],
      ['2025-01-01T00:00:00.000Z', 2500, 3],
      ['2025-03-07T12:34:56.789Z', 4500, 4],
      ['2025-03-07T12:34:56.789Z', 30500, 31],
      ['2024-12-31T23:59:59.999Z', 4500, 4],
      ['2025-01-01T00:00:00.000Z', 1499, 1],
      ['2025-01-01T00:00:00.000Z', 12345, 12],
    ];
    const reviews = db.store(REVIEWS);
    for (const [i, [createdAt, ms, seconds]] of cases.entries()) {
      const key = `t${i}:1`;
      await open(key, { actionType: `t${i}`, createdAt, expiresAt: new Date(Date.parse(createdAt) + DAY * 1000).toISOString() });
      const at = new Date(Date.parse(createdAt) + ms).toISOString();
      expect(await reviews.decide('ten_a', key, { decision: 'rejected', reviewer: 'ann', at, receiptActionKey: await receipt(`r:${i}`) })).toBe(true);
      const rows = await db.store(REVIEWS).insights('ten_a', t(DAY), null);
      expect(rows.find((row) => row.actionType === `t${i}`)?.medianSecondsToDecide).toBe(seconds);
    }
  });

  it('rolls a decision and its receipt back with their transaction', async () => {
    const a = await open('k:1');
    const r1 = await receipt('r:1');
    await expect(
      db.transaction(async (tx) => {
        const reviews = tx.store(REVIEWS);
        expect(await reviews.decide('ten_a', a.actionKey, { decision: 'rejected', reviewer: 'ann', at: t(10), receiptActionKey: r1 })).toBe(true);
        await reviews.addReceipt({ receiptActionKey: r1, tenantId: 'ten_a', reviewedActionKey: a.actionKey, decision: 'rejected', reviewer: 'ann', recordedAt: t(10) });
        expect((await reviews.findItem('ten_a', a.actionKey))?.status).toBe('rejected');
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    const reviews = db.store(REVIEWS);
    expect(await reviews.findItem('ten_a', a.actionKey)).toEqual(fresh(a));
    expect(await reviews.receiptsFor('ten_a', a.actionKey)).toEqual([]);
  });

  it('rolls an escalation step back with its transaction, item and record together', async () => {
    const a = await open('k:1', { reviewRoute: 'chat:finance' });
    await expect(
      db.transaction(async (tx) => {
        expect(await tx.store(REVIEWS).escalateRoute('ten_a', 'k:1', { level: 1, route: 'chat:cfo', at: t(10), scheduleDueAt: null })).toBe(true);
        expect(await tx.store(REVIEWS).escalationsFor('ten_a', 'k:1')).toHaveLength(1);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    const reviews = db.store(REVIEWS);
    expect(await reviews.findItem('ten_a', 'k:1')).toEqual(fresh(a));
    expect(await reviews.escalationsFor('ten_a', 'k:1')).toEqual([]);
    // A committed transaction keeps both.
    await db.transaction(async (tx) => tx.store(REVIEWS).escalateRoute('ten_a', 'k:1', { level: 1, route: 'chat:cfo', at: t(10), scheduleDueAt: null }));
    expect(await reviews.escalationsFor('ten_a', 'k:1')).toEqual([{ level: 1, fromRoute: 'chat:finance', toRoute: 'chat:cfo', at: t(10) }]);
  });

  if (engine.name === 'postgres') describe('concurrent reviewers on PostgreSQL', () => {
    it('lets one of two simultaneous approvals with the same expectation count', async () => {
      await open('k:1', { approvalsRequired: 2 });
      const [r1, r2] = [await receipt('r:1'), await receipt('r:2')];
      const approve = (s: ReviewStore, reviewer: string, receiptActionKey: string) =>
        s.approve('ten_a', 'k:1', { reviewer, at: t(10), receiptActionKey, expected: { status: 'pending', approvals: 0 } });
      const results = await Promise.all([
        db.transaction(async (tx) => approve(tx.store(REVIEWS), 'ann', r1)),
        db.transaction(async (tx) => approve(tx.store(REVIEWS), 'bob', r2)),
      ]);
      expect(results.filter(Boolean)).toHaveLength(1);
      expect((await db.store(REVIEWS).findItem('ten_a', 'k:1'))?.approvals).toBe(1);
    });

    it('refuses an approval whose expectation a concurrent approval made stale, then counts both exactly', async () => {
      const a = await open('k:1', { approvalsRequired: 2 });
      const [r1, r2] = [await receipt('r:1'), await receipt('r:2')];
      const expected = { status: 'pending' as const, approvals: 0 };
      const [first, second] = await interleaved(
        db,
        REVIEWS,
        (s) => s.approve('ten_a', 'k:1', { reviewer: 'ann', at: t(10), receiptActionKey: r1, expected }),
        (s) => s.approve('ten_a', 'k:1', { reviewer: 'bob', at: t(11), receiptActionKey: r2, expected }),
      );
      expect([first, second]).toEqual([true, false]);
      expect(await db.store(REVIEWS).findItem('ten_a', 'k:1')).toEqual(fresh(a, { approvals: 1 }));
      // Retried with the committed count, the second approval closes it.
      expect(await db.store(REVIEWS).approve('ten_a', 'k:1', { reviewer: 'bob', at: t(12), receiptActionKey: r2, expected: { status: 'pending', approvals: 1 } })).toBe(
        true,
      );
      expect(await db.store(REVIEWS).findItem('ten_a', 'k:1')).toEqual(fresh(a, { approvals: 2, status: 'approved', reviewer: 'bob', decidedAt: t(12), receiptActionKey: r2 }));
    });

    it('moves an item once under two simultaneous decisions, and not after a concurrent expiry', async () => {
      await open('k:1');
      const [r1, r2] = [await receipt('r:1'), await receipt('r:2')];
      const [first, second] = await interleaved(
        db,
        REVIEWS,
        (s) => s.decide('ten_a', 'k:1', { decision: 'rejected', reviewer: 'ann', at: t(10), receiptActionKey: r1 }),
        (s) => s.decide('ten_a', 'k:1', { decision: 'escalated', reviewer: 'bob', at: t(11), receiptActionKey: r2 }),
      );
      expect([first, second]).toEqual([true, false]);
      expect(await db.store(REVIEWS).findItem('ten_a', 'k:1')).toMatchObject({ status: 'rejected', reviewer: 'ann', escalationCount: 0, receiptActionKey: r1 });

      await open('k:2', { expiresAt: t(100), windowSeconds: 100 });
      const [r3, r4] = [await receipt('r:3'), await receipt('r:4')];
      const [expired, decided] = await interleaved(
        db,
        REVIEWS,
        (s) => s.expire('ten_a', 'k:2', t(100), r3),
        (s) => s.decide('ten_a', 'k:2', { decision: 'rejected', reviewer: 'ann', at: t(99), receiptActionKey: r4 }),
      );
      expect([expired, decided]).toEqual([true, false]);
      expect((await db.store(REVIEWS).findItem('ten_a', 'k:2'))?.status).toBe('expired');

      await open('k:3', { scheduleDueAt: t(50) });
      const reminded = await Promise.all([
        db.transaction(async (tx) => tx.store(REVIEWS).markReminded('ten_a', 'k:3', t(50), null)),
        db.transaction(async (tx) => tx.store(REVIEWS).markReminded('ten_a', 'k:3', t(51), null)),
      ]);
      expect(reminded.filter(Boolean)).toHaveLength(1);
    });

    it('takes an escalation step once, and records the route a concurrent step left', async () => {
      await open('k:1', { reviewRoute: 'chat:finance' });
      const once = await Promise.all(
        ['workflow:a', 'workflow:b'].map((route) => db.transaction(async (tx) => tx.store(REVIEWS).escalateRoute('ten_a', 'k:1', { level: 1, route, at: t(10), scheduleDueAt: null }))),
      );
      expect(once.filter(Boolean)).toHaveLength(1);
      const [step] = await db.store(REVIEWS).escalationsFor('ten_a', 'k:1');
      expect(step).toMatchObject({ level: 1, fromRoute: 'chat:finance' });
      expect((await db.store(REVIEWS).findItem('ten_a', 'k:1'))?.reviewRoute).toBe(step!.toRoute);

      // Level 2 starts while level 1 is uncommitted: it waits, then leaves level 1's route.
      await open('k:2', { reviewRoute: 'chat:finance' });
      const [first, second] = await interleaved(
        db,
        REVIEWS,
        (s) => s.escalateRoute('ten_a', 'k:2', { level: 1, route: 'workflow:controller', at: t(10), scheduleDueAt: null }),
        (s) => s.escalateRoute('ten_a', 'k:2', { level: 2, route: 'workflow:cfo', at: t(11), scheduleDueAt: null }),
      );
      expect([first, second]).toEqual([true, true]);
      expect(await db.store(REVIEWS).escalationsFor('ten_a', 'k:2')).toEqual([
        { level: 1, fromRoute: 'chat:finance', toRoute: 'workflow:controller', at: t(10) },
        { level: 2, fromRoute: 'workflow:controller', toRoute: 'workflow:cfo', at: t(11) },
      ]);
      expect(await db.store(REVIEWS).findItem('ten_a', 'k:2')).toMatchObject({ escalationLevel: 2, reviewRoute: 'workflow:cfo' });
    });
  });
});
