/**
 * Each tenant's append-only log (DESIGN.md §4): leaf data = the record's raw 32-byte
 * attestation hash, leaf index = tenant_seq, tree head = tenant_chain_root. The anchoring
 * participant appends the leaf in the seal's own transaction, so the log and the records never
 * disagree, and a refused seal leaves no leaf behind.
 */
import { fromHex } from '../../shared/encoding.ts';
import type { SealParticipant } from '../evidence/participants.ts';
import type { AnchoringStore } from './store.ts';
import { StoredTrees } from './stored-tree.ts';

/**
 * Brings the tenant's log up to `seq` leaves from its sealed records: the records sealed
 * before this capability existed, and nothing otherwise. Returns the log's size.
 */
export function catchUpTenantLog(store: AnchoringStore, trees: StoredTrees, tenantId: string, seq: number): number {
  let size = store.tenantLogSize(tenantId);
  if (size >= seq) return size;
  for (const hash of store.attestationHashes(tenantId, size, seq)) trees.append(tenantId, size++, fromHex(hash));
  if (size !== seq) throw new Error(`tenant log ${tenantId}: records ${store.tenantLogSize(tenantId)}..${seq} are missing`);
  store.setTenantLogSize(tenantId, size);
  return size;
}

export function tenantLogParticipant(store: AnchoringStore): SealParticipant {
  const trees = new StoredTrees(store.nodes);
  return {
    name: 'anchoring',
    sealed({ record }) {
      const size = catchUpTenantLog(store, trees, record.tenantId, record.tenantSeq);
      // The sealer numbers records from the evidence log head; the tree must be exactly there.
      if (size !== record.tenantSeq) throw new Error(`tenant log ${record.tenantId} holds ${size} leaves, record is leaf ${record.tenantSeq}`);
      trees.append(record.tenantId, size, fromHex(record.attestationHash));
      store.setTenantLogSize(record.tenantId, size + 1);
    },
  };
}
