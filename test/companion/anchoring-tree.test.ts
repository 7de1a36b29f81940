/**
 * The stored trees (companion/anchoring/stored-tree.ts) against the RFC 6962 / RFC 9162
 * vectors in test/vectors/merkle, through the real SQLite node store: logs that store every
 * level ("#…" ids, like the epoch log), and tenant logs, whose lowest levels are computed from
 * their records' attestation hashes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteAnchoringStore } from '../../companion/anchoring/sqlite-store.ts';
import { TENANT_LOG_UNSTORED_LEVELS } from '../../companion/anchoring/rows.ts';
import type { AnchoringStore } from '../../companion/anchoring/store.ts';
import { StoredTrees } from '../../companion/anchoring/stored-tree.ts';
import { promised } from '../../companion/core/async-store.ts';
import { fromHex, toHex } from '../../shared/encoding.ts';
import type { Tx } from '../../companion/store.ts';
import { sha256 } from '../../shared/hash.ts';
import { MerkleTree, leafHash, verifyConsistency, verifyInclusion } from '../../shared/merkle.ts';
import { readVectorJson } from '../helpers/vectors.ts';
import { createTestContext, freshTenantContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';

interface TreeVectors {
  leaf_inputs: string[];
  root_hash_by_tree_size: string[];
  inclusion_proofs: { leaf_index: number; tree_size: number; proof: string[]; root: string }[];
  consistency_proofs: { size1: number; size2: number; proof: string[]; root1: string; root2: string }[];
}

const v = readVectorJson<TreeVectors>('merkle', 'rfc6962_8leaf_tree.json');
let ctx: TestContext;
afterEach(async () => ctx?.close());

/**
 * Trees over a store of their own on the test database (its own caches, as after a restart),
 * called directly: inside `ctx.store.transaction` its writes join the transaction.
 */
const newTrees = () => new StoredTrees(promised<AnchoringStore>(createSqliteAnchoringStore(ctx.store.db)));
const hexes = async (p: Promise<Uint8Array[]>) => (await p).map(toHex);

async function storedTrees(): Promise<StoredTrees> {
  ctx = await createTestContext();
  return newTrees();
}

