/**
 * Append-only RFC 9162 §2.1 trees kept as stored levels (DESIGN.md §4): node (level, idx) is
 * the hash of the complete subtree of 2^level leaves starting at leaf idx·2^level. Appending
 * a leaf writes it and each subtree it completes (two node writes on average), so a tree head
 * or proof at any size costs O(log n) node reads and never a rebuild.
 *
 * The proof shapes come from shared/merkle (inclusionProofRanges, consistencyProofRanges): this
 * file only supplies each range's hash from storage, so what it serves is exactly what any
 * RFC 6962/9162 verifier checks.
 */
import { consistencyProofRanges, inclusionProofRanges, leafHash, nodeHash } from '../../shared/merkle.ts';
import type { LeafRange } from '../../shared/merkle.ts';
import { sha256 } from '../../shared/hash.ts';

export interface NodeStore {
  get(logId: string, level: number, idx: number): Uint8Array | undefined;
  put(logId: string, level: number, idx: number, hash: Uint8Array): void;
}

export class StoredTrees {
  readonly #nodes: NodeStore;

  constructor(nodes: NodeStore) {
    this.#nodes = nodes;
  }

  /** Appends leaf data as leaf number `size` (the tree's size before) of log `logId`. */
  append(logId: string, size: number, leafData: Uint8Array): void {
    let hash = leafHash(leafData);
    this.#nodes.put(logId, 0, size, hash);
    // A node at an odd position is a right child: with its stored left sibling it completes
    // the parent (RFC 9162 §2.1.1: MTH(D[n]) = HASH(0x01 ‖ MTH(D[0:k]) ‖ MTH(D[k:n]))).
    for (let level = 0, j = size; j % 2 === 1; level++, j = (j - 1) / 2) {
      hash = nodeHash(this.#node(logId, level, j - 1), hash);
      this.#nodes.put(logId, level + 1, (j - 1) / 2, hash);
    }
  }

  /** MTH(D[0:size]) (RFC 9162 §2.1.1); SHA-256 of nothing for the empty tree. */
  rootAt(logId: string, size: number): Uint8Array {
    return size === 0 ? sha256(new Uint8Array(0)) : this.#subtree(logId, 0, size);
  }

  /** RFC 9162 §2.1.3.1 audit path for leaf `index` of the tree of `size` leaves, leaf first. */
  inclusionProof(logId: string, index: number, size: number): Uint8Array[] {
    return this.#hashes(logId, inclusionProofRanges(index, size));
  }

  /** RFC 9162 §2.1.4.1 proof that the tree of `newSize` leaves extends the one of `oldSize`. */
  consistencyProof(logId: string, oldSize: number, newSize: number): Uint8Array[] {
    return this.#hashes(logId, consistencyProofRanges(oldSize, newSize));
  }

  #hashes(logId: string, ranges: readonly LeafRange[]): Uint8Array[] {
    return ranges.map(([start, end]) => this.#subtree(logId, start, end));
  }

  /** MTH(D[start:end]) for a range the RFC 9162 recursion produces (start aligned to its split). */
  #subtree(logId: string, start: number, end: number): Uint8Array {
    const n = end - start;
    if ((n & (n - 1)) === 0) return this.#node(logId, 31 - Math.clz32(n), start / n);
    const k = 1 << (31 - Math.clz32(n - 1));
    return nodeHash(this.#subtree(logId, start, start + k), this.#subtree(logId, start + k, end));
  }

  #node(logId: string, level: number, idx: number): Uint8Array {
    const hash = this.#nodes.get(logId, level, idx);
    // A missing node means a leaf was never appended: the caller asked past the tree's size.
    if (!hash) throw new RangeError(`log ${logId} has no node at level ${level}, index ${idx}`);
    return hash;
  }
}
