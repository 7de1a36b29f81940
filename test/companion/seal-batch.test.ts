/**
 * One group-commit batch (evidence/sealer.ts) in which one seal fails: whether it is refused
 * before it writes anything (the sandbox allowance, a reused idempotency key) or fails after
 * its rows are written (a participant, the request's own onSealed, a statement of its own), the
 * others in the batch are sealed and committed together, the tenant's log stays one gapless
 * chain, and the failed one is answered with its own error and leaves no row behind. On both
 * engines: on PostgreSQL a batch writes its records and tree nodes behind, a multi-row INSERT
 * per table (core/postgres/write-behind.ts), so a failing row is noticed late and the batch is
 * sealed again to find whose it was.
 */
import fs from 'node:fs';
import postgres from 'postgres';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { signUpSandbox } from '../../companion/account/signup.ts';
import { StoredTrees } from '../../companion/anchoring/stored-tree.ts';
import { loadConfig } from '../../companion/core/config.ts';
import { ProblemError } from '../../companion/core/errors.ts';
import { createMemoryLogger } from '../../companion/core/log.ts';
import type { Pool } from '../../companion/core/postgres/connect.ts';
import { closeDeps, openDeps } from '../../companion/deps.ts';
import type { AppDeps } from '../../companion/deps.ts';
import type { SealParticipant } from '../../companion/evidence/participants.ts';
import { Sealer } from '../../companion/evidence/sealer.ts';
import type { SealOutcome, SealRequest } from '../../companion/evidence/sealer.ts';
import { SANDBOX_ACTION_ALLOWANCE } from '../../companion/metering/credits.ts';
import { createPostgresStore } from '../../companion/postgres-store.ts';
import type { PostgresStore } from '../../companion/postgres-store.ts';
import { sealParticipants } from '../../companion/seal-participants.ts';
import type { SqliteStore } from '../../companion/store.ts';
import { sha256Hex } from '../../shared/hash.ts';
import { MerkleTree, leafHash } from '../../shared/merkle.ts';
import { numberedPlaceholders, startPostgres } from '../helpers/postgres.ts';
import type { TestPostgres } from '../helpers/postgres.ts';
import { makeTempDir } from './helpers.ts';

type Engine = 'sqlite' | 'postgres';