describe('stored RFC 9162 trees', () => {
  it('reproduce every root, inclusion proof and consistency proof of the 8-leaf vectors', async () => {
    const trees = await storedTrees();
    await ctx.store.transaction(async () => {
      for (const [i, hex] of v.leaf_inputs.entries()) await trees.append('#t', i, fromHex(hex));
    });
    for (const [size, root] of v.root_hash_by_tree_size.entries()) expect(toHex(await trees.rootAt('#t', size))).toBe(root);
    for (const p of v.inclusion_proofs) expect(await hexes(trees.inclusionProof('#t', p.leaf_index, p.tree_size))).toEqual(p.proof);
    for (const p of v.consistency_proofs) expect(await hexes(trees.consistencyProof('#t', p.size1, p.size2))).toEqual(p.proof);
  });

  it('agree with the in-memory tree at every size up to 70, and their proofs verify', async () => {
    const trees = await storedTrees();
    const leaves = Array.from({ length: 70 }, (_, i) => Uint8Array.of(i, i >> 8, 7));
    await ctx.store.transaction(async () => {
      for (const [i, l] of leaves.entries()) await trees.append('#t', i, l);
    });
    const memory = MerkleTree.fromLeafHashes(leaves.map(leafHash));
    for (let size = 1; size <= 70; size++) {
      const root = await trees.rootAt('#t', size);
      expect(toHex(root)).toBe(toHex(memory.rootAt(size)));
      for (const index of [0, Math.floor(size / 2), size - 1]) {
        expect(verifyInclusion(leafHash(leaves[index]!), index, size, await trees.inclusionProof('#t', index, size), root)).toBe(true);
      }
      for (const old of [1, Math.ceil(size / 3), size]) {
        expect(verifyConsistency(old, size, await trees.rootAt('#t', old), root, await trees.consistencyProof('#t', old, size))).toBe(true);
      }
    }
  });

  it('forgets appends rolled back with their transaction', async () => {
    const trees = await storedTrees();
    await ctx.store.transaction(async () => {
      for (const [i, b] of [1, 2, 3].entries()) await trees.append('#t', i, Uint8Array.of(b));
    });
    await expect(
      ctx.store.transaction(async () => {
        await trees.append('#t', 3, Uint8Array.of(99));
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    await ctx.store.transaction(() => trees.append('#t', 3, Uint8Array.of(4)));
    const expected = MerkleTree.fromLeafHashes([1, 2, 3, 4].map((b) => leafHash(Uint8Array.of(b))));
    expect(toHex(await trees.rootAt('#t', 4))).toBe(toHex(expected.root()));
    expect(toHex(await newTrees().rootAt('#t', 4))).toBe(toHex(expected.root()));
  });

  it('keeps logs apart and refuses a size past the log', async () => {
    const trees = await storedTrees();
    await ctx.store.transaction(async () => {
      await trees.append('#a', 0, Uint8Array.of(1));
      await trees.append('#b', 0, Uint8Array.of(2));
    });
    expect(toHex(await trees.rootAt('#a', 1))).toBe(toHex(leafHash(Uint8Array.of(1))));
    expect(toHex(await trees.rootAt('#b', 1))).toBe(toHex(leafHash(Uint8Array.of(2))));
    await expect(trees.rootAt('#a', 2)).rejects.toThrow(/no node/);
  });

  it('keep a proved log in memory through later appends and a rolled-back one, and answer as the stored levels do', async () => {
    const trees = await storedTrees();
    const leaves = Array.from({ length: 40 }, (_, i) => Uint8Array.of(i, 3));
    const appendAll = (from: number, to: number) =>
      ctx.store.transaction(async () => {
        for (let i = from; i < to; i++) await trees.append('#t', i, leaves[i]!);
      });
    await appendAll(0, 13);
    await trees.inclusionProof('#t', 0, 13); // loads the log's levels
    await appendAll(13, 29);
    await expect(
      ctx.store.transaction(async () => {
        await trees.append('#t', 29, Uint8Array.of(99));
        await trees.append('#t', 30, Uint8Array.of(98));
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    await appendAll(29, 40);
    const memory = MerkleTree.fromLeafHashes(leaves.map(leafHash));
    // A second node store over the same database starts with nothing resident.
    const stored = newTrees();
    for (let size = 1; size <= 40; size++) {
      for (const index of [0, size >> 1, size - 1]) {
        const proof = await hexes(trees.inclusionProof('#t', index, size));
        expect(proof).toEqual(memory.inclusionProof(index, size).map(toHex));
        expect(proof).toEqual(await hexes(stored.inclusionProof('#t', index, size)));
        expect(await trees.inclusionProofHex('#t', index, size)).toEqual(proof);
      }
      expect(await hexes(trees.consistencyProof('#t', 1, size))).toEqual(await hexes(stored.consistencyProof('#t', 1, size)));
    }
    // Resident proofs read no stored node: they survive the rows going away.
    ctx.store.db.prepare("DELETE FROM merkle_nodes WHERE log_id = '#t'").run();
    expect(await hexes(trees.inclusionProof('#t', 17, 40))).toEqual(memory.inclusionProof(17, 40).map(toHex));
    expect(await trees.inclusionProofHex('#t', 17, 40)).toEqual(memory.inclusionProof(17, 40).map(toHex));
    await expect(newTrees().inclusionProof('#t', 17, 40)).rejects.toThrow(/no node/);
  });

  it("share their caches between the store's outside view and its transactions' views", async () => {
    ctx = await createTestContext();
    const leaves = Array.from({ length: 24 }, (_, i) => Uint8Array.of(i, 9));
    const appendAll = (from: number, to: number) =>
      ctx.store.transaction(async (tx) => {
        expect(tx.anchoring.treeCacheKey).toBe(ctx.store.anchoring.treeCacheKey);
        const trees = new StoredTrees(tx.anchoring);
        for (let i = from; i < to; i++) await trees.append('#t', i, leaves[i]!);
      });
    await appendAll(0, 10);
    const outside = new StoredTrees(ctx.store.anchoring);
    await outside.inclusionProof('#t', 0, 10); // loads the log's levels
    await appendAll(10, 24); // extends them, through the transactions' views
    ctx.store.db.prepare("DELETE FROM merkle_nodes WHERE log_id = '#t'").run();
    const memory = MerkleTree.fromLeafHashes(leaves.map(leafHash));
    expect(await outside.inclusionProofHex('#t', 21, 24)).toEqual(memory.inclusionProof(21, 24).map(toHex));
    expect(toHex(await outside.rootAt('#t', 24))).toBe(toHex(memory.rootAt(24)));
    await expect(newTrees().rootAt('#t', 24)).rejects.toThrow(/no node/);
  });

  describe('tenant logs', () => {
    /** Records of a real tenant whose attestation hashes are `leaves` (32 bytes each), appended to its log. */
    async function tenantLog(count: number): Promise<{ trees: StoredTrees; tenantId: string; leaves: Uint8Array[] }> {
      const fresh = await freshTenantContext();
      ctx = fresh.ctx;
      const trees = newTrees();
      const leaves = Array.from({ length: count }, (_, i) => sha256(Uint8Array.of(i, i >> 8)));
      await ctx.store.transaction(async (tx) => {
        for (const [i, leaf] of leaves.entries()) await appendRecord(tx, trees, fresh.tenantId, i, leaf);
      });
      return { trees, tenantId: fresh.tenantId, leaves };
    }

    async function appendRecord(tx: Tx, trees: StoredTrees, tenantId: string, seq: number, leaf: Uint8Array): Promise<void> {
      const hash = toHex(leaf);
      await tx.evidence.insertRecord({
        tenantId, tenantSeq: seq, actionKey: `eu-ai-act:output_marked:${String(seq).padStart(26, '0')}`, vertical: 'eu-ai-act', pack: 'eu-ai-act',
        kind: 'record', decision: null, status: 'recorded', reviewRoute: null, payloadHash: 'a'.repeat(64), packetHash: 'b'.repeat(64),
        attestation: '{}', attestationHash: hash, signature: 'sig', keyId: 'k', devKey: true, recordedAt: '2026-01-01T00:00:00.000Z', credits: 0, details: '{}',
      });
      await trees.append(tenantId, seq, leaf);
      await tx.anchoring.setTenantLogSize(tenantId, seq + 1, '2026-01-01T00:00:00.000Z');
    }

    it(`store only levels ${TENANT_LOG_UNSTORED_LEVELS} and up, and agree with the in-memory tree at every size up to 70`, async () => {
      const { trees, tenantId, leaves } = await tenantLog(70);
      const levels = ctx.store.db.prepare('SELECT DISTINCT level FROM merkle_nodes WHERE log_id = ? ORDER BY level').pluck().all(tenantId);
      expect(levels).toEqual([4, 5, 6]);
      const memory = MerkleTree.fromLeafHashes(leaves.map(leafHash));
      // A fresh store has nothing in memory: heads and consistency proofs compute the unstored
      // nodes from the records; the inclusion proofs load the whole log from them.
      for (const size of [1, 2, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 70]) {
        expect(toHex(await newTrees().rootAt(tenantId, size))).toBe(toHex(memory.rootAt(size)));
        expect(await hexes(newTrees().consistencyProof(tenantId, Math.ceil(size / 3), size))).toEqual(memory.consistencyProof(Math.ceil(size / 3), size).map(toHex));
        for (const index of [0, size >> 1, size - 1]) {
          expect(await hexes(newTrees().inclusionProof(tenantId, index, size))).toEqual(memory.inclusionProof(index, size).map(toHex));
          expect(await hexes(trees.inclusionProof(tenantId, index, size))).toEqual(memory.inclusionProof(index, size).map(toHex));
        }
      }
    });

    it('append after a restart: the right edge is computed from the records, and a rolled-back append leaves nothing', async () => {
      const { tenantId, leaves } = await tenantLog(21);
      const trees = newTrees();
      await expect(
        ctx.store.transaction(async (tx) => {
          await appendRecord(tx, trees, tenantId, 21, sha256(Uint8Array.of(99)));
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      const more = Array.from({ length: 12 }, (_, i) => sha256(Uint8Array.of(200, i)));
      await ctx.store.transaction(async (tx) => {
        for (const [i, leaf] of more.entries()) await appendRecord(tx, trees, tenantId, 21 + i, leaf);
      });
      const memory = MerkleTree.fromLeafHashes([...leaves, ...more].map(leafHash));
      expect(toHex(await trees.rootAt(tenantId, 33))).toBe(toHex(memory.rootAt(33)));
      expect(toHex(await newTrees().rootAt(tenantId, 33))).toBe(toHex(memory.rootAt(33)));
      await expect(trees.rootAt(tenantId, 34)).rejects.toThrow(/no node/);
    });
  });
});
