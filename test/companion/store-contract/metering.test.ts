/** The usage counters (metering capability) behave the same on SQLite and PostgreSQL. */
import { describe, expect, it } from 'vitest';
import { createPostgresUsageStore } from '../../../companion/metering/postgres-store.ts';
import { createSqliteUsageStore } from '../../../companion/metering/sqlite-store.ts';
import type { UsageStore } from '../../../companion/metering/store.ts';
import { databasePerCase, engines, seedTenants } from './engines.ts';
import type { StoreFactories } from './engines.ts';

const USAGE: StoreFactories<UsageStore> = { sqlite: createSqliteUsageStore, postgres: createPostgresUsageStore };
const AT = '2025-01-01T00:00:00.000Z';

describe.each(engines())('usage store on $name', (engine) => {
  const db = databasePerCase(engine, (fresh) => seedTenants(fresh, ['ten_a'], AT));

  it('starts at zero and adds, returning the totals after', async () => {
    const usage = db.store(USAGE);
    expect(await usage.usage('ten_a')).toEqual({ actionsUsed: 0, creditsUsed: 0 });
    expect(await usage.add('ten_a', 1, 3, AT)).toEqual({ actionsUsed: 1, creditsUsed: 3 });
    expect(await usage.add('ten_a', 2, 0, AT)).toEqual({ actionsUsed: 3, creditsUsed: 3 });
    expect(await usage.usage('ten_a')).toEqual({ actionsUsed: 3, creditsUsed: 3 });
  });

  it('rolls an addition back with its transaction', async () => {
    await expect(
      db.transaction(async (tx) => {
        await tx.store(USAGE).add('ten_a', 5, 5, AT);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await db.store(USAGE).usage('ten_a')).toEqual({ actionsUsed: 0, creditsUsed: 0 });
  });
});
