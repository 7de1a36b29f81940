/**
 * Scale-out on PostgreSQL: two companion processes (real processes from the sources) on one
 * database (Debian's server, unix socket only) seal gate decisions for the same tenant at once.
 * Their records form one gapless tenant log whose previous-hash chain is intact and whose every
 * seal verifies; then one process is killed with SIGKILL in the middle of a load, and every
 * decision either process acknowledged is still there, in the same unbroken chain.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import { failedChecks, verifyEvidence } from '../../shared/verify.ts';
import { generateApiKey } from '../../companion/core/auth.ts';
import { cleanupCompanions, gateLoad, start, tempDataDir } from '../helpers/companion-process.ts';
import type { Companion } from '../helpers/companion-process.ts';
import { startPostgres } from '../helpers/postgres.ts';
import { expectOneUnbrokenChain } from '../helpers/tenant-log.ts';
import type { LogEntry } from '../helpers/tenant-log.ts';
import type { TestPostgres } from '../helpers/postgres.ts';

const GATE = {
  pack: 'law',
  proposed_action: 'Draft a reply to opposing counsel about the discovery schedule in matter 42.',
  law_context: { matter_band: 'moderate', tool_id: 'drafting-assistant', doctrine_anchor: 'competence', jurisdiction: 'US-NY' },
};

let pg: TestPostgres;
beforeAll(() => {
  pg = startPostgres();
  pg.psql('CREATE DATABASE gate');
}, 60_000);
afterAll(() => pg.stop());
afterEach(() => cleanupCompanions());

/** A production tenant (no sandbox allowance) and its key, written as rows once the schema exists. */
function productionTenant(): { tenantId: string; apiKey: string } {
  const key = generateApiKey('production');
  const at = new Date().toISOString();
  pg.psql(`\\c gate
    INSERT INTO tenants (id, kind, display_name, retain_statutory_metadata, created_at, updated_at) VALUES ('ten_scale', 'production', 'Scale-out', 0, '${at}', '${at}');
    INSERT INTO api_keys (id, tenant_id, key_sha256, prefix, last_four, created_at) VALUES ('key_scale', 'ten_scale', '\\x${Buffer.from(key.hash).toString('hex')}', '${key.prefix}', '${key.lastFour}', '${at}');`);
  return { tenantId: 'ten_scale', apiKey: key.key };
}

/** Companions this test is killing: requests to them may fail, and only what they acknowledged counts. */
const killing = new Set<Companion>();

/** `n` gate decisions to `c`, `concurrency` at a time: the action keys it acknowledged. */
const load = (c: Companion, apiKey: string, n: number, concurrency: number) => gateLoad(c.url, apiKey, GATE, { n, concurrency, killed: () => killing.has(c) });

function tenantLog(tenantId: string): LogEntry[] {
  const json = pg.psql(`\\c gate
    SELECT coalesce(json_agg(json_build_object('tenant_seq', tenant_seq, 'action_key', action_key, 'attestation_hash', attestation_hash,
      'prev', attestation::jsonb ->> 'prev_attestation_hash') ORDER BY tenant_seq), '[]') FROM sealed_records WHERE tenant_id = '${tenantId}';`);
  return JSON.parse(json.trim().split('\n').at(-1)!) as LogEntry[];
}

describe('two companions on one PostgreSQL database', () => {
  it('seal one tenant into one gapless, verifiable chain, and a kill -9 loses nothing acknowledged', async () => {
    const url = `postgres:///gate?host=${encodeURIComponent(pg.socketDir)}&user=postgres`;
    // One data directory for both: they share the production signing key file in it (the
    // first creates it), as companions behind one load balancer share one key custody.
    const dataDir = tempDataDir();
    const a = await start(dataDir, { SVC_DATABASE_URL: url });
    const b = await start(dataDir, { SVC_DATABASE_URL: url });
    const { tenantId, apiKey } = productionTenant();

    const [fromA, fromB] = await Promise.all([load(a, apiKey, 120, 10), load(b, apiKey, 120, 10)]);
    expect(fromA).toHaveLength(120);
    expect(fromB).toHaveLength(120);
    let log = tenantLog(tenantId);
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
    while (tenantLog(tenantId).length < 300) await new Promise((r) => setTimeout(r, 20));
    killing.add(b);
    b.child.kill('SIGKILL');
    expect(await b.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const [moreA, moreB] = await Promise.all([loadA, loadB]);
    expect(moreA).toHaveLength(150);
    expect(moreB.length).toBeGreaterThan(0);

    log = tenantLog(tenantId);
    expectOneUnbrokenChain(log);
    const sealed = new Set(log.map((e) => e.action_key));
    for (const key of [...fromA, ...fromB, ...moreA, ...moreB]) expect(sealed.has(key)).toBe(true);
    // The survivor goes on appending to the same chain.
    expect(await load(a, apiKey, 5, 1)).toHaveLength(5);
    expectOneUnbrokenChain(tenantLog(tenantId));
  });
});
