/** The webhook outbox, subscriptions and signing keys behave the same on SQLite and PostgreSQL. */
import { describe, expect, it } from 'vitest';
import { StoreCipher, newKek } from '../../../companion/core/secrets/envelope.ts';
import { createPostgresWebhookStore } from '../../../companion/webhooks/postgres-store.ts';
import { createSqliteWebhookStore } from '../../../companion/webhooks/sqlite-store.ts';
import type { DeliveryRow, NewDelivery, WebhookStore } from '../../../companion/webhooks/store.ts';
import { sha256Hex } from '../../../shared/hash.ts';
import { databasePerCase, engines, interleave, interleaved, seedTenants } from './engines.ts';
import type { StoreFactories } from './engines.ts';

/** Signing keys are stored sealed (core/secrets/envelope.ts): the stores are given a cipher. */
const CIPHER = new StoreCipher(newKek(Buffer.alloc(32, 7), 'test'));
const WEBHOOKS: StoreFactories<WebhookStore> = { sqlite: (db) => createSqliteWebhookStore(db, CIPHER), postgres: (sql) => createPostgresWebhookStore(sql, CIPHER) };
const AT = '2025-01-01T00:00:00.000Z';
/** 2025-01-01 in Unix ms: above 2^32, so a bigint column that came back as anything but a number shows. */
const RUN_AT = 1735689600000;

const delivery = (n: number, over: Partial<NewDelivery> = {}): NewDelivery => ({
  id: `evt_${String(n).padStart(4, '0')}`,
  tenantId: 'ten_a',
  target: 'ops',
  event: 'record.sealed',
  eventKey: `record.sealed:${n}`,
  body: JSON.stringify({ n }),
  runAt: RUN_AT + n,
  createdAt: `2025-01-01T00:00:${String(n).padStart(2, '0')}.000Z`,
  ...over,
});

/** The row a new delivery is stored as. */
const stored = (d: NewDelivery): DeliveryRow => ({
  id: d.id,
  tenant_id: d.tenantId,
  target: d.target,
  event: d.event,
  event_key: d.eventKey,
  body: d.body,
  status: 'pending',
  attempt_count: 0,
  run_at: d.runAt,
  lease_owner: null,
  lease_expires_at: null,
  last_error: null,
  last_attempt_at: null,
  created_at: d.createdAt,
  completed_at: null,
});

const key = (n: number) => sha256Hex(`signing key ${n}`);

