/**
 * Append-only RFC 9162 §2.1 trees kept as stored levels (DESIGN.md §4): node (level, idx) is
 * the hash of the complete subtree of 2^level leaves starting at leaf idx·2^level. Appending
 * a leaf writes it and each subtree it completes (two node writes on average), so a tree head
 * or proof at any size costs O(log n) node reads and never a rebuild.
 *
 * The proof shapes come from shared/merkle (inclusionProofRanges, consistencyProofRanges): this
 * file only supplies each range's hash from storage, so what it serves is exactly what any
 * RFC 6962/9162 verifier checks.
 *
 * Each log's frontier (the complete subtrees along its right edge, one per set bit of its
 * size) is also kept in memory, shared by every StoredTrees over the same node store: an
 * append then reads nothing, and the head at the current size is a fold of at most log2(n)
 * hashes, which is what an epoch close needs per tenant. A frontier is used only when its size
 * is exactly the size asked about; an append rolled back with its transaction leaves the
 * cached size ahead of the stored one, so the next append or head at the stored size reloads it.
 */
import { consistencyProofRanges, inclusionProofRanges, leafHash, nodeHash } from '../../shared/merkle.ts';
import type { LeafRange } from '../../shared/merkle.ts';
import { sha256 } from '../../shared/hash.ts';

export interface NodeStore {
  get(logId: string, level: number, idx: number): Uint8Array | undefined;
  put(logId: string, level: number, idx: number, hash: Uint8Array): void;
}

/** A log's right edge: the hashes of its complete subtrees, largest (leftmost) first. */
interface Frontier {
  size: number;
  hashes: Uint8Array[];
}

/** Logs whose frontier stays in memory; a miss costs popcount(size) node reads. */
const FRONTIER_CACHE_MAX = 100_000;
const frontiers = new WeakMap<NodeStore, Map<string, Frontier>>();

export class StoredTrees {
  readonly #nodes: NodeStore;
  readonly #frontiers: Map<string, Frontier>;

  constructor(nodes: NodeStore) {
    this.#nodes = nodes;
    let cache = frontiers.get(nodes);
    if (!cache) frontiers.set(nodes, (cache = new Map()));
    this.#frontiers = cache;
  }

  /** Appends leaf data as leaf number `size` (the tree's size before) of log `logId`. */
  append(logId: string, size: number, leafData: Uint8Array): void {
    const frontier = this.#frontier(logId, size);
    let hash = leafHash(leafData);
    this.#nodes.put(logId, 0, size, hash);
    // A node at an odd position is a right child: with its left sibling, the last subtree of
    // the frontier, it completes the parent (RFC 9162 §2.1.1: HASH(0x01 ‖ left ‖ right)).
    for (let level = 0, j = size; j % 2 === 1; level++, j = (j - 1) / 2) {
      hash = nodeHash(frontier.hashes.pop()!, hash);
      this.#nodes.put(logId, level + 1, (j - 1) / 2, hash);
    }
    frontier.hashes.push(hash);
    frontier.size = size + 1;
  }

  /** MTH(D[0:size]) (RFC 9162 §2.1.1); SHA-256 of nothing for the empty tree. */
  rootAt(logId: string, size: number): Uint8Array {
    if (size === 0) return sha256(new Uint8Array(0));
    const cached = this.#frontiers.get(logId);
    if (cached?.size !== size) return this.#subtree(logId, 0, size);
    // Folding the right edge from the right is the RFC recursion: MTH = HASH(A ‖ HASH(B ‖ C)).
    const { hashes } = cached;
    let root = hashes[hashes.length - 1]!;
    for (let i = hashes.length - 2; i >= 0; i--) root = nodeHash(hashes[i]!, root);
    return root;
  }

  /** The frontier of the tree of `size` leaves, from memory when it is exactly that size. */
  #frontier(logId: string, size: number): Frontier {
    let f = this.#frontiers.get(logId);
    if (f?.size !== size) {
      const hashes: Uint8Array[] = [];
      for (let level = 31, start = 0; level >= 0; level--) {
        const width = 2 ** level;
        if (size & width) {
          hashes.push(this.#node(logId, level, start / width));
          start += width;
        }
      }
      f = { size, hashes };
      if (!this.#frontiers.has(logId) && this.#frontiers.size >= FRONTIER_CACHE_MAX) this.#frontiers.delete(this.#frontiers.keys().next().value!);
      this.#frontiers.set(logId, f);
    }
    return f;
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
