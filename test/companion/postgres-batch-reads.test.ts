/**
 * A seal batch on PostgreSQL waits for three round trips whatever its size: BEGIN; the tenant's
 * lock and log head with the reads its seals make next (usage, webhook subscriptions, the log's
 * right edge: core/postgres/batch-reads.ts); and its rows written behind with the COMMIT right
 * after them (records, review items, submitters, tree nodes, idempotency keys, the usage and
 * tenant-log upserts: core/postgres/write-behind.ts). Counted on the sealer's connection, and
 * the rows checked to be the ones sealing statement by statement leaves. A read made ahead is
 * not trusted after the batch's own writes: a webhook target a seal adds is delivered the next
 * seal of the same batch.
 */
import fs from 'node:fs';
import postgres from 'postgres';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { signUpSandbox } from '../../companion/account/signup.ts';
import { StoredTrees } from '../../companion/anchoring/stored-tree.ts';
import { loadConfig } from '../../companion/core/config.ts';
import { createMemoryLogger } from '../../companion/core/log.ts';
import type { Pool } from '../../companion/core/postgres/connect.ts';
import { closeDeps, openDeps } from '../../companion/deps.ts';
import type { AppDeps } from '../../companion/deps.ts';
import { Sealer } from '../../companion/evidence/sealer.ts';
import type { SealOutcome, SealRequest } from '../../companion/evidence/sealer.ts';
import { createPostgresStore } from '../../companion/postgres-store.ts';
import type { PostgresStore } from '../../companion/postgres-store.ts';
import { sealParticipants } from '../../companion/seal-participants.ts';
import { sha256Hex } from '../../shared/hash.ts';
import { MerkleTree, leafHash } from '../../shared/merkle.ts';
import { startPostgres } from '../helpers/postgres.ts';
import type { TestPostgres } from '../helpers/postgres.ts';
import { roundTrips } from '../helpers/postgres-round-trips.ts';
import type { RoundTrips } from '../helpers/postgres-round-trips.ts';
import { makeTempDir } from './helpers.ts';

let deps: (AppDeps & { store: PostgresStore }) | undefined;
let dataDir: string | undefined;
const pools: Pool[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.end();
  if (deps) await closeDeps(deps);
  deps = undefined;
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

let pg: TestPostgres | undefined;
let databases = 0;
afterAll(() => pg?.stop());

interface Setup {
  deps: AppDeps & { store: PostgresStore };
  sealer: Sealer;
  tenantId: string;
  trips: RoundTrips;
  batches: { size: number; sealed: number }[];
}

/** A sandbox tenant, and a sealer whose one connection counts its round trips. */
async function setup(): Promise<Setup> {
  pg ??= startPostgres();
  const name = `batch_reads_${++databases}`;
  pg.psql(`CREATE DATABASE ${name}`);
  dataDir = makeTempDir('svc-batch-reads-');
  const url = `postgres:///${name}?host=${encodeURIComponent(pg.socketDir)}&user=postgres`;
  const opened = (await openDeps(loadConfig({ SVC_DATA_DIR: dataDir, SVC_SEAL_THREAD: '0', SVC_DATABASE_URL: url }, []), { log: createMemoryLogger() })) as AppDeps & {
    store: PostgresStore;
  };
  deps = opened;
  const { tenant } = await signUpSandbox({ tenants: opened.store.tenants, clock: opened.clock, ids: opened.ids }, 'batch-reads@example.com');
  const trips = roundTrips(pg.socketDir);
  // One connection, opened as core/postgres/connect.ts opens one, so every statement is on it.
  // (`socket` is the driver's documented option its type declarations leave out.)
  const options = {
    max: 1,
    user: 'postgres',
    socket: trips.socket,
    onnotice: () => {},
    types: { bigint: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (v: string) => Number(v) } },
  };
  const pool = postgres(`postgres:///${name}`, options as never) as unknown as Pool;
  pools.push(pool);
  const batches: { size: number; sealed: number }[] = [];
  const sealer = new Sealer({
    store: createPostgresStore(pool),
    participants: sealParticipants({ outbox: opened.webhooks.outbox, routing: opened.routing.participant }),
    keyring: opened.keyring,
    clock: opened.clock,
    ids: opened.ids,
    observer: { committed: ({ size, sealed }) => batches.push({ size, sealed: sealed.length }) },
  });
  return { deps: opened, sealer, tenantId: tenant.id, trips, batches };
}