let deps: AppDeps & { store: SqliteStore | PostgresStore };
let dataDir: string | undefined;
/** Pools a test opened beside its deps (the statement-counting one). */
const pools: Pool[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.end();
  if (deps) await closeDeps(deps);
  deps = undefined as never;
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

/** One PostgreSQL server for the file, started on first use; a database per test. */
let pg: TestPostgres | undefined;
let databases = 0;
afterAll(() => pg?.stop());

function postgresUrl(): string {
  pg ??= startPostgres();
  const name = `seal_batch_${++databases}`;
  pg.psql(`CREATE DATABASE ${name}`);
  return `postgres:///${name}?host=${encodeURIComponent(pg.socketDir)}&user=postgres`;
}

/** One statement on the test's database, `?` placeholders on either engine. */
async function sql<T>(query: string, ...params: unknown[]): Promise<T[]> {
  const store = deps.store;
  if (store.engine === 'postgres') return [...(await store.sql.unsafe(numberedPlaceholders(query), params as never[]))] as T[];
  const statement = store.db.prepare(query);
  return (statement.reader ? statement.all(...params) : (statement.run(...params), [])) as T[];
}

/** A gate seal of tenant `tenantId` whose payload is `label` (found again by its payload hash). */
function request(tenantId: string, label: string, extra: Partial<SealRequest> = {}): SealRequest {
  return {
    auth: { tenantId, tenantKind: 'sandbox', keyId: 'key_test' },
    vertical: 'law',
    actionType: 'draft_reply',
    pack: 'law',
    kind: 'gate',
    decision: 'allow',
    status: 'allowed',
    reviewRoute: null,
    payloadHash: sha256Hex(label),
    manifestDigest: null,
    policyDigest: null,
    details: {},
    metering: { counted: true, credits: 1 },
    respond: (record) => ({ action_key: record.actionKey, tenant_seq: record.tenantSeq }),
    ...extra,
  };
}

/**
 * A participant after the service's own that fails the seals whose annotations ask it to: after
 * their rows are written (`fail`), or before, with an error that is not a refusal, as a failed
 * statement would be (`failAdmit`; on PostgreSQL such a statement aborts the whole transaction).
 */
const failing: SealParticipant = {
  name: 'failing',
  admit(request) {
    if (request.annotations?.failAdmit === true) throw new Error('a statement failed');
  },
  sealed({ request }) {
    if (request.annotations?.fail === true) throw new ProblemError({ status: 409, code: 'conflict', detail: 'refused by the test participant' });
  },
};

interface Setup {
  sealer: Sealer;
  tenantId: string;
  batches: { size: number; sealed: number }[];
  /** PostgreSQL only, with `countStatements`: the statements the sealer's pool has sent. */
  statements: string[];
}

async function setup(engine: Engine, options: { countStatements?: boolean } = {}): Promise<Setup> {
  dataDir = makeTempDir('svc-seal-batch-');
  const url = engine === 'postgres' ? postgresUrl() : undefined;
  deps = await openDeps(loadConfig({ SVC_DATA_DIR: dataDir, SVC_SEAL_THREAD: '0', ...(url ? { SVC_DATABASE_URL: url } : {}) }, []), { log: createMemoryLogger() });
  const { tenant } = await signUpSandbox({ tenants: deps.store.tenants, clock: deps.clock, ids: deps.ids }, 'seal-batch@example.com');
  const tenantId = tenant.id;
  const batches: { size: number; sealed: number }[] = [];
  const statements: string[] = [];
  let store = deps.store;
  if (options.countStatements && url) {
    // The sealer's own pool, opened as core/postgres/connect.ts opens one, seeing every statement.
    const parsed = new URL(url);
    const pool = postgres(`postgres://${parsed.pathname}`, {
      host: pg!.socketDir,
      user: 'postgres',
      max: 2,
      onnotice: () => {},
      types: { bigint: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (v: string) => Number(v) } },
      debug: (_connection: unknown, query: string) => statements.push(query),
    }) as unknown as Pool;
    pools.push(pool);
    store = createPostgresStore(pool);
  }
  const sealer = new Sealer({
    store,
    participants: [...sealParticipants({ outbox: deps.webhooks.outbox, routing: deps.routing.participant }), failing],
    keyring: deps.keyring,
    clock: deps.clock,
    ids: deps.ids,
    observer: { committed: ({ size, sealed }) => batches.push({ size, sealed: sealed.length }) },
  });
  return { sealer, tenantId, batches, statements };
}

/** Seals every request in one turn of the event loop (one batch); each outcome or error. */
async function sealTogether(sealer: Sealer, requests: SealRequest[]): Promise<({ ok: true; value: SealOutcome } | { ok: false; error: unknown })[]> {
  return Promise.all(requests.map((r) => sealer.seal(r).then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }))));
}

async function recordsOf(tenantId: string): Promise<{ tenant_seq: number; payload_hash: string; attestation_hash: string }[]> {
  return (await sql<{ tenant_seq: number | string; payload_hash: string; attestation_hash: string }>('SELECT tenant_seq, payload_hash, attestation_hash FROM sealed_records WHERE tenant_id = ? ORDER BY tenant_seq', tenantId)).map(
    (r) => ({ ...r, tenant_seq: Number(r.tenant_seq) }),
  );
}

async function usedActions(tenantId: string): Promise<number> {
  return (await deps.store.usage.usage(tenantId)).actionsUsed;
}

/** The other seals of the batch are sealed, in order, with consecutive leaves; `failed` left nothing. */
async function expectOthersSealed(tenantId: string, outcomes: Awaited<ReturnType<typeof sealTogether>>, labels: string[], failed: number): Promise<void> {
  const sealed = labels.filter((_, i) => i !== failed);
  outcomes.forEach((o, i) => expect(o.ok, `seal ${i}`).toBe(i !== failed));
  const records = await recordsOf(tenantId);
  expect(records.map((r) => r.payload_hash)).toEqual(sealed.map((l) => sha256Hex(l)));
  expect(records.map((r) => r.tenant_seq)).toEqual(sealed.map((_, i) => i));
  // Each answer names its own record, and the log has one leaf per record.
  const answers = outcomes.flatMap((o) => (o.ok ? [o.value.body as { tenant_seq: number }] : []));
  expect(answers.map((a) => a.tenant_seq)).toEqual(sealed.map((_, i) => i));
  expect(await deps.store.anchoring.tenantLogSize(tenantId)).toBe(sealed.length);
  expect(await usedActions(tenantId)).toBe(sealed.length);
}

