/** The tenant integrations (integrations capability) behave the same on SQLite and PostgreSQL. */
import { describe, expect, it } from 'vitest';
import { createPostgresIntegrationStore } from '../../../companion/integrations/postgres-store.ts';
import { createSqliteIntegrationStore } from '../../../companion/integrations/sqlite-store.ts';
import type { IntegrationRow, IntegrationStore, SaveIntegration } from '../../../companion/integrations/store.ts';
import { databasePerCase, engines, interleaved, seedTenants } from './engines.ts';
import type { StoreFactories } from './engines.ts';

const INTEGRATIONS: StoreFactories<IntegrationStore> = { sqlite: createSqliteIntegrationStore, postgres: createPostgresIntegrationStore };
const AT = '2025-01-01T00:00:00.000Z';
const T1 = '2025-01-01T01:00:00.000Z';
const T2 = '2025-01-01T02:00:00.000Z';
const T3 = '2025-01-01T03:00:00.000Z';

const setup = (over: Partial<SaveIntegration> = {}): SaveIntegration => ({
  tenantId: 'ten_a',
  channel: 'webhook',
  target: 'ops',
  enabled: true,
  config: '{"url":"https://hooks.example.com/a","events":["record.sealed"]}',
  secretRef: null,
  at: AT,
  ...over,
});

/** The row a first save of `s` creates. */
const created = (s: SaveIntegration): IntegrationRow => ({
  tenantId: s.tenantId,
  channel: s.channel,
  target: s.target,
  enabled: s.enabled,
  config: s.config,
  secretRef: s.secretRef,
  createdAt: s.at,
  updatedAt: s.at,
  consecutiveFailures: 0,
  failingSince: null,
  disabledAt: null,
  disabledReason: null,
});

