/**
 * Scale-out on PostgreSQL: two companion processes (real processes from the sources) on one
 * database (Debian's server, unix socket only) seal gate decisions for the same tenant at once.
 * Their records form one gapless tenant log whose previous-hash chain is intact and whose every
 * seal verifies; then one process is killed with SIGKILL in the middle of a load, and every
 * decision either process acknowledged is still there, in the same unbroken chain.
 */
import { describe, expect, it } from 'vitest';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import { failedChecks, verifyEvidence } from '../../shared/verify.ts';
import { gateLoad, start, tempDataDir } from '../helpers/companion-process.ts';
import type { Companion } from '../helpers/companion-process.ts';
import { GATE, gateDatabase } from '../helpers/gate-database.ts';
import { expectOneUnbrokenChain } from '../helpers/tenant-log.ts';

const db = gateDatabase();

/** Companions this test is killing: requests to them may fail, and only what they acknowledged counts. */
const killing = new Set<Companion>();

/** `n` gate decisions to `c`, `concurrency` at a time: the action keys it acknowledged. */
const load = (c: Companion, apiKey: string, n: number, concurrency: number) => gateLoad(c.url, apiKey, GATE, { n, concurrency, killed: () => killing.has(c) });

describe('two companions on one PostgreSQL database', () => {
  it('seal one tenant into one gapless, verifiable chain, and a kill -9 loses nothing acknowledged', async () => {
    const url = db.url();
    // One data directory for both: they share the production signing key file in it (the
    // first creates it), as companions behind one load balancer share one key custody.
    const dataDir = tempDataDir();
    const a = await start(dataDir, { SVC_DATABASE_URL: url });
    const b = await start(dataDir, { SVC_DATABASE_URL: url });
    const { tenantId, apiKey } = db.productionTenant('ten_scale');

    const [fromA, fromB] = await Promise.all([load(a, apiKey, 120, 10), load(b, apiKey, 120, 10)]);
    expect(fromA).toHaveLength(120);
    expect(fromB).toHaveLength(120);
    let log = db.tenantLog(tenantId);
    expect(log).toHaveLength(240);
    expectOneUnbrokenChain(log);
    expect(new Set(log.map((e) => e.action_key))).toEqual(new Set([...fromA, ...fromB]));

    // Every seal verifies against the keys either companion publishes (they are the same).
    const keys = trustedKeySet(await (await fetch(`${b.url}/.well-known/service-keys.json`)).json());
    for (const actionKey of [...fromA.slice(0, 20), ...fromB.slice(0, 20)]) {
      const record = (await (await fetch(`${a.url}/v1/records/${actionKey}`, { headers: { 'x-service-key': apiKey } })).json()) as { verify_request: Parameters<typeof verifyEvidence>[0] };
      expect(failedChecks(await verifyEvidence(record.verify_request, keys))).toEqual([]);
    }

    // Kill B in the middle of a second load on both.
    const loadA = load(a, apiKey, 150, 10);
    const loadB = load(b, apiKey, 1000, 10);
    while (db.tenantLog(tenantId).length < 300) await new Promise((r) => setTimeout(r, 20));
    killing.add(b);
    b.child.kill('SIGKILL');
    expect(await b.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const [moreA, moreB] = await Promise.all([loadA, loadB]);
    expect(moreA).toHaveLength(150);
    expect(moreB.length).toBeGreaterThan(0);

    log = db.tenantLog(tenantId);
    expectOneUnbrokenChain(log);
    const sealed = new Set(log.map((e) => e.action_key));
    for (const key of [...fromA, ...fromB, ...moreA, ...moreB]) expect(sealed.has(key)).toBe(true);
    // The survivor goes on appending to the same chain.
    expect(await load(a, apiKey, 5, 1)).toHaveLength(5);
    expectOneUnbrokenChain(db.tenantLog(tenantId));
  });
});
