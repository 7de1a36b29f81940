/**
 * The anchoring store (tree nodes, tenant logs, closed epochs) behaves the same on SQLite and
 * PostgreSQL, and the stored trees built over it (companion/anchoring/stored-tree.ts) give the
 * same heads and proofs on both.
 */
import { describe, expect, it } from 'vitest';
import { createPostgresAnchoringStore } from '../../../companion/anchoring/postgres-store.ts';
import { createSqliteAnchoringStore } from '../../../companion/anchoring/sqlite-store.ts';
import type { AnchoringStore, EpochLeafRow, EpochRow } from '../../../companion/anchoring/store.ts';
import { StoredTrees } from '../../../companion/anchoring/stored-tree.ts';
import { toHex } from '../../../shared/encoding.ts';
import { sha256, sha256Hex } from '../../../shared/hash.ts';
import { MerkleTree, leafHash } from '../../../shared/merkle.ts';
import { barrier, databasePerCase, engines, lockWaitBefore, seedTenants } from './engines.ts';
import type { StoreFactories } from './engines.ts';

const ANCHORING: StoreFactories<AnchoringStore> = { sqlite: createSqliteAnchoringStore, postgres: (sql) => createPostgresAnchoringStore(sql) };
const AT = '2025-01-01T00:00:00.000Z';
const hash = (label: string) => sha256(new TextEncoder().encode(label));
const hex64 = (label: string) => sha256Hex(label);

function epochRow(epochSeq: number, over: Partial<EpochRow> = {}): EpochRow {
  return {
    epochSeq,
    periodStart: `2025-01-01T${String(epochSeq).padStart(2, '0')}:00:00.000Z`,
    periodEnd: `2025-01-01T${String(epochSeq + 1).padStart(2, '0')}:00:00.000Z`,
    cadenceSeconds: 3600,
    tenantCount: 0,
    canonicalRoot: hex64(`root ${epochSeq}`),
    prevEpochDigest: epochSeq === 0 ? null : hex64(`digest ${epochSeq - 1}`),
    epochDigest: hex64(`digest ${epochSeq}`),
    anchoredAt: `2025-01-01T${String(epochSeq + 1).padStart(2, '0')}:00:01.000Z`,
    header: `{"epoch_seq":${epochSeq}}`,
    signature: `sig-${epochSeq}`,
    keyId: 'key-1',
    checkpoint: `checkpoint ${epochSeq}\n`,
    ...over,
  };
}

const leafRow = (epochSeq: number, leafIndex: number, tenantId: string, tenantSize: number): EpochLeafRow => ({
  epochSeq,
  leafIndex,
  tenantId,
  tenantSize,
  tenantChainRoot: hex64(`${tenantId}@${tenantSize}`),
});

/** Both promises settled: how many were fulfilled, and the rejections' messages. */
async function outcomes(promises: Promise<unknown>[]): Promise<{ fulfilled: number; rejected: string[] }> {
  const settled = await Promise.allSettled(promises);
  return {
    fulfilled: settled.filter((s) => s.status === 'fulfilled').length,
    rejected: settled.flatMap((s) => (s.status === 'rejected' ? [String((s.reason as Error).message)] : [])),
  };
}

