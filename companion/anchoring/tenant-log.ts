/**
 * Each tenant's append-only log (DESIGN.md §4): leaf data = the record's raw 32-byte
 * attestation hash, leaf index = tenant_seq, tree head = tenant_chain_root. The anchoring
 * participant appends the leaf in the seal's own transaction, so the log and the records never
 * disagree, and a refused seal leaves no leaf behind.
 */
import { fromHex } from '../../shared/encoding.ts';
import type { SealBatch, SealParticipant } from '../evidence/participants.ts';
import { syncOf } from '../core/async-store.ts';
import type { Store, Tx } from '../core/stores.ts';
import type { AnchoringStore } from './store.ts';
import { StoredTrees } from './stored-tree.ts';

/**
 * Brings the tenant's log up to `seq` leaves from its sealed records: the records sealed
 * before this capability existed, and nothing otherwise. Returns the log's size. `store` is
 * the open transaction's, and `trees` are over it.
 */
export async function catchUpTenantLog(store: AnchoringStore, trees: StoredTrees, tenantId: string, seq: number): Promise<number> {
  let size = await store.tenantLogSize(tenantId);
  if (size >= seq) return size;
  let last = '';
  for (const leaf of await store.recordLeaves(tenantId, size, seq)) {
    await trees.append(tenantId, size++, fromHex(leaf.attestationHash));
    last = leaf.recordedAt;
  }
  if (size !== seq) throw new Error(`tenant log ${tenantId}: records ${await store.tenantLogSize(tenantId)}..${seq} are missing`);
  await store.setTenantLogSize(tenantId, size, last);
  return size;
}

/**
 * Gives every log of records sealed before this capability existed its leaves. Run once at
 * startup, before the first seal (deps.ts): from then on every seal appends its own leaf.
 */
export async function catchUpTenantLogs(store: Store): Promise<void> {
  await store.transaction(async (tx) => {
    const trees = new StoredTrees(tx.anchoring);
    for (const log of await tx.anchoring.logsBehind()) await catchUpTenantLog(tx.anchoring, trees, log.tenantId, log.records);
  });
}

/** What the participant keeps for one batch: its trees, and each tenant's log size and last leaf's time so far. */
interface BatchLogs {
  trees: StoredTrees;
  sizes: Map<string, { size: number; at: string }>;
}

export function tenantLogParticipant(): SealParticipant {
  // Trees over the same store share their caches (the transaction's view carries its
  // treeCacheKey), so one per batch reads nothing the batch before it already had in memory.
  const logs = (batch: SealBatch, tx: Tx): BatchLogs =>
    batch.of('anchoring', () => ({ trees: new StoredTrees(syncOf(tx.anchoring) ?? tx.anchoring), sizes: new Map() }));
  return {
    name: 'anchoring',
    sealed({ record }, tx, batch) {
      const { trees, sizes } = logs(batch, tx);
      // tenant_seq is the leaf index (DESIGN.md §4). A log that were behind would lack the
      // left siblings this leaf completes, and append would throw: the seal is refused rather
      // than anchored wrongly.
      // The sealer computed this hex itself: Buffer's native decoder, no validating loop.
      const appending = trees.appendNow(record.tenantId, record.tenantSeq, Buffer.from(record.attestationHash, 'hex'));
      const size = { size: record.tenantSeq + 1, at: record.recordedAt };
      if (!appending) return void sizes.set(record.tenantId, size);
      return appending.then(() => void sizes.set(record.tenantId, size));
    },
    // The log's size moves once per tenant per batch, in the batch's transaction: the appends
    // above take the size they extend from the sealer (tenant_seq), never from this row.
    async flush(tx, batch) {
      for (const [tenantId, { size, at }] of logs(batch, tx).sizes) await tx.anchoring.setTenantLogSize(tenantId, size, at);
    },
  };
}