describe.each<Engine>(['sqlite', 'postgres'])('a seal that fails inside a batch (%s)', (engine) => {
  it('after its rows are written (a participant): the others are sealed in one commit, it is answered with its error and leaves nothing', async () => {
    const { sealer, tenantId, batches } = await setup(engine);
    const labels = ['a', 'b', 'c', 'd', 'e'];
    const outcomes = await sealTogether(sealer, labels.map((l, i) => request(tenantId, l, i === 2 ? { annotations: { fail: true } } : {})));
    await expectOthersSealed(tenantId, outcomes, labels, 2);
    const error = (outcomes[2] as { error: unknown }).error;
    expect(error).toBeInstanceOf(ProblemError);
    expect((error as ProblemError).code).toBe('conflict');
    expect(batches).toEqual([{ size: 5, sealed: 4 }]);
  });

  it('before it writes anything, with an error that is not a refusal: the others are sealed in one commit, it is answered with its error', async () => {
    const { sealer, tenantId, batches } = await setup(engine);
    const labels = ['a', 'b', 'c', 'd'];
    const outcomes = await sealTogether(sealer, labels.map((l, i) => request(tenantId, l, i === 0 ? { annotations: { failAdmit: true } } : {})));
    await expectOthersSealed(tenantId, outcomes, labels, 0);
    expect(((outcomes[0] as { error: unknown }).error as Error).message).toBe('a statement failed');
    expect(batches).toEqual([{ size: 4, sealed: 3 }]);
  });

  it("after its rows are written (the request's own onSealed): the others are sealed, it is answered with its error", async () => {
    const { sealer, tenantId } = await setup(engine);
    const labels = ['a', 'b', 'c', 'd'];
    const outcomes = await sealTogether(
      sealer,
      labels.map((l, i) =>
        request(tenantId, l, {
          onSealed: () => {
            if (i === 1) throw new ProblemError({ status: 409, code: 'review_not_pending', detail: 'refused in onSealed' });
          },
        }),
      ),
    );
    await expectOthersSealed(tenantId, outcomes, labels, 1);
    expect(((outcomes[1] as { error: unknown }).error as ProblemError).code).toBe('review_not_pending');
  });

  it('with a statement of its own that fails (a record at a position already taken): the others are sealed in one commit, it is answered with the database error', async () => {
    const { sealer, tenantId, batches } = await setup(engine);
    const labels = ['a', 'b', 'c', 'd'];
    const outcomes = await sealTogether(
      sealer,
      labels.map((l, i) =>
        request(tenantId, l, {
          async onSealed(record, tx) {
            // b writes a second record at its own tenant_seq: UNIQUE (tenant_id, tenant_seq).
            if (i === 1) {
              await tx.evidence.insertRecord({
                tenantId, tenantSeq: record.tenantSeq, actionKey: `${record.actionKey}-twin`, vertical: 'law', pack: 'law', kind: 'gate',
                decision: 'allow', status: 'allowed', reviewRoute: null, payloadHash: sha256Hex('twin'), packetHash: sha256Hex('twin'),
                attestation: '{}', attestationHash: sha256Hex('twin'), signature: 'x', keyId: 'key_test', devKey: true,
                recordedAt: record.recordedAt, credits: 0, details: '{}',
              });
            }
            // c reads after it: on PostgreSQL, where b's row is written behind, this read is the
            // statement that fails first, yet c is not the seal at fault.
            if (i === 2) expect(await tx.evidence.findRecord(tenantId, record.actionKey)).toBeDefined();
          },
        }),
      ),
    );
    await expectOthersSealed(tenantId, outcomes, labels, 1);
    const error = (outcomes[1] as { error: unknown }).error as Error;
    expect(error).not.toBeInstanceOf(ProblemError);
    expect(error.message).toMatch(/unique|UNIQUE/);
    expect(batches).toEqual([{ size: 4, sealed: 3 }]);
  });

  it('before it writes anything (a reused idempotency key): the others are sealed, it is answered 422', async () => {
    const { sealer, tenantId } = await setup(engine);
    const first = await sealer.seal(request(tenantId, 'first', { idempotency: { scope: 'POST /v1/gate', key: 'k-1', requestHash: 'h-1' } }));
    expect(first.replayed).toBe(false);
    const labels = ['first', 'a', 'b', 'c'];
    const outcomes = await sealTogether(sealer, [
      request(tenantId, 'a'),
      request(tenantId, 'reused', { idempotency: { scope: 'POST /v1/gate', key: 'k-1', requestHash: 'h-2' } }),
      request(tenantId, 'b', { idempotency: { scope: 'POST /v1/gate', key: 'k-1', requestHash: 'h-1' } }),
      request(tenantId, 'c'),
    ]);
    expect(outcomes.map((o) => o.ok)).toEqual([true, false, true, true]);
    expect(((outcomes[1] as { error: unknown }).error as ProblemError).code).toBe('idempotency_key_reused');
    // The third is a replay of the first, not a new seal.
    expect((outcomes[2] as { value: SealOutcome }).value).toMatchObject({ replayed: true, body: first.body });
    const records = await recordsOf(tenantId);
    expect(records.map((r) => r.payload_hash)).toEqual([labels[0], labels[1], labels[3]].map((l) => sha256Hex(l!)));
    expect(records.map((r) => r.tenant_seq)).toEqual([0, 1, 2]);
    expect(await usedActions(tenantId)).toBe(3);
  });

  it('before it writes anything (the sandbox allowance): the seals within it are sealed, the rest answered 402', async () => {
    const { sealer, tenantId } = await setup(engine);
    // Two actions left: of four seals in one batch, the first two are sealed.
    await sql('INSERT INTO usage_counters (tenant_id, actions_used, credits_used, updated_at) VALUES (?, ?, 0, ?) ON CONFLICT (tenant_id) DO UPDATE SET actions_used = excluded.actions_used', tenantId, SANDBOX_ACTION_ALLOWANCE - 2, '2025-01-01T00:00:00Z');
    const before = (await recordsOf(tenantId)).length;
    const outcomes = await sealTogether(sealer, ['a', 'b', 'c', 'd'].map((l) => request(tenantId, l)));
    expect(outcomes.map((o) => o.ok)).toEqual([true, true, false, false]);
    for (const o of outcomes.slice(2)) expect(((o as { error: unknown }).error as ProblemError).status).toBe(402);
    expect((await recordsOf(tenantId)).length).toBe(before + 2);
    expect(await usedActions(tenantId)).toBe(SANDBOX_ACTION_ALLOWANCE);
  });
});

