/**
 * Epochs in a real companion process (companion/main.ts): a kill -9 in the middle of an epoch
 * close leaves nothing half-written, and the restarted process closes that period exactly
 * once; downtime across several boundaries is caught up in order.
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../companion/core/auth.ts';
import { ManualClock } from '../../companion/core/clock.ts';
import { loadConfig } from '../../companion/core/config.ts';
import { createMemoryLogger } from '../../companion/core/log.ts';
import { DATABASE_FILE } from '../../companion/core/db.ts';
import { closeDeps, openSqliteDeps } from '../../companion/deps.ts';
import { cleanupCompanions, start, tempDataDir } from '../helpers/companion-process.ts';

afterEach(cleanupCompanions);

const CADENCE = '2';

/**
 * Seals one record for each of `tenants` fresh tenants through the real pipeline, all at the
 * same instant (a held clock, `at`, now unless given), so one epoch holds them all and its
 * close takes a while.
 */
async function seed(dataDir: string, tenants: number, at = Date.now()): Promise<string[]> {
  const clock = new ManualClock(at);
  const deps = await openSqliteDeps(loadConfig({ SVC_DATA_DIR: dataDir, SVC_EPOCH_SECONDS: CADENCE }, []), { log: createMemoryLogger(), clock });
  const ids: string[] = [];
  try {
    const now = clock.now().toISOString();
    const insert = deps.store.db.prepare("INSERT INTO tenants (id, kind, display_name, retain_statutory_metadata, created_at, updated_at) VALUES (?, 'production', 't', 0, ?, ?)");
    // Each tenant subscribes a webhook target to receipt.anchored: the outbox enqueues events
    // for subscribers only, and the close must write them with everything else.
    const subscribe = deps.store.db.prepare(
      `INSERT INTO tenant_integrations (tenant_id, channel, target, enabled, config, secret_ref, created_at, updated_at)
       VALUES (?, 'webhook', 'anchors', 1, '{"url":"https://127.0.0.1:9/anchors","events":["receipt.anchored"]}', NULL, ?, ?)`,
    );
    await deps.store.transaction(async () => {
      for (let i = 0; i < tenants; i++) {
        const id = deps.ids.next('ten');
        insert.run(id, now, now);
        subscribe.run(id, now, now);
        ids.push(id);
      }
    });
    await Promise.all(
      ids.map((tenantId) =>
        deps.sealer.seal({
          auth: { tenantId, tenantKind: 'production', keyId: generateApiKey('production').prefix },
          vertical: 'eu-ai-act',
          actionType: 'output_marked',
          pack: 'eu-ai-act',
          kind: 'record',
          decision: null,
          status: 'recorded',
          reviewRoute: null,
          payloadHash: 'a'.repeat(64),
          manifestDigest: null,
          policyDigest: null,
          details: {},
          metering: { counted: true, credits: 1 },
          respond: (r) => ({ action_key: r.actionKey }),
        }),
      ),
    );
  } finally {
    await closeDeps(deps);
  }
  return ids;
}

const read = <T>(dataDir: string, sql: string): T[] => {
  const db = new Database(path.join(dataDir, DATABASE_FILE), { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
};

describe('epochs in a real process', () => {
  it('survive kill -9 during a close: nothing half-written, then the period closes exactly once', async () => {
    const dataDir = tempDataDir();
    const tenants = await seed(dataDir, 4000);

    const first = await start(dataDir, { SVC_EPOCH_SECONDS: CADENCE });
    await first.waitForLog(/"message":"epoch closing"/);
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    // Whenever the kill landed, the close is all or nothing: every epoch row has all its
    // leaves, every leaf its receipt.anchored delivery and its tenant's anchored size, and
    // nothing else exists.
    const after = read<{ counted: number; leaves: number; events: number; anchored: number }>(
      dataDir,
      "SELECT (SELECT coalesce(sum(tenant_count), 0) FROM epochs) AS counted, (SELECT count(*) FROM epoch_leaves) AS leaves, (SELECT count(*) FROM webhook_deliveries WHERE event = 'receipt.anchored') AS events, (SELECT count(*) FROM tenant_logs WHERE anchored_size > 0) AS anchored",
    )[0]!;
    expect(after.leaves).toBe(after.counted);
    expect(after.events).toBe(after.counted);
    expect(after.anchored).toBe(after.counted);
    expect([0, tenants.length]).toContain(after.counted);

    const second = await start(dataDir, { SVC_EPOCH_SECONDS: CADENCE });
    // Seeding spanned a few 2-second periods: wait until every one of them has closed.
    const anchored = () => read<{ n: number }>(dataDir, 'SELECT coalesce(sum(tenant_count), 0) AS n FROM epochs')[0]!.n;
    for (let i = 0; i < 300 && anchored() < tenants.length; i++) await new Promise((r) => setTimeout(r, 100));
    second.child.kill('SIGTERM');
    await second.exited;

    expect(anchored()).toBe(tenants.length);
    const closed = read<{ epoch_seq: number; tenant_count: number }>(dataDir, 'SELECT epoch_seq, tenant_count FROM epochs ORDER BY epoch_seq');
    expect(closed.map((r) => r.epoch_seq)).toEqual([...closed.keys()]);
    expect(closed[0]!.tenant_count).toBe(tenants.length); // one epoch holds them all, whether closed before or after the kill
    const events = read<{ tenant_id: string; n: number }>(dataDir, "SELECT tenant_id, count(*) AS n FROM webhook_deliveries WHERE event = 'receipt.anchored' GROUP BY tenant_id");
    expect(events).toHaveLength(tenants.length);
    expect(events.every((e) => e.n === 1)).toBe(true);
    expect(read(dataDir, 'SELECT tenant_id FROM tenant_logs WHERE anchored_size <> 1')).toEqual([]);
  }, 120_000);

  it('catch up every boundary missed while stopped, in order and chained, with nothing anchored twice', async () => {
    const dataDir = tempDataDir();
    // Sealed by a process that stopped three periods ago: at least three boundaries have
    // passed since (the seal's own period's end among them) when the next process starts.
    await seed(dataDir, 3, Date.now() - 3 * Number(CADENCE) * 1000);
    const c = await start(dataDir, { SVC_EPOCH_SECONDS: CADENCE });
    const epochs = async () => (await (await fetch(`${c.url}/epochs`)).json()).epochs as any[];
    let list = await epochs();
    for (let i = 0; i < 50 && list.length < 3; i++) {
      await new Promise((r) => setTimeout(r, 100));
      list = await epochs();
    }
    c.child.kill('SIGTERM');
    await c.exited;
    expect(list.length).toBeGreaterThanOrEqual(3);
    list.forEach((e, i) => {
      expect(e.header.epoch_seq).toBe(i);
      expect(e.header.prev_epoch_digest).toBe(i === 0 ? null : list[i - 1].header.epoch_digest);
      if (i > 0) expect(e.header.period_start).toBe(list[i - 1].header.period_end);
    });
    expect(list.reduce((n, e) => n + e.header.tenant_count, 0)).toBe(3);
  }, 60_000);
});
