/**
 * One group-commit batch (evidence/sealer.ts) in which one seal fails: whether it is refused
 * before it writes anything (the sandbox allowance, a reused idempotency key) or fails after
 * its rows are written (a participant, the request's own onSealed), the others in the batch
 * are sealed and committed together, the tenant's log stays one gapless chain, and the failed
 * one is answered with its own error and leaves no row behind.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { signUpSandbox } from '../../companion/account/signup.ts';
import { loadConfig } from '../../companion/core/config.ts';
import { ProblemError } from '../../companion/core/errors.ts';
import { createMemoryLogger } from '../../companion/core/log.ts';
import { closeDeps, openSqliteDeps } from '../../companion/deps.ts';
import type { AppDeps } from '../../companion/deps.ts';
import type { SealParticipant } from '../../companion/evidence/participants.ts';
import { Sealer } from '../../companion/evidence/sealer.ts';
import type { SealOutcome, SealRequest } from '../../companion/evidence/sealer.ts';
import { SANDBOX_ACTION_ALLOWANCE } from '../../companion/metering/credits.ts';
import { sealParticipants } from '../../companion/seal-participants.ts';
import type { SqliteStore } from '../../companion/store.ts';
import { sha256Hex } from '../../shared/hash.ts';
import { makeTempDir } from './helpers.ts';

let deps: AppDeps & { store: SqliteStore };
let dataDir: string | undefined;
afterEach(async () => {
  if (deps) await closeDeps(deps);
  deps = undefined as never;
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

/** One statement on the test's SQLite file. */
function sql<T>(query: string, ...params: unknown[]): T[] {
  const statement = deps.store.db.prepare(query);
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

async function setup(): Promise<{ sealer: Sealer; tenantId: string; batches: { size: number; sealed: number }[] }> {
  dataDir = makeTempDir('svc-seal-batch-');
  deps = await openSqliteDeps(loadConfig({ SVC_DATA_DIR: dataDir, SVC_SEAL_THREAD: '0' }, []), { log: createMemoryLogger() });
  const { tenant } = await signUpSandbox({ tenants: deps.store.tenants, clock: deps.clock, ids: deps.ids }, 'seal-batch@example.com');
  const tenantId = tenant.id;
  const batches: { size: number; sealed: number }[] = [];
  const sealer = new Sealer({
    store: deps.store,
    participants: [...sealParticipants({ outbox: deps.webhooks.outbox, routing: deps.routing.participant }), failing],
    keyring: deps.keyring,
    clock: deps.clock,
    ids: deps.ids,
    observer: { committed: ({ size, sealed }) => batches.push({ size, sealed: sealed.length }) },
  });
  return { sealer, tenantId, batches };
}

/** Seals every request in one turn of the event loop (one batch); each outcome or error. */
async function sealTogether(sealer: Sealer, requests: SealRequest[]): Promise<({ ok: true; value: SealOutcome } | { ok: false; error: unknown })[]> {
  return Promise.all(requests.map((r) => sealer.seal(r).then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }))));
}

async function recordsOf(tenantId: string): Promise<{ tenant_seq: number; payload_hash: string }[]> {
  return sql('SELECT tenant_seq, payload_hash FROM sealed_records WHERE tenant_id = ? ORDER BY tenant_seq', tenantId);
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

describe('a seal that fails inside a batch', () => {
  it('after its rows are written (a participant): the others are sealed in one commit, it is answered with its error and leaves nothing', async () => {
    const { sealer, tenantId, batches } = await setup();
    const labels = ['a', 'b', 'c', 'd', 'e'];
    const outcomes = await sealTogether(sealer, labels.map((l, i) => request(tenantId, l, i === 2 ? { annotations: { fail: true } } : {})));
    await expectOthersSealed(tenantId, outcomes, labels, 2);
    const error = (outcomes[2] as { error: unknown }).error;
    expect(error).toBeInstanceOf(ProblemError);
    expect((error as ProblemError).code).toBe('conflict');
    expect(batches).toEqual([{ size: 5, sealed: 4 }]);
  });

  it('before it writes anything, with an error that is not a refusal: the others are sealed in one commit, it is answered with its error', async () => {
    const { sealer, tenantId, batches } = await setup();
    const labels = ['a', 'b', 'c', 'd'];
    const outcomes = await sealTogether(sealer, labels.map((l, i) => request(tenantId, l, i === 0 ? { annotations: { failAdmit: true } } : {})));
    await expectOthersSealed(tenantId, outcomes, labels, 0);
    expect(((outcomes[0] as { error: unknown }).error as Error).message).toBe('a statement failed');
    expect(batches).toEqual([{ size: 4, sealed: 3 }]);
  });

  it("after its rows are written (the request's own onSealed): the others are sealed, it is answered with its error", async () => {
    const { sealer, tenantId } = await setup();
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

  it('before it writes anything (a reused idempotency key): the others are sealed, it is answered 422', async () => {
    const { sealer, tenantId } = await setup();
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
    const { sealer, tenantId } = await setup();
    // Two actions left: of four seals in one batch, the first two are sealed.
    sql('INSERT INTO usage_counters (tenant_id, actions_used, credits_used, updated_at) VALUES (?, ?, 0, ?) ON CONFLICT (tenant_id) DO UPDATE SET actions_used = excluded.actions_used', tenantId, SANDBOX_ACTION_ALLOWANCE - 2, '2025-01-01T00:00:00Z');
    const before = (await recordsOf(tenantId)).length;
    const outcomes = await sealTogether(sealer, ['a', 'b', 'c', 'd'].map((l) => request(tenantId, l)));
    expect(outcomes.map((o) => o.ok)).toEqual([true, true, false, false]);
    for (const o of outcomes.slice(2)) expect(((o as { error: unknown }).error as ProblemError).status).toBe(402);
    expect((await recordsOf(tenantId)).length).toBe(before + 2);
    expect(await usedActions(tenantId)).toBe(SANDBOX_ACTION_ALLOWANCE);
  });
});