describe.each(engines())('webhook store on $name', (engine) => {
  const db = databasePerCase(engine, (fresh) => seedTenants(fresh, ['ten_a', 'ten_b'], AT));

  async function integration(tenantId: string, channel: string, target: string, enabled: boolean, config: object): Promise<void> {
    await db.exec(
      'INSERT INTO tenant_integrations (tenant_id, channel, target, enabled, config, secret_ref, created_at, updated_at) VALUES (?, ?, ?, ?, ?, NULL, ?, ?)',
      tenantId, channel, target, enabled ? 1 : 0, JSON.stringify(config), AT, AT,
    );
  }
  const hook = (events: string[], meter_thresholds?: number[]) => ({ url: 'https://hooks.example.com/x', events, ...(meter_thresholds ? { meter_thresholds } : {}) });
  async function setStatus(id: string, status: string): Promise<void> {
    await db.exec('UPDATE webhook_deliveries SET status = ? WHERE id = ?', status, id);
  }
  /**
   * Deliveries 1..n of ten_a to 'ops', then n + 1 to its target 'other' and n + 2 of ten_b (which
   * no query of ten_a's 'ops' may see), then the statuses given by delivery id.
   */
  async function seedDeliveries(webhooks: WebhookStore, n: number, statuses: Record<string, string>): Promise<void> {
    for (let i = 1; i <= n; i++) await webhooks.insertDelivery(delivery(i));
    await webhooks.insertDelivery(delivery(n + 1, { target: 'other' }));
    await webhooks.insertDelivery(delivery(n + 2, { tenantId: 'ten_b' }));
    for (const [id, status] of Object.entries(statuses)) await setStatus(id, status);
  }

  it('lists the enabled webhook targets of the tenant subscribed to an event, by target', async () => {
    await integration('ten_a', 'webhook', 'zeta', true, hook(['record.sealed', 'review.resolved']));
    await integration('ten_a', 'webhook', 'Alpha', true, hook(['record.sealed']));
    await integration('ten_a', 'webhook', 'beta', true, hook(['review.resolved']));
    await integration('ten_a', 'webhook', 'off', false, hook(['record.sealed']));
    await integration('ten_a', 'webhook', 'none', true, hook([]));
    await integration('ten_a', 'slack', 'chat', true, hook(['record.sealed']));
    await integration('ten_b', 'webhook', 'theirs', true, hook(['record.sealed']));
    const webhooks = db.store(WEBHOOKS);
    expect(await webhooks.subscribedTargets('ten_a', 'record.sealed')).toEqual(['Alpha', 'zeta']);
    expect(await webhooks.subscribedTargets('ten_a', 'review.resolved')).toEqual(['beta', 'zeta']);
    expect(await webhooks.subscribedTargets('ten_a', 'record')).toEqual([]);
    expect(await webhooks.subscribedTargets('ten_b', 'record.sealed')).toEqual(['theirs']);
    expect(await webhooks.subscribedTargets('ten_missing', 'record.sealed')).toEqual([]);
  });

  it('finds the thresholds crossed in (before, after], by threshold then target, as numbers', async () => {
    await integration('ten_a', 'webhook', 'b', true, hook(['meter.threshold'], [100, 1000, 1e12]));
    await integration('ten_a', 'webhook', 'a', true, hook(['record.sealed', 'meter.threshold'], [1000, 50]));
    // Thresholds set, but not subscribed to meter.threshold; disabled; another channel; another tenant.
    await integration('ten_a', 'webhook', 'unsubscribed', true, hook(['record.sealed'], [100]));
    await integration('ten_a', 'webhook', 'off', false, hook(['meter.threshold'], [100]));
    await integration('ten_a', 'slack', 'chat', true, hook(['meter.threshold'], [100]));
    await integration('ten_b', 'webhook', 'theirs', true, hook(['meter.threshold'], [100]));
    // Subscribed without thresholds: nothing to cross.
    await integration('ten_a', 'webhook', 'c', true, hook(['meter.threshold']));
    const webhooks = db.store(WEBHOOKS);
    expect(await webhooks.crossedThresholds('ten_a', 0, 2000)).toStrictEqual([
      { target: 'a', threshold: 50 },
      { target: 'b', threshold: 100 },
      { target: 'a', threshold: 1000 },
      { target: 'b', threshold: 1000 },
    ]);
    // Exclusive below, inclusive above.
    expect(await webhooks.crossedThresholds('ten_a', 50, 100)).toStrictEqual([{ target: 'b', threshold: 100 }]);
    expect(await webhooks.crossedThresholds('ten_a', 100, 999)).toStrictEqual([]);
    expect(await webhooks.crossedThresholds('ten_a', 999_999_999_999, 1e12)).toStrictEqual([{ target: 'b', threshold: 1e12 }]);
    expect(await webhooks.crossedThresholds('ten_b', 99, 100)).toStrictEqual([{ target: 'theirs', threshold: 100 }]);
  });

  it('inserts a delivery once per target and event key, and finds it in its tenant and target only', async () => {
    const webhooks = db.store(WEBHOOKS);
    const d = delivery(1);
    expect(await webhooks.insertDelivery(d)).toBe(true);
    expect(await webhooks.insertDelivery(delivery(2, { eventKey: d.eventKey }))).toBe(false);
    expect(await webhooks.insertDelivery(delivery(3, { eventKey: d.eventKey, target: 'other' }))).toBe(true);
    expect(await webhooks.insertDelivery(delivery(4, { eventKey: d.eventKey, tenantId: 'ten_b' }))).toBe(true);
    // A repeated id is an error, not a silent duplicate.
    await expect(webhooks.insertDelivery(delivery(1, { eventKey: 'fresh' }))).rejects.toThrow();
    expect(await webhooks.findDelivery('ten_a', 'ops', d.id)).toStrictEqual(stored(d));
    expect(await webhooks.findDelivery('ten_a', 'ops', delivery(2).id)).toBeUndefined();
    expect(await webhooks.findDelivery('ten_a', 'other', d.id)).toBeUndefined();
    expect(await webhooks.findDelivery('ten_b', 'ops', d.id)).toBeUndefined();
    expect(await webhooks.findDelivery('ten_b', 'ops', delivery(4).id)).toStrictEqual(stored(delivery(4, { eventKey: d.eventKey, tenantId: 'ten_b' })));
  });

  it('lists deliveries newest first, filtered by status, paged by limit and offset', async () => {
    const webhooks = db.store(WEBHOOKS);
    await seedDeliveries(webhooks, 6, { evt_0002: 'delivered', evt_0003: 'failed', evt_0005: 'dead' });
    const ids = async (q: Partial<Parameters<WebhookStore['listDeliveries']>[0]>) =>
      (await webhooks.listDeliveries({ tenantId: 'ten_a', target: 'ops', limit: 100, offset: 0, ...q })).map((r) => r.id);
    expect(await ids({})).toEqual(['evt_0006', 'evt_0005', 'evt_0004', 'evt_0003', 'evt_0002', 'evt_0001']);
    expect(await ids({ statuses: [] })).toEqual(['evt_0006', 'evt_0005', 'evt_0004', 'evt_0003', 'evt_0002', 'evt_0001']);
    expect(await ids({ statuses: ['pending'] })).toEqual(['evt_0006', 'evt_0004', 'evt_0001']);
    expect(await ids({ statuses: ['failed', 'dead'] })).toEqual(['evt_0005', 'evt_0003']);
    expect(await ids({ limit: 2, offset: 1 })).toEqual(['evt_0005', 'evt_0004']);
    expect(await ids({ statuses: ['pending', 'delivered'], limit: 2, offset: 2 })).toEqual(['evt_0002', 'evt_0001']);
    expect(await ids({ offset: 6 })).toEqual([]);
    expect(await ids({ target: 'other' })).toEqual(['evt_0007']);
    const rows = await webhooks.listDeliveries({ tenantId: 'ten_a', target: 'ops', statuses: ['delivered'], limit: 10, offset: 0 });
    expect(Array.isArray(rows) && rows.constructor).toBe(Array);
    expect(rows).toStrictEqual([{ ...stored(delivery(2)), status: 'delivered' }]);
  });

  it('counts deliveries by status, every status present', async () => {
    const webhooks = db.store(WEBHOOKS);
    expect(await webhooks.countByStatus('ten_a', 'ops')).toStrictEqual({ pending: 0, delivered: 0, failed: 0, dead: 0 });
    await seedDeliveries(webhooks, 5, { evt_0001: 'delivered', evt_0002: 'delivered', evt_0003: 'dead' });
    expect(await webhooks.countByStatus('ten_a', 'ops')).toStrictEqual({ pending: 2, delivered: 2, failed: 0, dead: 1 });
    expect(await webhooks.countByStatus('ten_a', 'other')).toStrictEqual({ pending: 1, delivered: 0, failed: 0, dead: 0 });
  });

  it('finds the non-leased deliveries created in [from, to) with a status, by id', async () => {
    const webhooks = db.store(WEBHOOKS);
    await seedDeliveries(webhooks, 6, { evt_0002: 'dead', evt_0003: 'failed', evt_0004: 'dead' });
    await db.exec("UPDATE webhook_deliveries SET lease_owner = 'worker-1', lease_expires_at = ? WHERE id = 'evt_0005'", RUN_AT + 60_000);
    const from = '2025-01-01T00:00:02.000Z';
    const to = '2025-01-01T00:00:06.000Z';
    expect(await webhooks.deliveriesInRange('ten_a', 'ops', from, to, ['pending', 'failed', 'dead'])).toEqual(['evt_0002', 'evt_0003', 'evt_0004']);
    expect(await webhooks.deliveriesInRange('ten_a', 'ops', from, to, ['dead'])).toEqual(['evt_0002', 'evt_0004']);
    expect(await webhooks.deliveriesInRange('ten_a', 'ops', AT, '2025-01-01T01:00:00.000Z', ['pending'])).toEqual(['evt_0001', 'evt_0006']);
    expect(await webhooks.deliveriesInRange('ten_a', 'ops', AT, '2025-01-01T01:00:00.000Z', [])).toEqual([]);
    expect(await webhooks.deliveriesInRange('ten_a', 'other', AT, '2025-01-01T01:00:00.000Z', ['pending'])).toEqual(['evt_0007']);
    expect(await webhooks.deliveriesInRange('ten_b', 'ops', AT, '2025-01-01T01:00:00.000Z', ['pending'])).toEqual(['evt_0008']);
  });

  it('keeps signing keys: newest first, the current one retired with an end date, expired ones dropped', async () => {
    const webhooks = db.store(WEBHOOKS);
    expect(await webhooks.activeKeys('ten_a', 'ops', AT)).toEqual([]);
    await webhooks.addSigningKey('ten_a', 'ops', key(1), AT);
    await webhooks.addSigningKey('ten_a', 'other', key(9), AT);
    await webhooks.addSigningKey('ten_b', 'ops', key(8), AT);
    expect(await webhooks.activeKeys('ten_a', 'ops', AT)).toStrictEqual([{ key: key(1), createdAt: AT, retiresAt: null }]);

    const retires = '2025-01-02T00:00:00.000Z';
    await webhooks.retireCurrentKey('ten_a', 'ops', retires);
    await webhooks.addSigningKey('ten_a', 'ops', key(2), '2025-01-01T00:00:01.000Z');
    const both = [
      { key: key(2), createdAt: '2025-01-01T00:00:01.000Z', retiresAt: null },
      { key: key(1), createdAt: AT, retiresAt: retires },
    ];
    expect(await webhooks.activeKeys('ten_a', 'ops', '2025-01-01T12:00:00.000Z')).toStrictEqual(both);
    // retires_at is the first moment the old key no longer signs.
    expect(await webhooks.activeKeys('ten_a', 'ops', retires)).toStrictEqual([both[0]]);
    // A second retirement moves only the current key; the earlier end date stands.
    await webhooks.retireCurrentKey('ten_a', 'ops', '2025-01-03T00:00:00.000Z');
    expect(await webhooks.activeKeys('ten_a', 'ops', '2025-01-01T12:00:00.000Z')).toStrictEqual([
      { ...both[0], retiresAt: '2025-01-03T00:00:00.000Z' },
      both[1],
    ]);
    // Other targets and tenants untouched.
    expect(await webhooks.activeKeys('ten_a', 'other', '2025-01-05T00:00:00.000Z')).toStrictEqual([{ key: key(9), createdAt: AT, retiresAt: null }]);
    expect(await webhooks.activeKeys('ten_b', 'ops', '2025-01-05T00:00:00.000Z')).toStrictEqual([{ key: key(8), createdAt: AT, retiresAt: null }]);
    await expect(webhooks.addSigningKey('ten_a', 'ops', 'short', AT)).rejects.toThrow();
  });

  it('rolls a delivery and a key rotation back with the transaction', async () => {
    await db.store(WEBHOOKS).addSigningKey('ten_a', 'ops', key(1), AT);
    await expect(
      db.transaction(async (tx) => {
        const webhooks = tx.store(WEBHOOKS);
        expect(await webhooks.insertDelivery(delivery(1))).toBe(true);
        await webhooks.retireCurrentKey('ten_a', 'ops', '2025-01-02T00:00:00.000Z');
        await webhooks.addSigningKey('ten_a', 'ops', key(2), AT);
        expect(await webhooks.activeKeys('ten_a', 'ops', AT)).toHaveLength(2);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    const webhooks = db.store(WEBHOOKS);
    expect(await webhooks.findDelivery('ten_a', 'ops', delivery(1).id)).toBeUndefined();
    expect(await webhooks.countByStatus('ten_a', 'ops')).toStrictEqual({ pending: 0, delivered: 0, failed: 0, dead: 0 });
    expect(await webhooks.activeKeys('ten_a', 'ops', AT)).toStrictEqual([{ key: key(1), createdAt: AT, retiresAt: null }]);
    // The event key is free again.
    expect(await webhooks.insertDelivery(delivery(1))).toBe(true);
  });

  if (engine.name === 'postgres') describe('concurrent enqueues', () => {
    it('two transactions enqueueing one event for a target: one delivery, exactly one told true', async () => {
      const [first, second] = await interleaved(
        db,
        WEBHOOKS,
        (webhooks) => webhooks.insertDelivery(delivery(1)),
        // Starts while the first is open: waits for its outcome, then does nothing.
        (webhooks) => webhooks.insertDelivery(delivery(2, { eventKey: delivery(1).eventKey })),
      );
      expect([first, second]).toEqual([true, false]);
      expect(await db.store(WEBHOOKS).listDeliveries({ tenantId: 'ten_a', target: 'ops', limit: 10, offset: 0 })).toStrictEqual([stored(delivery(1))]);
    });

    it('the second enqueue succeeds when the first transaction rolls back', async () => {
      const both = await interleave(
        db,
        WEBHOOKS,
        (webhooks) => webhooks.insertDelivery(delivery(1)),
        (webhooks) => webhooks.insertDelivery(delivery(2, { eventKey: delivery(1).eventKey })),
        {
          atEnd: () => {
            throw new Error('refused');
          },
        },
      );
      const [first, second] = await Promise.allSettled([both.first, both.second]);
      expect(first.status).toBe('rejected');
      expect(second).toEqual({ status: 'fulfilled', value: true });
      expect(await db.store(WEBHOOKS).listDeliveries({ tenantId: 'ten_a', target: 'ops', limit: 10, offset: 0 })).toStrictEqual([
        stored(delivery(2, { eventKey: delivery(1).eventKey })),
      ]);
    });
  });
});