describe.each(engines())('integration store on $name', (engine) => {
  const db = databasePerCase(engine, (fresh) => seedTenants(fresh, ['ten_a', 'ten_b'], AT));

  it('creates a setup and finds it by tenant, channel and target only', async () => {
    const integrations = db.store(INTEGRATIONS);
    expect(await integrations.find('ten_a', 'webhook', 'ops')).toBeUndefined();
    const s = setup({ enabled: false, secretRef: 'env:HOOK_SECRET' });
    await integrations.save(s);
    expect(await integrations.find('ten_a', 'webhook', 'ops')).toStrictEqual(created(s));
    expect(await integrations.find('ten_b', 'webhook', 'ops')).toBeUndefined();
    expect(await integrations.find('ten_a', 'slack', 'ops')).toBeUndefined();
    expect(await integrations.find('ten_a', 'webhook', 'other')).toBeUndefined();
  });

  it('lists a tenant\'s setups by channel then target, in byte order', async () => {
    const integrations = db.store(INTEGRATIONS);
    for (const [channel, target] of [['webhook', 'b'], ['slack', 'z'], ['webhook', 'B'], ['webhook', 'a'], ['email', 'ops']] as const) {
      await integrations.save(setup({ channel, target }));
    }
    await integrations.save(setup({ tenantId: 'ten_b', channel: 'webhook', target: 'theirs' }));
    const list = await integrations.list('ten_a');
    expect(list.map((r) => `${r.channel}/${r.target}`)).toEqual(['email/ops', 'slack/z', 'webhook/B', 'webhook/a', 'webhook/b']);
    expect(list[0]).toStrictEqual(created(setup({ channel: 'email', target: 'ops' })));
    expect(await integrations.list('ten_missing')).toEqual([]);
  });

  it('replaces a setup on a second save, keeping its creation time', async () => {
    const integrations = db.store(INTEGRATIONS);
    await integrations.save(setup({ secretRef: 'env:A' }));
    const second = setup({ enabled: false, config: '{"url":"https://hooks.example.com/b","events":[]}', secretRef: null, at: T1 });
    await integrations.save(second);
    expect(await integrations.find('ten_a', 'webhook', 'ops')).toStrictEqual({ ...created(second), createdAt: AT });
  });

  it('counts a failure streak from its first failure, ends it on success, and answers zero for an unknown target', async () => {
    const integrations = db.store(INTEGRATIONS);
    await integrations.save(setup());
    expect(await integrations.recordFailure('ten_a', 'webhook', 'ops', T1)).toStrictEqual({ consecutiveFailures: 1, failingSince: T1 });
    expect(await integrations.recordFailure('ten_a', 'webhook', 'ops', T2)).toStrictEqual({ consecutiveFailures: 2, failingSince: T1 });
    expect(await integrations.find('ten_a', 'webhook', 'ops')).toMatchObject({ consecutiveFailures: 2, failingSince: T1 });
    // Another tenant's target of that name is not touched.
    expect(await integrations.recordFailure('ten_b', 'webhook', 'ops', T2)).toStrictEqual({ consecutiveFailures: 0, failingSince: T2 });
    await integrations.recordSuccess('ten_a', 'webhook', 'ops');
    expect(await integrations.find('ten_a', 'webhook', 'ops')).toMatchObject({ consecutiveFailures: 0, failingSince: null });
    // Success with no streak changes nothing; the next failure starts afresh.
    await integrations.recordSuccess('ten_a', 'webhook', 'ops');
    await integrations.recordSuccess('ten_a', 'webhook', 'missing');
    expect(await integrations.recordFailure('ten_a', 'webhook', 'ops', T3)).toStrictEqual({ consecutiveFailures: 1, failingSince: T3 });
    expect(await integrations.find('ten_a', 'webhook', 'ops')).toStrictEqual({ ...created(setup()), consecutiveFailures: 1, failingSince: T3 });
  });

  it('disables once (the first time and reason stand); saving enabled clears it, saving disabled keeps it', async () => {
    const integrations = db.store(INTEGRATIONS);
    await integrations.save(setup());
    await integrations.recordFailure('ten_a', 'webhook', 'ops', T1);
    await integrations.disable('ten_a', 'webhook', 'ops', T2, 'failing since 01:00');
    await integrations.disable('ten_a', 'webhook', 'ops', T3, 'again');
    await integrations.disable('ten_b', 'webhook', 'ops', T3, 'not theirs');
    const disabled = { ...created(setup()), consecutiveFailures: 1, failingSince: T1, disabledAt: T2, disabledReason: 'failing since 01:00' };
    expect(await integrations.find('ten_a', 'webhook', 'ops')).toStrictEqual(disabled);

    await integrations.save(setup({ enabled: false, at: T3 }));
    expect(await integrations.find('ten_a', 'webhook', 'ops')).toStrictEqual({ ...disabled, enabled: false, updatedAt: T3 });

    await integrations.save(setup({ enabled: true, at: T3 }));
    expect(await integrations.find('ten_a', 'webhook', 'ops')).toStrictEqual({ ...created(setup()), updatedAt: T3 });
  });

  it('rolls its writes back with the transaction', async () => {
    await db.store(INTEGRATIONS).save(setup());
    await expect(
      db.transaction(async (tx) => {
        const integrations = tx.store(INTEGRATIONS);
        await integrations.save(setup({ target: 'second' }));
        expect(await integrations.recordFailure('ten_a', 'webhook', 'ops', T1)).toStrictEqual({ consecutiveFailures: 1, failingSince: T1 });
        await integrations.disable('ten_a', 'webhook', 'ops', T1, 'down');
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    const integrations = db.store(INTEGRATIONS);
    expect(await integrations.list('ten_a')).toStrictEqual([created(setup())]);
  });

  if (engine.name === 'postgres') describe('concurrent failures', () => {
    it('two transactions recording a failure at once count the streak exactly', async () => {
      const integrations = db.store(INTEGRATIONS);
      await integrations.save(setup());
      const [first, second] = await interleaved(
        db,
        INTEGRATIONS,
        (integrations) => integrations.recordFailure('ten_a', 'webhook', 'ops', T1),
        // Starts while the first is open: waits for its row, then adds to the committed count.
        (integrations) => integrations.recordFailure('ten_a', 'webhook', 'ops', T2),
      );
      expect(first).toStrictEqual({ consecutiveFailures: 1, failingSince: T1 });
      expect(second).toStrictEqual({ consecutiveFailures: 2, failingSince: T1 });
      expect(await integrations.find('ten_a', 'webhook', 'ops')).toMatchObject({ consecutiveFailures: 2, failingSince: T1 });
    });

    it('four transactions recording five failures each leave a streak of twenty', async () => {
      const integrations = db.store(INTEGRATIONS);
      await integrations.save(setup());
      const fail = () =>
        db.transaction(async (tx) => {
          const seen: number[] = [];
          for (let i = 0; i < 5; i++) seen.push((await tx.store(INTEGRATIONS).recordFailure('ten_a', 'webhook', 'ops', T1)).consecutiveFailures);
          return seen;
        });
      const seen = (await Promise.all([fail(), fail(), fail(), fail()])).flat().sort((a, b) => a - b);
      expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(await integrations.find('ten_a', 'webhook', 'ops')).toMatchObject({ consecutiveFailures: 20 });
    });
  });
});