/** A gate seal that pauses its action for review, as the law pack's gate seals one. */
function paused(tenantId: string, label: string, extra: Partial<SealRequest> = {}): SealRequest {
  return {
    auth: { tenantId, tenantKind: 'sandbox', keyId: 'key_test' },
    vertical: 'law',
    actionType: 'draft_reply',
    pack: 'law',
    kind: 'gate',
    decision: 'needs_review',
    status: 'needs_review',
    reviewRoute: 'partner',
    payloadHash: sha256Hex(label),
    manifestDigest: null,
    policyDigest: null,
    details: {},
    metering: { counted: true, credits: 1 },
    pauseForReview: { actionType: 'draft_reply', nextStep: 'wait_for_review', windowSeconds: 3600, rule: null },
    respond: (record) => ({ action_key: record.actionKey, tenant_seq: record.tenantSeq }),
    ...extra,
  };
}

async function sealTogether(sealer: Sealer, requests: SealRequest[]): Promise<SealOutcome[]> {
  return Promise.all(requests.map((r) => sealer.seal(r)));
}

async function rows<T>(d: Setup['deps'], query: string, ...params: unknown[]): Promise<T[]> {
  return [...(await d.store.sql.unsafe(query, params as never[]))] as T[];
}

describe('a seal batch on PostgreSQL', () => {
  it('waits for a few round trips however many seals it holds, and leaves the rows sealing statement by statement leaves', async () => {
    const s = await setup();
    // The first batch opens the connection and prepares the statements.
    await sealTogether(s.sealer, [paused(s.tenantId, 'first')]);
    s.trips.counting = true;
    const labels = Array.from({ length: 20 }, (_, i) => `seal ${i}`);
    const outcomes = await sealTogether(s.sealer, labels.map((l) => paused(s.tenantId, l)));
    s.trips.counting = false;
    expect(s.batches).toEqual([{ size: 1, sealed: 1 }, { size: 20, sealed: 20 }]);
    // BEGIN; lock, head and the reads ahead; the rows and COMMIT. Once the socket does not take
    // a large write at once, the driver holds the transaction's next statements and sends one
    // per answer (postgres.js), so the small statements after the records' (tree nodes, usage,
    // tenant log, COMMIT) may each go out after an answer: at most four more. Statement by
    // statement, the same batch waited for more than sixty.
    expect(s.trips.roundTrips).toBeLessThanOrEqual(3 + 4);
    // BEGIN, 5 with the lock, 7 tables written behind, COMMIT.
    expect(s.trips.statements).toBeLessThanOrEqual(14);

    const all = ['first', ...labels];
    const records = await rows<{ tenant_seq: number; action_key: string; payload_hash: string; attestation_hash: string; attestation: string }>(
      s.deps,
      'SELECT tenant_seq, action_key, payload_hash, attestation_hash, attestation FROM sealed_records WHERE tenant_id = $1 ORDER BY tenant_seq',
      s.tenantId,
    );
    expect(records.map((r) => r.payload_hash)).toEqual(all.map((l) => sha256Hex(l)));
    records.forEach((r, i) => expect((JSON.parse(r.attestation) as { prev_attestation_hash: string | null }).prev_attestation_hash).toBe(i === 0 ? null : records[i - 1]!.attestation_hash));
    expect(outcomes.map((o) => (o.body as { action_key: string }).action_key)).toEqual(records.slice(1).map((r) => r.action_key));
    // Review items in the seals' order (ids rise with them), each with its submitter.
    const items = await rows<{ action_key: string; status: string; approvals_required: number }>(s.deps, 'SELECT action_key, status, approvals_required FROM review_items WHERE tenant_id = $1 ORDER BY id', s.tenantId);
    expect(items).toEqual(records.map((r) => ({ action_key: r.action_key, status: 'pending', approvals_required: 1 })));
    const submitters = await rows<{ action_key: string }>(s.deps, 'SELECT action_key FROM review_context_submitters WHERE tenant_id = $1 ORDER BY action_key', s.tenantId);
    expect(submitters.map((r) => r.action_key)).toEqual(records.map((r) => r.action_key).sort());
    expect(await s.deps.store.usage.usage(s.tenantId)).toEqual({ actionsUsed: 21, creditsUsed: 0 });
    expect(await s.deps.store.anchoring.tenantLogSize(s.tenantId)).toBe(21);
    // The stored tree, read back from its nodes and leaves with no cache, is RFC 9162's.
    const expected = MerkleTree.fromLeafHashes(records.map((r) => leafHash(Buffer.from(r.attestation_hash, 'hex'))));
    expect(Buffer.from(await new StoredTrees(s.deps.store.anchoring).rootAt(s.tenantId, 21)).toString('hex')).toBe(Buffer.from(expected.root()).toString('hex'));

    // The next batches read the right edge ahead at sizes with unstored levels below a stored node.
    for (const size of [7, 9, 13]) await sealTogether(s.sealer, Array.from({ length: size }, (_, i) => paused(s.tenantId, `more ${size} ${i}`)));
    const more = await rows<{ attestation_hash: string }>(s.deps, 'SELECT attestation_hash FROM sealed_records WHERE tenant_id = $1 ORDER BY tenant_seq', s.tenantId);
    expect(more.length).toBe(21 + 7 + 9 + 13);
    const tree = MerkleTree.fromLeafHashes(more.map((r) => leafHash(Buffer.from(r.attestation_hash, 'hex'))));
    expect(Buffer.from(await new StoredTrees(s.deps.store.anchoring).rootAt(s.tenantId, more.length)).toString('hex')).toBe(Buffer.from(tree.root()).toString('hex'));
    expect(await s.deps.store.usage.usage(s.tenantId)).toEqual({ actionsUsed: more.length, creditsUsed: 0 });
  });

  it('answers a webhook subscription read ahead only until the batch writes: a target one seal adds is delivered the next', async () => {
    const s = await setup();
    await sealTogether(s.sealer, [paused(s.tenantId, 'first')]);
    const target = 'http://127.0.0.1:9/hook';
    const outcomes = await sealTogether(s.sealer, [
      paused(s.tenantId, 'adds a target', {
        async onSealed(_record, tx) {
          await tx.integrations.save({ tenantId: s.tenantId, channel: 'webhook', target, enabled: true, config: JSON.stringify({ events: ['record.sealed'] }), secretRef: null, at: new Date().toISOString() });
        },
      }),
      paused(s.tenantId, 'after it'),
    ]);
    expect(s.batches.at(-1)).toEqual({ size: 2, sealed: 2 });
    const deliveries = await rows<{ event_key: string; target: string }>(s.deps, "SELECT event_key, target FROM webhook_deliveries WHERE tenant_id = $1 AND event = 'record.sealed'", s.tenantId);
    // The seal that added it had enqueued its event before; the one after it is delivered.
    expect(deliveries).toEqual([{ event_key: `record.sealed:${(outcomes[1]!.body as { action_key: string }).action_key}`, target }]);
  });

  it('writes idempotency keys behind: a key saved earlier in the batch is found by a later request with it, answered as its replay', async () => {
    const s = await setup();
    const claim = (key: string) => ({ scope: 'POST /v1/gate', key, requestHash: `h ${key}` });
    const outcomes = await sealTogether(s.sealer, [
      paused(s.tenantId, 'a', { idempotency: claim('same') }),
      paused(s.tenantId, 'b', { idempotency: claim('other') }),
      paused(s.tenantId, 'a', { idempotency: claim('same') }),
      paused(s.tenantId, 'c'),
    ]);
    expect(s.batches).toEqual([{ size: 4, sealed: 3 }]);
    expect(outcomes.map((o) => o.replayed)).toEqual([false, false, true, false]);
    expect(outcomes[2]!.body).toEqual(outcomes[0]!.body);
    const keys = await rows<{ action_key: string }>(s.deps, 'SELECT action_key FROM idempotency_keys WHERE tenant_id = $1 ORDER BY action_key', s.tenantId);
    expect(keys.map((k) => k.action_key)).toEqual([0, 1].map((i) => (outcomes[i]!.body as { action_key: string }).action_key).sort());
    expect((await rows(s.deps, 'SELECT 1 FROM sealed_records WHERE tenant_id = $1', s.tenantId)).length).toBe(3);
    expect(await s.deps.store.usage.usage(s.tenantId)).toEqual({ actionsUsed: 3, creditsUsed: 0 });
  });
});
