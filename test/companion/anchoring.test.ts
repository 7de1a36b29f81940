/**
 * Anchoring end to end in-process (DESIGN.md §4; interface-spec "Inclusion proof", Events
 * receipt.anchored): real stores, real signatures, the service clock moved by hand, epochs
 * closed by the same closer the background worker runs. Proofs are checked by an RFC 9162
 * verifier written here from the RFC text, not by the code under test.
 */
import { createHash, createPublicKey, verify as verifySignature } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { failedAnchorChecks, verifyConsistencyProof, verifyEpochHeader, verifyInclusionProof } from '../../shared/anchor-verify.ts';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { recordBody } from './pack-fixtures.ts';

const HOUR = 3600_000;
let ctx: TestContext;
let key: string;
afterEach(async () => ctx?.close());

// ---- An independent RFC 9162 §2.1 verifier (node:crypto, straight from the RFC text) -------
const sha = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const rfcLeaf = (data: Buffer) => sha(Buffer.from([0]), data);
const rfcNode = (l: Buffer, r: Buffer) => sha(Buffer.from([1]), l, r);
/** RFC 9162 §2.1.3.2, verbatim. */
function rfcRootFromPath(leafIndex: number, treeSize: number, leafHash: Buffer, path: string[]): Buffer | null {
  if (leafIndex >= treeSize) return null;
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r = leafHash;
  for (const hex of path) {
    const p = Buffer.from(hex, 'hex');
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = rfcNode(p, r);
      if (fn % 2 === 0) while (fn % 2 === 0 && fn !== 0) ((fn >>= 1), (sn >>= 1));
    } else r = rfcNode(r, p);
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 ? r : null;
}
/** RFC 8785 for values made of objects, strings, integers and null (sorted keys, no spaces). */
const jcs = (v: unknown): string =>
  v !== null && typeof v === 'object'
    ? `{${Object.keys(v)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${jcs((v as Record<string, unknown>)[k])}`)
        .join(',')}}`
    : JSON.stringify(v);

async function setup(env: Record<string, string> = {}) {
  ctx = await createTestContext({ env });
  ({ apiKey: key } = await ctx.signup());
}
const seal = async () => {
  const res = await ctx.request('/v1/record', { json: recordBody(), key });
  expect(res.status).toBe(201);
  return res.body.evidence_packet as { action_key: string; seal: { attestation_hash: string } };
};
const proofOf = (actionKey: string) => ctx.request(`/v1/records/${actionKey}/inclusion-proof`, { key });
const closeDue = () => ctx.deps.workers.epochs.closeDue();
const jwks = async () => trustedKeySet((await ctx.request('/.well-known/service-keys.json')).body);

describe('inclusion proofs', () => {
  it('answer 409 with the epoch timing until the epoch closes, then 200 with both hops and a signed header', async () => {
    await setup();
    ctx.clock.set('2025-01-01T10:15:00.000Z');
    const packet = await seal();

    const early = await proofOf(packet.action_key);
    expect(early.status).toBe(409);
    expect(early.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(early.body).toMatchObject({
      code: 'not_yet_anchored',
      epoch_cadence: 'hourly',
      estimated_next_epoch_at: '2025-01-01T11:00:00.000Z',
    });
    expect(early.body.next_epoch_hint).toContain('2025-01-01T11:00:00.000Z');
    expect(Number(early.headers.get('retry-after'))).toBe(45 * 60);

    expect(await closeDue()).toEqual([]); // not due before the boundary
    ctx.clock.set('2025-01-01T11:00:00.000Z');
    expect(await closeDue()).toHaveLength(1);

    const res = await proofOf(packet.action_key);
    expect(res.status).toBe(200);
    const p = res.body;
    expect(p.attestation_hash).toBe(packet.seal.attestation_hash);
    // Hop 1, independently: the attestation hash bytes are the leaf data.
    const tenantRoot = rfcRootFromPath(p.tenant_log.leaf_index, p.tenant_log.tree_size, rfcLeaf(Buffer.from(p.attestation_hash, 'hex')), p.tenant_log.proof);
    expect(tenantRoot?.toString('hex')).toBe(p.tenant_log.root);
    // Hop 2, independently: the JCS tenant leaf reaches the canonical root.
    const leafBytes = Buffer.from(jcs(p.epoch.leaf));
    const canonical = rfcRootFromPath(p.epoch.leaf_index, p.epoch.tree_size, rfcLeaf(leafBytes), p.epoch.proof);
    expect(canonical?.toString('hex')).toBe(p.epoch.canonical_root);
    expect(p.epoch.leaf.tenant_chain_root).toBe(p.tenant_log.root);
    // The header: signed over its JCS bytes by a key published in the JWKS; epoch_digest recomputes.
    const header = p.epoch_header.header;
    expect(header).toMatchObject({ period_start: '2025-01-01T10:00:00.000Z', period_end: '2025-01-01T11:00:00.000Z', canonical_root: canonical!.toString('hex') });
    const digest = sha(Buffer.from(jcs({ epoch_seq: 0, canonical_root: header.canonical_root, prev_epoch_digest: null, anchored_at: header.anchored_at, cadence_seconds: 3600 })));
    expect(digest.toString('hex')).toBe(header.epoch_digest);
    const jwk = (await ctx.request('/.well-known/service-keys.json')).body.keys.find((k: { kid: string }) => k.kid === header.key_id);
    expect(jwk.status).toBe('active');
    const headerBytes = Buffer.from(jcs(header));
    expect(verifySignature(null, headerBytes, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' }), Buffer.from(p.epoch_header.signature, 'base64url'))).toBe(true);
    // And the shared verifier agrees on every named check.
    const result = await verifyInclusionProof(p, await jwks(), packet.seal.attestation_hash);
    expect(failedAnchorChecks(result)).toEqual([]);
  });

  it('fails every tampered proof, header or checkpoint with the check named', async () => {
    await setup();
    ctx.clock.set('2025-01-01T10:15:00.000Z');
    const packets = [await seal(), await seal(), await seal()];
    const other = await ctx.signup();
    await ctx.request('/v1/record', { json: recordBody(), key: other.apiKey });
    ctx.clock.set('2025-01-01T11:00:00.000Z');
    await closeDue();
    const good = (await proofOf(packets[1]!.action_key)).body;
    const keys = await jwks();
    const flipHex = (h: string) => (h[0] === '0' ? '1' : '0') + h.slice(1);
    const cases: [string, (p: any) => void, string][] = [
      ['tenant proof hash', (p) => (p.tenant_log.proof[0] = flipHex(p.tenant_log.proof[0])), 'tenant_inclusion'],
      ['tenant leaf index', (p) => (p.tenant_log.leaf_index = 0), 'tenant_inclusion'],
      ['attestation hash', (p) => (p.attestation_hash = flipHex(p.attestation_hash)), 'tenant_inclusion'],
      ['tenant root', (p) => (p.tenant_log.root = flipHex(p.tenant_log.root)), 'tenant_inclusion'],
      ['epoch leaf size', (p) => (p.epoch.leaf.tenant_size += 1), 'epoch_leaf'],
      ['epoch proof hash', (p) => (p.epoch.proof[0] = flipHex(p.epoch.proof[0])), 'epoch_inclusion'],
      ['canonical root', (p) => (p.epoch.canonical_root = flipHex(p.epoch.canonical_root)), 'epoch_inclusion'],
      ['header root', (p) => (p.epoch_header.header.canonical_root = flipHex(p.epoch_header.header.canonical_root)), 'epoch_header'],
      ['header time', (p) => (p.epoch_header.header.anchored_at = '2030-01-01T00:00:00.000Z'), 'epoch_header'],
      ['header signature', (p) => (p.epoch_header.signature = p.epoch_header.signature.replace(/^./, (c: string) => (c === 'A' ? 'B' : 'A'))), 'header_signature'],
      ['checkpoint root', (p) => (p.epoch_header.checkpoint = p.epoch_header.checkpoint.replace(/\n[^\n]+\n\n/, '\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n')), 'checkpoint'],
      ['checkpoint signature', (p) => (p.epoch_header.checkpoint = p.epoch_header.checkpoint.replace(/ (\S{6})(\S+)\n$/, (_: string, a: string, b: string) => ` ${a}${b.startsWith('A') ? 'B' : 'A'}${b.slice(1)}\n`)), 'checkpoint'],
    ];
    for (const [what, tamper, check] of cases) {
      const p = structuredClone(good);
      tamper(p);
      const r = await verifyInclusionProof(p, keys);
      expect(failedAnchorChecks(r), what).toContain(check);
      expect(r.verified, what).toBe(false);
    }
    // A header verifies alone too, and a sandbox-only key set refuses it.
    expect(failedAnchorChecks(await verifyEpochHeader(good.epoch_header, keys))).toEqual([]);
    expect(failedAnchorChecks(await verifyEpochHeader(good.epoch_header, trustedKeySet({ keys: [] })))).toContain('header_signature');
  });

  it("answers 404 for another tenant's record, exactly as for a missing one", async () => {
    await setup();
    const packet = await seal();
    const other = await ctx.signup();
    const res = await ctx.request(`/v1/records/${packet.action_key}/inclusion-proof`, { key: other.apiKey });
    expect(res.status).toBe(404);
    expect((await ctx.request('/v1/records/law:proposed-action:nope/inclusion-proof', { key })).status).toBe(404);
  });
});

describe('epochs', () => {
  it('puts a record sealed exactly on a boundary in exactly one epoch: the one that starts there', async () => {
    await setup();
    ctx.clock.set('2025-01-01T10:59:59.999Z');
    const before = await seal();
    ctx.clock.set('2025-01-01T11:00:00.000Z');
    const onBoundary = await seal();
    expect(await closeDue()).toHaveLength(1);
    expect((await proofOf(before.action_key)).body.epoch.epoch_seq).toBe(0);
    expect((await proofOf(onBoundary.action_key)).status).toBe(409);
    ctx.clock.set('2025-01-01T12:00:00.000Z');
    expect(await closeDue()).toHaveLength(1);
    const p = (await proofOf(onBoundary.action_key)).body;
    expect(p.epoch.epoch_seq).toBe(1);
    expect(p.epoch_header.header.period_start).toBe('2025-01-01T11:00:00.000Z');
    const leaves = await ctx.sql('SELECT epoch_seq, tenant_size FROM epoch_leaves ORDER BY epoch_seq');
    expect(leaves).toEqual([{ epoch_seq: 0, tenant_size: 1 }, { epoch_seq: 1, tenant_size: 2 }]);
  });

  it('catch up every missed period after downtime, each exactly once, chained by prev_epoch_digest', async () => {
    await setup();
    ctx.clock.set('2025-01-01T10:30:00.000Z');
    await seal();
    ctx.clock.set('2025-01-01T15:10:00.000Z'); // five boundaries passed while "down"
    const closed = await closeDue();
    expect(closed.map((e) => e.periodEnd)).toEqual(['11', '12', '13', '14', '15'].map((h) => `2025-01-01T${h}:00:00.000Z`));
    expect(await closeDue()).toEqual([]);
    const list = (await ctx.request('/epochs')).body.epochs;
    expect(list.map((e: any) => e.header.epoch_seq)).toEqual([0, 1, 2, 3, 4]);
    list.forEach((e: any, i: number) => expect(e.header.prev_epoch_digest).toBe(i === 0 ? null : list[i - 1].header.epoch_digest));
    expect(list.map((e: any) => e.header.tenant_count)).toEqual([1, 0, 0, 0, 0]);
  });

  it('enqueue receipt.anchored once per tenant per epoch, in the close transaction, with the spec fields', async () => {
    await setup({ SVC_WEBHOOK_ALLOW_LOOPBACK: '1' });
    const tenantId = (await ctx.request('/tenant/usage', { key })).body.tenant_id;
    // A subscribed webhook target: the outbox enqueues an event only for subscribers. The
    // service's workers are not started here, so nothing is sent; the rows are what we read.
    const put = await ctx.request('/tenant/integrations/webhook/anchors', {
      method: 'PUT',
      key,
      json: { enabled: true, config: { url: 'http://127.0.0.1:9/hook', events: ['receipt.anchored'] } },
    });
    expect(put.status).toBeLessThan(300);
    const anchored = async () =>
      (await ctx.store.webhooks.listDeliveries({ tenantId, target: 'anchors', limit: 100, offset: 0 })).filter((d) => d.event === 'receipt.anchored');
    ctx.clock.set('2025-01-01T10:10:00.000Z');
    await seal();
    await seal();
    ctx.clock.set('2025-01-01T11:10:00.000Z');
    const [epoch] = await closeDue();
    const events = await anchored();
    expect(events).toHaveLength(1);
    const body = JSON.parse(events[0]!.body);
    expect(body).toMatchObject({ event: 'receipt.anchored', tenant: tenantId });
    expect(body).toMatchObject({
      epoch_seq: 0,
      canonical_root: epoch!.canonicalRoot,
      epoch_digest: epoch!.epochDigest,
      tenant_chain_root: expect.stringMatching(/^[0-9a-f]{64}$/),
      tenant_seq: 1,
      leaf_index: 0,
    });
    ctx.clock.set('2025-01-01T13:10:00.000Z');
    await closeDue(); // two more epochs, nothing new for this tenant
    expect(await anchored()).toHaveLength(1);
  });

  it('continue the same chain after a restart', async () => {
    await setup();
    ctx.clock.set('2025-01-01T10:10:00.000Z');
    await seal();
    ctx.clock.set('2025-01-01T11:10:00.000Z');
    await closeDue();
    const dataDir = ctx.dataDir;
    const first = (await ctx.request('/epochs/0')).body;
    await ctx.deps.lifecycle.stop();
    const { createTestContext: again } = await import('./helpers.ts');
    const restarted = await again({ dataDir });
    try {
      restarted.clock.set('2025-01-01T12:10:00.000Z');
      await restarted.deps.workers.epochs.closeDue();
      const second = (await restarted.request('/epochs/1')).body;
      expect(second.header.prev_epoch_digest).toBe(first.header.epoch_digest);
      const c = (await restarted.request('/epochs/consistency?from=0&to=1')).body;
      expect(failedAnchorChecks(verifyConsistencyProof(c))).toEqual([]);
    } finally {
      await restarted.close();
    }
  });

  it('gives records sealed before anchoring existed their leaves at startup, then keeps appending', async () => {
    await setup();
    const packets = [await seal(), await seal(), await seal()];
    const tenantId = (await ctx.request('/tenant/usage', { key })).body.tenant_id;
    // As before migration 0005 ran: records, but no tree and no log row.
    await ctx.sql('DELETE FROM merkle_nodes WHERE log_id = ?', tenantId);
    await ctx.sql('DELETE FROM tenant_logs WHERE tenant_id = ?', tenantId);
    const dataDir = ctx.dataDir;
    await ctx.deps.lifecycle.stop();
    const { createTestContext: again } = await import('./helpers.ts');
    const restarted = await again({ dataDir });
    try {
      const res = await restarted.request('/v1/record', { json: recordBody(), key });
      expect(res.status).toBe(201);
      const head = (await restarted.request('/tenant/log', { key })).body;
      const leaves = [...packets.map((p) => p.seal.attestation_hash), res.body.evidence_packet.seal.attestation_hash].map((h) => rfcLeaf(Buffer.from(h, 'hex')));
      const mth = (l: Buffer[]): Buffer => (l.length === 1 ? l[0]! : rfcNode(mth(l.slice(0, 2 ** Math.floor(Math.log2(l.length - 1)))), mth(l.slice(2 ** Math.floor(Math.log2(l.length - 1))))));
      expect(head).toMatchObject({ size: 4, root: mth(leaves).toString('hex') });
    } finally {
      await restarted.close();
    }
  });

  it('prove consistency between any two of 50 epochs, and between sizes of a tenant log', async () => {
    await setup();
    ctx.clock.set('2025-01-01T00:10:00.000Z');
    const heads: { size: number; root: string }[] = [];
    for (let i = 0; i < 50; i++) {
      await seal();
      if (i % 3 === 0) await seal();
      ctx.clock.advance(HOUR);
      await closeDue();
      heads.push((await ctx.request('/tenant/log', { key })).body);
    }
    const epochs = [...(await ctx.request('/epochs?limit=50')).body.epochs];
    expect(epochs).toHaveLength(50);
    for (const [from, to] of [[0, 49], [0, 0], [7, 8], [12, 31], [31, 32], [1, 48], [15, 16], [16, 49]] as const) {
      const c = (await ctx.request(`/epochs/consistency?from=${from}&to=${to}`)).body;
      expect(c.from.root).toBe(epochs[from].header.epoch_log.root);
      expect(c.to.root).toBe(epochs[to].header.epoch_log.root);
      expect(failedAnchorChecks(verifyConsistencyProof(c)), `${from}..${to}`).toEqual([]);
      if (from !== to) {
        const bad = structuredClone(c);
        bad.from.root = epochs[(from + 1) % 50].header.epoch_log.root;
        expect(failedAnchorChecks(verifyConsistencyProof(bad))).toEqual(['consistency']);
      }
    }
    for (const [a, b] of [[0, 49], [10, 20], [33, 34]] as const) {
      const c = (await ctx.request(`/tenant/log/consistency?from_size=${heads[a]!.size}&to_size=${heads[b]!.size}`, { key })).body;
      expect([c.from.root, c.to.root]).toEqual([heads[a]!.root, heads[b]!.root]);
      expect(failedAnchorChecks(verifyConsistencyProof(c))).toEqual([]);
    }
    // Every epoch's tenant root is one of the heads the tenant saw, and its leaf proof holds.
    const last = (await ctx.request('/epochs/49')).body;
    expect(failedAnchorChecks(await verifyEpochHeader(last, await jwks()))).toEqual([]);
  });

  it('refuses bad consistency and listing queries with 422 or 404 problem+json', async () => {
    await setup();
    await seal();
    ctx.clock.advance(2 * HOUR);
    await closeDue();
    expect((await ctx.request('/epochs?limit=0')).status).toBe(422);
    expect((await ctx.request('/epochs?bogus=1')).status).toBe(422);
    expect((await ctx.request('/epochs/consistency?from=1&to=0')).status).toBe(422);
    expect((await ctx.request('/epochs/consistency?from=9')).status).toBe(404);
    expect((await ctx.request('/epochs/7')).status).toBe(404);
    expect((await ctx.request('/tenant/log/consistency?from_size=0', { key })).status).toBe(422);
    expect((await ctx.request('/tenant/log/consistency?from_size=1&to_size=5', { key })).status).toBe(422);
  });
});
