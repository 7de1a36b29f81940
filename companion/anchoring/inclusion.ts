/**
 * Inclusion proofs (interface-spec "Inclusion proof"; DESIGN.md §4): both hops, record →
 * tenant_chain_root in the tenant log at the size the epoch anchored, then that tenant leaf →
 * canonical_root in the epoch's canonical tree, plus the epoch's signed header.
 */
import { fromHex, toHex } from '../../shared/encoding.ts';
import { epochLeafBytes } from '../../shared/epoch.ts';
import type { EpochLeaf } from '../../shared/epoch.ts';
import { MerkleTree, leafHash, proofToHex } from '../../shared/merkle.ts';
import { signedHeader } from './epochs.ts';
import type { AnchoringStore, EpochRow } from './store.ts';
import { StoredTrees } from './stored-tree.ts';

/** Canonical trees kept built: the latest epochs are the ones asked about. */
const CANONICAL_TREE_CACHE = 8;

export interface RecordLeaf {
  tenantId: string;
  tenantSeq: number;
  actionKey: string;
  attestationHash: string;
}

export type InclusionProof = ReturnType<InclusionProver['prove']>;

export class InclusionProver {
  readonly #store: AnchoringStore;
  readonly #trees: StoredTrees;
  readonly #canonical = new Map<number, { leaves: EpochLeaf[]; tree: MerkleTree }>();

  constructor(store: AnchoringStore) {
    this.#store = store;
    this.#trees = new StoredTrees(store.nodes);
  }

  /** The proof, or undefined while no closed epoch anchors the record yet. */
  prove(record: RecordLeaf) {
    const anchoring = this.#store.anchoringLeaf(record.tenantId, record.tenantSeq);
    if (!anchoring) return undefined;
    const epoch = this.#store.epoch(anchoring.epochSeq)!;
    const { leaves, tree } = this.#canonicalTree(epoch);
    const leaf = leaves[anchoring.leafIndex]!;
    const recordLeafHash = leafHash(fromHex(record.attestationHash));
    return {
      action_key: record.actionKey,
      tenant_id: record.tenantId,
      attestation_hash: record.attestationHash,
      tenant_log: {
        leaf_index: record.tenantSeq,
        tree_size: anchoring.tenantSize,
        leaf_hash: toHex(recordLeafHash),
        root: anchoring.tenantChainRoot,
        proof: proofToHex(this.#trees.inclusionProof(record.tenantId, record.tenantSeq, anchoring.tenantSize)),
      },
      epoch: {
        epoch_seq: epoch.epochSeq,
        leaf_index: anchoring.leafIndex,
        tree_size: epoch.tenantCount,
        leaf,
        leaf_hash: toHex(leafHash(epochLeafBytes(leaf))),
        canonical_root: epoch.canonicalRoot,
        proof: proofToHex(tree.inclusionProof(anchoring.leafIndex)),
      },
      epoch_header: signedHeader(epoch),
    };
  }

  #canonicalTree(epoch: EpochRow) {
    let entry = this.#canonical.get(epoch.epochSeq);
    if (!entry) {
      const leaves = this.#store.epochLeaves(epoch.epochSeq).map((l) => ({ tenant_id: l.tenantId, tenant_size: l.tenantSize, tenant_chain_root: l.tenantChainRoot }));
      entry = { leaves, tree: MerkleTree.fromLeafHashes(leaves.map((l) => leafHash(epochLeafBytes(l)))) };
      if (this.#canonical.size >= CANONICAL_TREE_CACHE) this.#canonical.delete(this.#canonical.keys().next().value!);
      this.#canonical.set(epoch.epochSeq, entry);
    }
    return entry;
  }

  /** RFC 9162 consistency proof between two sizes of a tenant log, with both heads. */
  tenantConsistency(tenantId: string, fromSize: number, toSize: number) {
    return {
      from: { size: fromSize, root: toHex(this.#trees.rootAt(tenantId, fromSize)) },
      to: { size: toSize, root: toHex(this.#trees.rootAt(tenantId, toSize)) },
      proof: proofToHex(this.#trees.consistencyProof(tenantId, fromSize, toSize)),
    };
  }

  /** RFC 9162 consistency proof between the epoch log at two epochs (sizes seq + 1). */
  epochConsistency(logId: string, from: EpochRow, to: EpochRow) {
    const head = (e: EpochRow) => ({ epoch_seq: e.epochSeq, size: e.epochSeq + 1, root: toHex(this.#trees.rootAt(logId, e.epochSeq + 1)) });
    return {
      from: head(from),
      to: head(to),
      proof: proofToHex(this.#trees.consistencyProof(logId, from.epochSeq + 1, to.epochSeq + 1)),
    };
  }
}
