/**
 * Inclusion proofs (interface-spec "Inclusion proof"; DESIGN.md §4): both hops, record →
 * tenant_chain_root in the tenant log at the size the epoch anchored, then that tenant leaf →
 * canonical_root in the epoch's canonical tree, plus the epoch's signed header.
 */
import { toHex } from '../../shared/encoding.ts';
import { epochLeafBytes } from '../../shared/epoch.ts';
import type { EpochLeaf } from '../../shared/epoch.ts';
import { MerkleTree, leafHash, proofToHex } from '../../shared/merkle.ts';
import { signedHeader } from './epochs.ts';
import { hex, leafHash as nativeLeafHash } from './hashes.ts';
import type { AnchoringStore, EpochLeafRow, EpochRow } from './store.ts';
import { StoredTrees } from './stored-tree.ts';

/** Canonical trees kept built: the latest epochs are the ones asked about. */
const CANONICAL_TREE_CACHE = 8;
/** Tenants whose anchoring epochs are remembered (a few per tenant: each covers many records). */
const ANCHORING_CACHE_TENANTS = 10_000;

/** The epoch half of a proof: the same for every record one epoch leaf anchors. */
interface EpochHop {
  epoch: {
    epoch_seq: number;
    leaf_index: number;
    tree_size: number;
    leaf: EpochLeaf;
    leaf_hash: string;
    canonical_root: string;
    proof: string[];
  };
  epoch_header: ReturnType<typeof signedHeader>;
}

/**
 * An epoch leaf anchors the tenant's leaves from the previous epoch leaf's size (`from`) up to
 * its own tenant_size. Closed epochs never change and a new one only anchors larger sizes, so
 * a span once read stays true.
 */
interface AnchoredSpan {
  from: number;
  leaf: EpochLeafRow;
}

export interface RecordLeaf {
  tenantId: string;
  tenantSeq: number;
  actionKey: string;
  attestationHash: string;
}

export type InclusionProof = Awaited<ReturnType<InclusionProver['prove']>>;

export class InclusionProver {
  readonly #store: AnchoringStore;
  readonly #trees: StoredTrees;
  readonly #canonical = new Map<number, { epoch: EpochRow; leaves: EpochLeaf[]; tree: MerkleTree; hops: Map<number, EpochHop> }>();
  readonly #spans = new Map<string, AnchoredSpan[]>();

  constructor(store: AnchoringStore) {
    this.#store = store;
    this.#trees = new StoredTrees(store);
  }

  /** The proof, or undefined while no closed epoch anchors the record yet. */
  async prove(record: RecordLeaf) {
    const anchoring = await this.#anchoringLeaf(record.tenantId, record.tenantSeq);
    if (!anchoring) return undefined;
    const { epoch, epoch_header } = await this.#epochHop(anchoring);
    return {
      action_key: record.actionKey,
      tenant_id: record.tenantId,
      attestation_hash: record.attestationHash,
      tenant_log: {
        leaf_index: record.tenantSeq,
        tree_size: anchoring.tenantSize,
        leaf_hash: hex(nativeLeafHash(Buffer.from(record.attestationHash, 'hex'))),
        root: anchoring.tenantChainRoot,
        proof: await this.#trees.inclusionProofHex(record.tenantId, record.tenantSeq, anchoring.tenantSize),
      },
      epoch,
      epoch_header,
    };
  }

  /** The epoch leaf that first anchored the tenant's leaf `seq`, remembered by span. */
  async #anchoringLeaf(tenantId: string, seq: number): Promise<EpochLeafRow | undefined> {
    const known = this.#spans.get(tenantId)?.find((s) => s.from <= seq && seq < s.leaf.tenantSize);
    if (known) return known.leaf;
    const leaf = await this.#store.anchoringLeaf(tenantId, seq);
    if (!leaf) return undefined;
    const span = { from: await this.#store.anchoredBefore(tenantId, leaf.tenantSize), leaf };
    // Read again after the awaits: another proof may have added this tenant's first span.
    const spans = this.#spans.get(tenantId);
    if (spans) {
      // A handful per tenant suffice: proofs cluster on recent epochs.
      if (spans.length >= 16) spans.shift();
      spans.push(span);
    } else {
      if (this.#spans.size >= ANCHORING_CACHE_TENANTS) this.#spans.delete(this.#spans.keys().next().value!);
      this.#spans.set(tenantId, [span]);
    }
    return leaf;
  }

  /** The epoch hop of every record the epoch leaf anchors, built once. */
  async #epochHop(anchoring: EpochLeafRow): Promise<EpochHop> {
    const c = await this.#canonicalTree(anchoring.epochSeq);
    let hop = c.hops.get(anchoring.leafIndex);
    if (!hop) {
      const leaf = c.leaves[anchoring.leafIndex]!;
      hop = {
        epoch: {
          epoch_seq: c.epoch.epochSeq,
          leaf_index: anchoring.leafIndex,
          tree_size: c.epoch.tenantCount,
          leaf,
          leaf_hash: toHex(leafHash(epochLeafBytes(leaf))),
          canonical_root: c.epoch.canonicalRoot,
          proof: proofToHex(c.tree.inclusionProof(anchoring.leafIndex)),
        },
        epoch_header: signedHeader(c.epoch),
      };
      // Every proof through this epoch leaf shares these objects: frozen, so no caller can
      // change what the next one returns.
      c.hops.set(anchoring.leafIndex, deepFreeze(hop));
    }
    return hop;
  }

  async #canonicalTree(epochSeq: number) {
    let entry = this.#canonical.get(epochSeq);
    if (!entry) {
      const epoch = (await this.#store.epoch(epochSeq))!;
      const leaves = (await this.#store.epochLeaves(epochSeq)).map((l) => ({ tenant_id: l.tenantId, tenant_size: l.tenantSize, tenant_chain_root: l.tenantChainRoot }));
      entry = { epoch, leaves, tree: MerkleTree.fromLeafHashes(leaves.map((l) => leafHash(epochLeafBytes(l)))), hops: new Map() };
      if (this.#canonical.size >= CANONICAL_TREE_CACHE) this.#canonical.delete(this.#canonical.keys().next().value!);
      this.#canonical.set(epochSeq, entry);
    }
    return entry;
  }

  /** RFC 9162 consistency proof between two sizes of a tenant log, with both heads. */
  async tenantConsistency(tenantId: string, fromSize: number, toSize: number) {
    const [from, to, proof] = await Promise.all([
      this.#trees.rootAt(tenantId, fromSize),
      this.#trees.rootAt(tenantId, toSize),
      this.#trees.consistencyProof(tenantId, fromSize, toSize),
    ]);
    return { from: { size: fromSize, root: toHex(from) }, to: { size: toSize, root: toHex(to) }, proof: proofToHex(proof) };
  }

  /** RFC 9162 consistency proof between the epoch log at two epochs (sizes seq + 1). */
  async epochConsistency(logId: string, from: EpochRow, to: EpochRow) {
    const head = async (e: EpochRow) => ({ epoch_seq: e.epochSeq, size: e.epochSeq + 1, root: toHex(await this.#trees.rootAt(logId, e.epochSeq + 1)) });
    const [fromHead, toHead, proof] = await Promise.all([head(from), head(to), this.#trees.consistencyProof(logId, from.epochSeq + 1, to.epochSeq + 1)]);
    return { from: fromHead, to: toHead, proof: proofToHex(proof) };
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
