/**
 * Group commit when a batch's transaction waits on the database (PostgreSQL: every statement is
 * a round trip, and the commit is also the flush to disk): requests that arrive meanwhile,
 * over many turns of the event loop, gather into the next batch instead of each opening a
 * transaction of its own. The database's wait is stood in for by holding the first batch's
 * transaction open until the test lets it go; everything else is the real sealer and store.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { payloadHash } from '../../shared/attestation.ts';
import type { AuthContext } from '../../companion/core/auth.ts';
import { Sealer } from '../../companion/evidence/sealer.ts';
import type { SealRequest } from '../../companion/evidence/sealer.ts';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';

let ctx: TestContext;
beforeEach(async () => {
  ctx = await createTestContext();
});
afterEach(async () => {
  await ctx.close();
});

function request(auth: AuthContext): SealRequest {
  const body = { pack: 'law', proposed_action: 'draft a reply' };
  return {
    auth,
    vertical: 'law',
    actionType: 'proposed-action',
    pack: 'law',
    kind: 'gate',
    decision: 'allow',
    status: 'sealed',
    reviewRoute: null,
    payloadHash: payloadHash(body),
    manifestDigest: null,
    policyDigest: null,
    details: {},
    metering: { counted: false, credits: 0 },
    respond: (r) => ({ action_key: r.actionKey, tenant_seq: r.tenantSeq }),
  };
}

it('gathers the requests that arrive while a batch transaction is open into the next batch', async () => {
  const s = await ctx.signup();
  const auth: AuthContext = { tenantId: s.tenantId, tenantKind: 'sandbox', keyId: 'test' };
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let transactions = 0;
  const batches: number[] = [];
  const sealer = new Sealer({
    ...ctx.deps,
    participants: [],
    store: {
      durable: () => ctx.store.durable(),
      // The first batch's transaction waits, as one waiting on a database server would.
      transaction: async (fn, options) => (++transactions === 1 && (await held), ctx.store.transaction(fn, options)),
    },
    observer: { committed: (batch) => batches.push(batch.size) },
  });

  const first = sealer.seal(request(auth));
  const later: Promise<unknown>[] = [];
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setImmediate(r));
    later.push(sealer.seal(request(auth)));
  }
  expect(transactions).toBe(1);
  release();
  const outcomes = await Promise.all([first, ...later]);
  expect(batches).toEqual([1, 20]);
  expect(outcomes.map((o) => (o as { body: { tenant_seq: number } }).body.tenant_seq)).toEqual([...Array(21).keys()]);
});