describe('a seal batch on PostgreSQL', () => {
  it('inserts its records in one or two statements, not one per seal, and leaves the same chain and Merkle tree', async () => {
    const { sealer, tenantId, batches, statements } = await setup('postgres', { countStatements: true });
    const labels = Array.from({ length: 20 }, (_, i) => `seal ${i}`);
    const outcomes = await sealTogether(sealer, labels.map((l) => request(tenantId, l)));
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(batches).toEqual([{ size: 20, sealed: 20 }]);
    // The first seal's record goes out before the batch's first reads (usage, subscriptions,
    // the log's right edge) and the other nineteen with the commit: two INSERTs, not twenty.
    const inserts = statements.filter((q) => /INSERT INTO sealed_records/.test(q));
    expect(inserts.length).toBeLessThanOrEqual(2);
    // Tree nodes: level 4 completes at 16 leaves (the four lowest levels are not stored).
    expect(statements.filter((q) => /INSERT INTO merkle_nodes/.test(q)).length).toBeLessThanOrEqual(1);
    expect(statements.length).toBeLessThanOrEqual(16);

    const records = await recordsOf(tenantId);
    expect(records.map((r) => r.payload_hash)).toEqual(labels.map((l) => sha256Hex(l)));
    expect(records.map((r) => r.tenant_seq)).toEqual(labels.map((_, i) => i));
    // Each record's attestation names the one before it: one chain, in arrival order.
    const attestations = await sql<{ attestation: string }>('SELECT attestation FROM sealed_records WHERE tenant_id = ? ORDER BY tenant_seq', tenantId);
    attestations.forEach((a, i) => expect((JSON.parse(a.attestation) as { prev_attestation_hash: string | null }).prev_attestation_hash).toBe(i === 0 ? null : records[i - 1]!.attestation_hash));
    // The stored tree (read back from its nodes and leaves, no cache) is RFC 9162's over the records.
    const expected = MerkleTree.fromLeafHashes(records.map((r) => leafHash(Buffer.from(r.attestation_hash, 'hex'))));
    expect(Buffer.from(await new StoredTrees(deps.store.anchoring).rootAt(tenantId, 20)).toString('hex')).toBe(Buffer.from(expected.root()).toString('hex'));
    expect(await deps.store.anchoring.tenantLogSize(tenantId)).toBe(20);
  });
});
