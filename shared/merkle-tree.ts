/**
 * An append-only RFC 9162 §2.1 Merkle tree that keeps its complete subtree hashes, so
 * inclusion and consistency proofs against the current or any earlier size come from stored
 * levels in microseconds (a tenant log, DESIGN.md §4). Browser-safe.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import {
  H,
  NODE_INPUT,
  assertCount,
  assertHash,
  consistencyProofRanges,
  digestNodeInput,
  hashChildren,
  hashPairs,
  inclusionProofRanges,
  invalidArgument,
  isPowerOfTwo,
  packHashes,
  splitPoint,
} from './_merkle.ts';
/** How many tree sizes keep their ragged-edge hashes (about log2(size) each). */
const EDGE_CACHE_TREE_SIZES = 16;

/**
 * An append-only RFC 9162 tree answering heads and proofs for its current size and every
 * earlier one. `levels[h]` packs the hashes of the complete subtrees of 2^h leaves, left to
 * right (node j covers leaves [j·2^h, (j+1)·2^h)); in an append-only log these never change,
 * so each is hashed once (about 2n nodes in all). The ragged right edge of a tree that is not
 * a power of two is combined from them on demand, O(log n) hashes, and remembered. Stored
 * trees stay far below 2^31 leaves (32 bytes each), so 32-bit operations are exact here.
 */
export class MerkleTree {
  #levels: Uint8Array[] = [];
  #size = 0;
  // Ragged-edge hashes by tree size, then start. Leaves never change, so they stay valid;
  // proofs against one tree head (an epoch's size, the current size) then cost no hashing.
  #edges = new Map<number, Map<number, Uint8Array>>();

  /** Builds the stored levels in one pass: about one hash per leaf. */
  static fromLeafHashes(leafHashes: readonly Uint8Array[]): MerkleTree {
    const tree = new MerkleTree();
    let level = packHashes(leafHashes);
    let count = leafHashes.length;
    if (count === 0) return tree;
    tree.#levels.push(level);
    while (count > 1) {
      const parents = new Uint8Array(H * Math.floor(count / 2));
      count = hashPairs(level, count, parents);
      tree.#levels.push(parents);
      level = parents;
    }
    tree.#size = leafHashes.length;
    return tree;
  }

  get size(): number {
    return this.#size;
  }

  /** Appends one leaf hash and returns its index; hashes each subtree the leaf completes. */
  append(leafHash: Uint8Array): number {
    assertHash(leafHash, 'leaf hash');
    const index = this.#size;
    this.#slot(0, index).set(leafHash);
    // A node at an odd position is a right child: with its left sibling it completes the parent.
    for (let level = 0, j = index; j % 2 === 1; level++, j = (j - 1) / 2) {
      NODE_INPUT.set(this.#levels[level]!.subarray(H * (j - 1), H * (j + 1)), 1);
      digestNodeInput(this.#slot(level + 1, (j - 1) / 2));
    }
    this.#size = index + 1;
    return index;
  }

  /** The tree head now. */
  root(): Uint8Array {
    return this.rootAt(this.#size);
  }

  /** The tree head when the log held `size` leaves (RFC 9162 §2.1.1). */
  rootAt(size: number): Uint8Array {
    assertCount(size, 'tree size');
    this.#assertHeld(size);
    return size === 0 ? sha256(new Uint8Array(0)) : this.#subtreeHash(0, size);
  }

  /** RFC 9162 §2.1.3.1 audit path for leaf `index` in the tree of `size` leaves, leaf first. */
  inclusionProof(index: number, size: number = this.#size): Uint8Array[] {
    const ranges = inclusionProofRanges(index, size);
    this.#assertHeld(size);
    return ranges.map(([start, end]) => this.#subtreeHash(start, end));
  }

  /** RFC 9162 §2.1.4.1 proof that the tree of `newSize` leaves extends the one of `oldSize`. */
  consistencyProof(oldSize: number, newSize: number = this.#size): Uint8Array[] {
    const ranges = consistencyProofRanges(oldSize, newSize);
    this.#assertHeld(newSize);
    return ranges.map(([start, end]) => this.#subtreeHash(start, end));
  }

  /** MTH(D[start:end]) for a subtree the RFC 9162 recursion produces; a fresh copy. */
  #subtreeHash(start: number, end: number): Uint8Array {
    const n = end - start;
    if (isPowerOfTwo(n)) {
      const offset = H * (start / n);
      return this.#levels[31 - Math.clz32(n)]!.slice(offset, offset + H);
    }
    let hash = this.#edges.get(end)?.get(start);
    if (hash === undefined) {
      // RFC 9162 §2.1.1: MTH(D[n]) = HASH(0x01 ‖ MTH(D[0:k]) ‖ MTH(D[k:n])).
      const k = splitPoint(n);
      hash = hashChildren(this.#subtreeHash(start, start + k), this.#subtreeHash(start + k, end));
      this.#edgesEndingAt(end).set(start, hash);
    }
    return hash.slice();
  }

  #edgesEndingAt(end: number): Map<number, Uint8Array> {
    let edges = this.#edges.get(end);
    if (edges === undefined) {
      if (this.#edges.size >= EDGE_CACHE_TREE_SIZES) this.#edges.delete(this.#edges.keys().next().value!);
      edges = new Map();
      this.#edges.set(end, edges);
    }
    return edges;
  }

  /** The 32-byte slot for node `index` of `level`, growing that level's buffer if needed. */
  #slot(level: number, index: number): Uint8Array {
    const end = H * (index + 1);
    let buffer = this.#levels[level];
    if (buffer === undefined || buffer.length < end) {
      // Doubling keeps appends amortised O(1) copies.
      const grown = new Uint8Array(Math.max(end, 2 * (buffer?.length ?? 0), 8 * H));
      if (buffer !== undefined) grown.set(buffer);
      this.#levels[level] = buffer = grown;
    }
    return buffer.subarray(end - H, end);
  }

  #assertHeld(size: number): void {
    if (size > this.#size) {
      throw invalidArgument(`expected a tree size of at most ${this.#size}, got ${size}`);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Verification