describe.each(engines())('anchoring store on $name', (engine) => {
  const db = databasePerCase(engine, (fresh) => seedTenants(fresh, ['ten_a', 'ten_b', 'ten_c'], AT));

  /** Sealed records of `tenantId` with tenant_seq from `first`, attestation hash hex64(`tenantId/seq`). */
  async function seedRecords(tenantId: string, times: string[], first = 0): Promise<string[]> {
    const hashes: string[] = [];
    for (const [i, at] of times.entries()) {
      const seq = first + i;
      const h = hex64(`${tenantId}/${seq}`);
      hashes.push(h);
      await db.exec(
        `INSERT INTO sealed_records (tenant_id, tenant_seq, action_key, vertical, pack, kind, decision, status, review_route, payload_hash,
          packet_hash, attestation, attestation_hash, signature, key_id, dev_key, recorded_at, credits, details)
         VALUES (?, ?, ?, 'eu-ai-act', 'eu-ai-act', 'record', NULL, 'recorded', NULL, ?, ?, '{}', ?, 'sig', 'k', 0, ?, 0, '{}')`,
        tenantId, seq, `eu-ai-act:output_marked:${tenantId}-${seq}`, h, h, h, at,
      );
    }
    return hashes;
  }

  describe('nodes', () => {
    it('puts and gets nodes by (log, level, idx), refuses a node twice, and reads a level in idx order', async () => {
      const a = db.store(ANCHORING);
      expect(await a.getNode('#e', 0, 0)).toBeUndefined();
      await a.putNode('#e', 0, 2, hash('n2'));
      await a.putNode('#e', 0, 0, hash('n0'));
      await a.putNode('#e', 0, 1, hash('n1'));
      await a.putNode('#e', 1, 0, hash('p0'));
      await a.putNode('#f', 0, 0, hash('other log'));
      const got = await a.getNode('#e', 0, 1);
      expect(got).toBeInstanceOf(Uint8Array);
      expect(toHex(got!)).toBe(toHex(hash('n1')));
      expect(await a.getNode('#e', 1, 1)).toBeUndefined();
      expect(await a.getNode('#g', 0, 0)).toBeUndefined();
      await expect(a.putNode('#e', 0, 1, hash('again'))).rejects.toThrow();
      expect(toHex((await a.getNode('#e', 0, 1))!)).toBe(toHex(hash('n1')));
      expect((await a.levelNodes('#e', 0)).map(toHex)).toEqual(['n0', 'n1', 'n2'].map((l) => toHex(hash(l))));
      expect((await a.levelNodes('#e', 1)).map(toHex)).toEqual([toHex(hash('p0'))]);
      expect(await a.levelNodes('#e', 2)).toEqual([]);
      expect(await a.levelNodes('#g', 0)).toEqual([]);
    });

    it('counts a "#" log\'s leaves by its level 0 and a tenant log\'s by its size, and stores a tenant log from level 4', async () => {
      const a = db.store(ANCHORING);
      expect(await a.leafCount('#e')).toBe(0);
      await a.putNode('#e', 0, 0, hash('x'));
      await a.putNode('#e', 0, 1, hash('y'));
      await a.putNode('#e', 1, 0, hash('xy'));
      expect(await a.leafCount('#e')).toBe(2);
      expect(await a.leafCount('ten_a')).toBe(0);
      await a.setTenantLogSize('ten_a', 7, AT);
      expect(await a.leafCount('ten_a')).toBe(7);
      expect(await a.lowestStoredLevel('ten_a')).toBe(4);
      expect(await a.lowestStoredLevel('#epochs')).toBe(0);
    });

    it("reads a tenant log's leaf data from its records' attestation hashes, in order and bounded", async () => {
      const a = db.store(ANCHORING);
      const hashes = await seedRecords('ten_a', [AT, AT, AT, AT, AT]);
      await seedRecords('ten_b', [AT]);
      expect((await a.leafData('ten_a', 1, 4)).map(toHex)).toEqual(hashes.slice(1, 4));
      expect((await a.leafData('ten_a', 0, 100)).map(toHex)).toEqual(hashes);
      expect(await a.leafData('ten_a', 5, 9)).toEqual([]);
      expect(await a.leafData('ten_c', 0, 9)).toEqual([]);
      expect(await a.leafData('#e', 0, 9)).toEqual([]);
      const [first] = await a.leafData('ten_a', 0, 1);
      expect(first).toBeInstanceOf(Uint8Array);
      expect(first!.byteLength).toBe(32);
    });

    it('carries a tree cache key: its own per store, or the one it is given', async () => {
      const a = db.store(ANCHORING);
      const b = db.store(ANCHORING);
      expect(typeof a.treeCacheKey).toBe('object');
      expect(a.treeCacheKey).not.toBe(b.treeCacheKey);
      const key = {};
      expect(createPostgresAnchoringStore(undefined as never, { treeCacheKey: key }).treeCacheKey).toBe(key);
    });

    it('serve stored trees: heads and proofs match the in-memory tree, for a "#" log and a tenant log, written in transactions', async () => {
      const times = Array.from({ length: 37 }, () => AT);
      const hashes = await seedRecords('ten_a', times);
      const epochLeaves = Array.from({ length: 21 }, (_, i) => hash(`epoch ${i}`));
      // Two transactions, the second one rolled back: its nodes and size leave nothing behind.
      await db.transaction(async (tx) => {
        const a = tx.store(ANCHORING);
        const trees = new StoredTrees(a);
        for (let i = 0; i < 30; i++) await trees.append('ten_a', i, Buffer.from(hashes[i]!, 'hex'));
        await a.setTenantLogSize('ten_a', 30, AT);
        for (let i = 0; i < 20; i++) await trees.append('#e', i, epochLeaves[i]!);
      });
      await expect(
        db.transaction(async (tx) => {
          const a = tx.store(ANCHORING);
          const trees = new StoredTrees(a);
          for (let i = 30; i < 37; i++) await trees.append('ten_a', i, Buffer.from(hashes[i]!, 'hex'));
          await a.setTenantLogSize('ten_a', 37, AT);
          await trees.append('#e', 20, hash('rolled back'));
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      expect(await db.store(ANCHORING).tenantLogSize('ten_a')).toBe(30);
      expect(await db.store(ANCHORING).leafCount('#e')).toBe(20);
      await db.transaction(async (tx) => {
        const a = tx.store(ANCHORING);
        const trees = new StoredTrees(a);
        for (let i = 30; i < 37; i++) await trees.append('ten_a', i, Buffer.from(hashes[i]!, 'hex'));
        await a.setTenantLogSize('ten_a', 37, AT);
        await trees.append('#e', 20, epochLeaves[20]!);
      });
      const levels = await db.rows<{ level: number }>("SELECT DISTINCT level FROM merkle_nodes WHERE log_id = 'ten_a' ORDER BY level");
      expect(levels.map((r) => Number(r.level))).toEqual([4, 5]);

      const tenantMemory = MerkleTree.fromLeafHashes(hashes.map((h) => leafHash(Buffer.from(h, 'hex'))));
      const epochMemory = MerkleTree.fromLeafHashes(epochLeaves.map((l) => leafHash(l)));
      // A store of its own: nothing cached, everything read from the engine.
      const trees = new StoredTrees(db.store(ANCHORING));
      for (const size of [1, 15, 16, 17, 32, 37]) {
        expect(toHex(await trees.rootAt('ten_a', size))).toBe(toHex(tenantMemory.rootAt(size)));
        expect((await trees.consistencyProof('ten_a', 1, size)).map(toHex)).toEqual(tenantMemory.consistencyProof(1, size).map(toHex));
      }
      for (const size of [1, 8, 13, 21]) {
        expect(toHex(await trees.rootAt('#e', size))).toBe(toHex(epochMemory.rootAt(size)));
        expect((await trees.inclusionProof('#e', size - 1, size)).map(toHex)).toEqual(epochMemory.inclusionProof(size - 1, size).map(toHex));
      }
      expect(await trees.inclusionProofHex('ten_a', 33, 37)).toEqual(tenantMemory.inclusionProof(33, 37).map(toHex));
      await expect(new StoredTrees(db.store(ANCHORING)).rootAt('#e', 22)).rejects.toThrow(/no node/);
    });
  });

  describe('tenant logs', () => {
    it('sets a log size, inserting the log first and updating it after, and reads it back', async () => {
      const a = db.store(ANCHORING);
      expect(await a.tenantLogSize('ten_a')).toBe(0);
      expect(await a.tenantLog('ten_a')).toBeUndefined();
      await a.setTenantLogSize('ten_a', 1, '2025-01-01T00:00:01.000Z');
      expect(await a.tenantLog('ten_a')).toEqual({ tenantId: 'ten_a', size: 1, anchoredSize: 0, lastRecordedAt: '2025-01-01T00:00:01.000Z' });
      await a.setTenantLogSize('ten_a', 5, '2025-01-01T00:00:05.000Z');
      expect(await a.tenantLog('ten_a')).toEqual({ tenantId: 'ten_a', size: 5, anchoredSize: 0, lastRecordedAt: '2025-01-01T00:00:05.000Z' });
      expect(await a.tenantLogSize('ten_a')).toBe(5);
      expect(await a.tenantLogSize('ten_b')).toBe(0);
      await expect(a.setTenantLogSize('ten_nobody', 1, AT)).rejects.toThrow();
    });

    it('lists the logs with unanchored leaves by tenant id, and the tenants whose records outnumber their log', async () => {
      const a = db.store(ANCHORING);
      await seedRecords('ten_a', [AT, AT, AT]);
      await seedRecords('ten_b', [AT, AT]);
      await a.setTenantLogSize('ten_c', 2, AT); // a log with no records behind it: not "behind"
      await a.setTenantLogSize('ten_b', 2, AT);
      await a.setTenantLogSize('ten_a', 1, AT);
      const behind = await a.logsBehind();
      expect(behind).toEqual([{ tenantId: 'ten_a', records: 3, size: 1 }]);
      await a.insertEpoch(epochRow(0, { tenantCount: 1 }), [leafRow(0, 0, 'ten_b', 2)]);
      expect(await a.unanchoredLogs()).toEqual([
        { tenantId: 'ten_a', size: 1, anchoredSize: 0, lastRecordedAt: AT },
        { tenantId: 'ten_c', size: 2, anchoredSize: 0, lastRecordedAt: AT },
      ]);
      await a.setTenantLogSize('ten_a', 3, AT);
      expect(await a.logsBehind()).toEqual([]);
      await db.exec("INSERT INTO tenants (id, kind, display_name, created_at, updated_at) VALUES ('ten_d', 'sandbox', 'D', ?, ?)", AT, AT);
      await seedRecords('ten_d', [AT]);
      expect((await a.logsBehind()).sort((x, y) => x.tenantId.localeCompare(y.tenantId))).toEqual([{ tenantId: 'ten_d', records: 1, size: 0 }]);
    });

    it("reads a tenant's record leaves, counts records before an instant, and finds the first record's time", async () => {
      const a = db.store(ANCHORING);
      expect(await a.firstRecordedAt()).toBeUndefined();
      const times = ['2025-01-01T00:00:01.000Z', '2025-01-01T00:59:59.999Z', '2025-01-01T01:00:00.000Z', '2025-01-01T01:00:00.000Z', '2025-01-01T02:30:00.000Z'];
      const hashes = await seedRecords('ten_a', times);
      await seedRecords('ten_b', ['2024-12-31T23:00:00.000Z']);
      expect(await a.recordLeaves('ten_a', 1, 4)).toEqual([1, 2, 3].map((i) => ({ attestationHash: hashes[i], recordedAt: times[i] })));
      expect(await a.recordLeaves('ten_a', 5, 10)).toEqual([]);
      expect(await a.recordLeaves('ten_c', 0, 10)).toEqual([]);
      expect(await a.recordsBefore('ten_a', '2025-01-01T00:00:00.000Z')).toBe(0);
      expect(await a.recordsBefore('ten_a', '2025-01-01T01:00:00.000Z')).toBe(2); // strictly before the boundary
      expect(await a.recordsBefore('ten_a', '2025-01-01T01:00:00.001Z')).toBe(4);
      expect(await a.recordsBefore('ten_a', '2026-01-01T00:00:00.000Z')).toBe(5);
      expect(await a.recordsBefore('ten_c', '2026-01-01T00:00:00.000Z')).toBe(0);
      expect(await a.firstRecordedAt()).toBe('2024-12-31T23:00:00.000Z');
    });
  });

  describe('epochs', () => {
    it('inserts epochs with their leaves and reads them back exactly: last, by seq, pages and leaves', async () => {
      const a = db.store(ANCHORING);
      expect(await a.lastEpoch()).toBeUndefined();
      expect(await a.epoch(0)).toBeUndefined();
      expect(await a.epochs(-1, 10)).toEqual([]);
      for (const id of ['ten_a', 'ten_b']) await a.setTenantLogSize(id, 10, AT);
      const e0 = epochRow(0, { tenantCount: 2 });
      const l0 = [leafRow(0, 0, 'ten_b', 4), leafRow(0, 1, 'ten_a', 3)];
      const e1 = epochRow(1, { tenantCount: 0 });
      const e2 = epochRow(2, { tenantCount: 1 });
      const l2 = [leafRow(2, 0, 'ten_a', 9)];
      await a.insertEpoch(e0, l0);
      await a.insertEpoch(e1, []);
      await a.insertEpoch(e2, l2);
      expect(await a.lastEpoch()).toEqual(e2);
      expect(await a.epoch(0)).toEqual(e0);
      expect((await a.epoch(0))!.prevEpochDigest).toBeNull();
      expect(await a.epoch(1)).toEqual(e1);
      expect(await a.epoch(3)).toBeUndefined();
      expect(await a.epochs(-1, 2)).toEqual([e0, e1]);
      expect(await a.epochs(1, 2)).toEqual([e2]);
      expect(await a.epochs(2, 2)).toEqual([]);
      expect(await a.epochLeaves(0)).toEqual(l0);
      expect(await a.epochLeaves(1)).toEqual([]);
      expect(await a.epochLeaves(2)).toEqual(l2);
      expect((await a.tenantLog('ten_a'))!.anchoredSize).toBe(9);
      expect((await a.tenantLog('ten_b'))!.anchoredSize).toBe(4);
    });

    it('finds the epoch leaf that first anchored a tenant leaf, and the size anchored before a size', async () => {
      const a = db.store(ANCHORING);
      await a.setTenantLogSize('ten_a', 20, AT);
      await a.insertEpoch(epochRow(0, { tenantCount: 1 }), [leafRow(0, 0, 'ten_a', 5)]);
      await a.insertEpoch(epochRow(1, { tenantCount: 2 }), [leafRow(1, 0, 'ten_b', 1), leafRow(1, 1, 'ten_a', 12)]);
      expect(await a.anchoringLeaf('ten_a', 0)).toEqual(leafRow(0, 0, 'ten_a', 5));
      expect(await a.anchoringLeaf('ten_a', 4)).toEqual(leafRow(0, 0, 'ten_a', 5));
      expect(await a.anchoringLeaf('ten_a', 5)).toEqual(leafRow(1, 1, 'ten_a', 12));
      expect(await a.anchoringLeaf('ten_a', 11)).toEqual(leafRow(1, 1, 'ten_a', 12));
      expect(await a.anchoringLeaf('ten_a', 12)).toBeUndefined();
      expect(await a.anchoringLeaf('ten_c', 0)).toBeUndefined();
      expect(await a.anchoredBefore('ten_a', 5)).toBe(0);
      expect(await a.anchoredBefore('ten_a', 12)).toBe(5);
      expect(await a.anchoredBefore('ten_a', 13)).toBe(12);
      expect(await a.anchoredBefore('ten_c', 13)).toBe(0);
    });

    it('never moves an anchored size back, and leaves a tenant without a log alone', async () => {
      const a = db.store(ANCHORING);
      await a.setTenantLogSize('ten_a', 20, AT);
      await a.insertEpoch(epochRow(0, { tenantCount: 1 }), [leafRow(0, 0, 'ten_a', 8)]);
      await a.insertEpoch(epochRow(1, { tenantCount: 2 }), [leafRow(1, 0, 'ten_a', 6), leafRow(1, 1, 'ten_c', 2)]);
      expect((await a.tenantLog('ten_a'))!.anchoredSize).toBe(8);
      expect(await a.tenantLog('ten_c')).toBeUndefined();
      expect(await a.epochLeaves(1)).toEqual([leafRow(1, 0, 'ten_a', 6), leafRow(1, 1, 'ten_c', 2)]);
    });

    it('refuses a second epoch for a closed period or seq, keeping the first', async () => {
      const a = db.store(ANCHORING);
      await a.setTenantLogSize('ten_a', 5, AT);
      await a.insertEpoch(epochRow(0, { tenantCount: 1 }), [leafRow(0, 0, 'ten_a', 3)]);
      await expect(db.transaction((tx) => tx.store(ANCHORING).insertEpoch(epochRow(1, { periodEnd: epochRow(0).periodEnd }), []))).rejects.toThrow();
      await expect(db.transaction((tx) => tx.store(ANCHORING).insertEpoch(epochRow(0, { epochDigest: hex64('other') }), []))).rejects.toThrow();
      expect(await a.epochs(-1, 10)).toEqual([epochRow(0, { tenantCount: 1 })]);
      expect(await a.epochLeaves(0)).toEqual([leafRow(0, 0, 'ten_a', 3)]);
    });

    it('rolls an epoch, its leaves, anchored sizes, log sizes and nodes back with their transaction', async () => {
      await db.store(ANCHORING).setTenantLogSize('ten_a', 5, AT);
      await expect(
        db.transaction(async (tx) => {
          const a = tx.store(ANCHORING);
          await a.setTenantLogSize('ten_a', 9, AT);
          await a.putNode('#epochs', 0, 0, hash('d0'));
          await a.insertEpoch(epochRow(0, { tenantCount: 1 }), [leafRow(0, 0, 'ten_a', 9)]);
          expect((await a.tenantLog('ten_a'))!.anchoredSize).toBe(9);
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      const a = db.store(ANCHORING);
      expect(await a.tenantLog('ten_a')).toEqual({ tenantId: 'ten_a', size: 5, anchoredSize: 0, lastRecordedAt: AT });
      expect(await a.lastEpoch()).toBeUndefined();
      expect(await a.epochLeaves(0)).toEqual([]);
      expect(await a.getNode('#epochs', 0, 0)).toBeUndefined();
    });

    it('writes nothing of an epoch whose leaf is refused, inside its transaction', async () => {
      await expect(
        db.transaction((tx) => tx.store(ANCHORING).insertEpoch(epochRow(0, { tenantCount: 2 }), [leafRow(0, 0, 'ten_a', 1), leafRow(0, 1, 'ten_nobody', 1)])),
      ).rejects.toThrow();
      expect(await db.store(ANCHORING).lastEpoch()).toBeUndefined();
      expect(await db.store(ANCHORING).epochLeaves(0)).toEqual([]);
    });
  });

  if (engine.name === 'postgres') {
    describe('concurrent transactions', () => {
      it('two closers of the same period: both read no epoch, both insert epoch 0, exactly one wins', async () => {
        await db.store(ANCHORING).setTenantLogSize('ten_a', 10, AT);
        await db.store(ANCHORING).setTenantLogSize('ten_b', 10, AT);
        const bothRead = barrier(2);
        const close = (name: string, tenantId: string, size: number) =>
          db.transaction(async (tx) => {
            const a = tx.store(ANCHORING);
            const last = await a.lastEpoch();
            await bothRead();
            const seq = last ? last.epochSeq + 1 : 0;
            await a.insertEpoch(epochRow(seq, { tenantCount: 1, epochDigest: hex64(name), canonicalRoot: hex64(`root ${name}`) }), [leafRow(seq, 0, tenantId, size)]);
            return name;
          });
        const result = await outcomes([close('one', 'ten_a', 4), close('two', 'ten_b', 6)]);
        expect(result.fulfilled).toBe(1);
        expect(result.rejected).toHaveLength(1);
        expect(result.rejected[0]).toMatch(/duplicate key|unique/i);
        const a = db.store(ANCHORING);
        const epochs = await a.epochs(-1, 10);
        expect(epochs).toHaveLength(1);
        const winner = epochs[0]!.epochDigest === hex64('one') ? { tenantId: 'ten_a', size: 4, loser: 'ten_b' } : { tenantId: 'ten_b', size: 6, loser: 'ten_a' };
        expect(await a.epochLeaves(0)).toEqual([leafRow(0, 0, winner.tenantId, winner.size)]);
        expect((await a.tenantLog(winner.tenantId))!.anchoredSize).toBe(winner.size);
        expect((await a.tenantLog(winner.loser))!.anchoredSize).toBe(0);
      });

      it('closers that take the epoch-close lock first close a period once: the later one waits, then sees the epoch', async () => {
        await db.store(ANCHORING).setTenantLogSize('ten_a', 10, AT);
        const order: string[] = [];
        const close = (name: string) =>
          db.transaction(async (tx) => {
            const a = tx.store(ANCHORING);
            await a.lockEpochClose();
            order.push(`${name} locked`);
            const last = await a.lastEpoch();
            if (last) return `${name} found epoch ${last.epochSeq}`;
            // Hold the lock until the other closer is seen waiting for it, not reading.
            await lockWaitBefore(db);
            await a.insertEpoch(epochRow(0, { tenantCount: 1, epochDigest: hex64(name) }), [leafRow(0, 0, 'ten_a', 4)]);
            order.push(`${name} closed`);
            return `${name} closed epoch 0`;
          });
        const results = await Promise.all([close('one'), close('two')]);
        expect(results.filter((r) => / closed epoch 0$/.test(r))).toHaveLength(1);
        expect(results.filter((r) => / found epoch 0$/.test(r))).toHaveLength(1);
        // The second closer got the lock only after the first had closed and committed.
        expect(order).toHaveLength(3);
        expect(order[1]).toMatch(/closed$/);
        expect(await db.store(ANCHORING).epochs(-1, 10)).toHaveLength(1);
      });

      it('two epochs anchoring one tenant commit in either order: the anchored size ends at the larger', async () => {
        await db.store(ANCHORING).setTenantLogSize('ten_a', 10, AT);
        const bothStarted = barrier(2);
        const insert = (seq: number, size: number) =>
          db.transaction(async (tx) => {
            await bothStarted();
            await tx.store(ANCHORING).insertEpoch(epochRow(seq, { tenantCount: 1 }), [leafRow(seq, 0, 'ten_a', size)]);
          });
        expect(await outcomes([insert(1, 9), insert(0, 4)])).toEqual({ fulfilled: 2, rejected: [] });
        expect((await db.store(ANCHORING).tenantLog('ten_a'))!.anchoredSize).toBe(9);
      });

      it("two first leaves of one tenant's log at once: both set the size, no duplicate row", async () => {
        const bothStarted = barrier(2);
        const set = (size: number) =>
          db.transaction(async (tx) => {
            await bothStarted();
            await tx.store(ANCHORING).setTenantLogSize('ten_a', size, AT);
          });
        expect(await outcomes([set(1), set(2)])).toEqual({ fulfilled: 2, rejected: [] });
        const rows = await db.rows<{ size: number }>("SELECT size FROM tenant_logs WHERE tenant_id = 'ten_a'");
        expect(rows).toHaveLength(1);
        expect([1, 2]).toContain(Number(rows[0]!.size));
      });
    });
  }
});
