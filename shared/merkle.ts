/**
 * RFC 9162 §2.1 Merkle trees over SHA-256: node hashing, tree heads, an append-only tree
 * that answers proofs from stored levels, and inclusion / consistency verification.
 * Browser-safe: Uint8Array and @noble/hashes only.
 *
 * Sizes and indices are numbers, accepted when they are safe non-negative integers; anything
 * else is MERKLE_INVALID_ARGUMENT. Size arithmetic uses 32-bit operators only below 2^31, so
 * hostile sizes up to 2^53 - 1 are judged exactly, not after wrapping.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { constantTimeEqual, fromHex, isSha256Hex, toHex } from './encoding.ts';
import { SvcError, isSvcError } from './errors.ts';

export const RFC9162_LEAF_PREFIX = 0x00;
export const RFC9162_NODE_PREFIX = 0x01;
/** Every leaf and node hash is one SHA-256 output. */
export const MERKLE_HASH_LENGTH = 32;

/** Leaves [start, end): the subtree whose hash MTH(D[start:end]) fills one proof slot. */
export type LeafRange = readonly [start: number, end: number];

const H = MERKLE_HASH_LENGTH;

// ---------------------------------------------------------------------------------------
// Hashing

// Trees hash millions of 65-byte node inputs. Allocating a hasher per node is the slow part
// (notes/performance.md), so one hasher is reset from a pristine template with noble's
// Hash#_cloneInto and digests straight into its destination (~1.5x faster, measured). All
// of this runs synchronously, so the module-level scratch is never shared by two callers.
const PRISTINE = sha256.create();
const WORK = sha256.create();
const NODE_INPUT = new Uint8Array(1 + 2 * H);
NODE_INPUT[0] = RFC9162_NODE_PREFIX;
const LEAF_PREFIX = Uint8Array.of(RFC9162_LEAF_PREFIX);

/** Writes SHA-256(NODE_INPUT) into out[0..32); the caller has filled left ‖ right. */
function digestNodeInput(out: Uint8Array): void {
  PRISTINE._cloneInto(WORK);
  WORK.update(NODE_INPUT);
  WORK.digestInto(out);
}

/** RFC 9162 §2.1.1: HASH(0x01 ‖ left ‖ right), for inputs already known to be 32 bytes. */
function hashChildren(left: Uint8Array, right: Uint8Array): Uint8Array {
  NODE_INPUT.set(left, 1);
  NODE_INPUT.set(right, 1 + H);
  const out = new Uint8Array(H);
  digestNodeInput(out);
  return out;
}

/** RFC 9162 §2.1.1: MTH({d(0)}) = SHA-256(0x00 ‖ d(0)). */
export function leafHash(data: Uint8Array): Uint8Array {
  if (!isBytes(data)) throw invalidArgument(`expected leaf data as Uint8Array, got ${typeName(data)}`);
  return sha256.create().update(LEAF_PREFIX).update(data).digest();
}

/** RFC 9162 §2.1.1: SHA-256(0x01 ‖ left ‖ right) over two 32-byte child hashes. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  assertHash(left, 'left child hash');
  assertHash(right, 'right child hash');
  return hashChildren(left, right);
}

/**
 * Hashes the pairs (2i, 2i+1) of `count` packed hashes in `src` into slot i of `dst` and
 * returns how many parents it wrote. `dst` may be `src`: slot i is written only after slots
 * 2i and 2i+1 were read.
 */
function hashPairs(src: Uint8Array, count: number, dst: Uint8Array): number {
  const parents = Math.floor(count / 2);
  for (let i = 0; i < parents; i++) {
    NODE_INPUT.set(src.subarray(2 * H * i, 2 * H * (i + 1)), 1);
    digestNodeInput(dst.subarray(H * i, H * (i + 1)));
  }
  return parents;
}

/** Copies 32-byte leaf hashes into one buffer, so levels can be hashed without allocating. */
function packHashes(leafHashes: readonly Uint8Array[]): Uint8Array {
  if (!Array.isArray(leafHashes)) {
    throw invalidArgument(`expected an array of leaf hashes, got ${typeName(leafHashes)}`);
  }
  const packed = new Uint8Array(H * leafHashes.length);
  leafHashes.forEach((hash, i) => {
    assertHash(hash, `leaf hash [${i}]`);
    packed.set(hash, H * i);
  });
  return packed;
}

/**
 * RFC 9162 §2.1.1 Merkle Tree Hash over already-hashed leaves; MTH({}) = SHA-256("").
 *
 * Computed level by level in one reused buffer rather than by recursion. Pairing neighbours
 * and carrying an odd last node up unchanged gives exactly the split at the largest power of
 * two k < n: the recursion's left parts are complete, aligned subtrees, so only the right
 * edge is ragged, and the carried node is that edge's subtree.
 */
export function treeHead(leafHashes: readonly Uint8Array[]): Uint8Array {
  const level = packHashes(leafHashes);
  let count = leafHashes.length;
  if (count === 0) return sha256(new Uint8Array(0));
  while (count > 1) {
    const parents = hashPairs(level, count, level);
    const odd = count % 2;
    if (odd) level.copyWithin(H * parents, H * (count - 1), H * count);
    count = parents + odd;
  }
  return level.slice(0, H);
}

// ---------------------------------------------------------------------------------------
// Proof shapes: which subtrees a proof lists, from sizes alone (no hashing, no storage)

/** RFC 9162 §2.1.1: the largest power of two smaller than n, for n > 1. */
function splitPoint(n: number): number {
  // Shifts are exact below 2^31 (every stored tree); larger, hostile sizes take the slow path.
  if (n <= 2 ** 31) return 1 << (31 - Math.clz32(n - 1));
  let k = 2 ** 30;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  if (n <= 2 ** 31) return n > 0 && (n & (n - 1)) === 0;
  return 2 ** Math.round(Math.log2(n)) === n;
}

/**
 * RFC 9162 §2.1.3.1: the subtrees whose hashes make up PATH(index, D[0:size]), leaf first.
 * A store that keeps subtree hashes elsewhere (a database, tiles) can answer a proof by
 * looking these ranges up.
 */
export function inclusionProofRanges(index: number, size: number): LeafRange[] {
  assertIndex(index, size);
  const ranges: LeafRange[] = [];
  let start = 0;
  let end = size;
  // PATH(m, D[n]) = PATH(m, D[0:k]) : MTH(D[k:n]) for m < k, else PATH(m - k, D[k:n]) : MTH(D[0:k]).
  // Walking down from the root meets the siblings root first; the path lists them leaf first.
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (index < start + k) {
      ranges.push([start + k, end]);
      end = start + k;
    } else {
      ranges.push([start, start + k]);
      start += k;
    }
  }
  return ranges.reverse();
}

/** RFC 9162 §2.1.4.1: the subtrees whose hashes make up PROOF(oldSize, D[0:newSize]). */
export function consistencyProofRanges(oldSize: number, newSize: number): LeafRange[] {
  assertSizePair(oldSize, newSize);
  const ranges: LeafRange[] = [];
  let start = 0;
  let end = newSize;
  let complete = true;
  // SUBPROOF(m, D[n], b) = SUBPROOF(m, D[0:k], b) : MTH(D[k:n]) for m <= k,
  // else SUBPROOF(m - k, D[k:n], false) : MTH(D[0:k]); it stops where m = n.
  while (end !== oldSize) {
    const k = splitPoint(end - start);
    if (oldSize - start <= k) {
      ranges.push([start + k, end]);
      end = start + k;
    } else {
      ranges.push([start, start + k]);
      start += k;
      complete = false;
    }
  }
  // SUBPROOF(m, D[m], true) = {}: the verifier holds that head already; with b false, MTH(D[m]).
  if (!complete) ranges.push([start, end]);
  return ranges.reverse();
}

// ---------------------------------------------------------------------------------------
// Append-only tree with stored levels

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

/**
 * RFC 9162 §2.1.3.2: the root that `proof` commits leaf `index` of a `size`-leaf tree to.
 * Throws MERKLE_INVALID_ARGUMENT for a bad index, size or leaf hash, MERKLE_PROOF_INVALID
 * for a proof of the wrong shape.
 */
export function rootFromInclusionProof(
  leafHash: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
): Uint8Array {
  // Step 1: leaf_index >= tree_size fails.
  assertIndex(index, size);
  assertHash(leafHash, 'leaf hash');
  assertProofHashes(proof, inclusionProofRanges(index, size).length);
  // Steps 2-4, literally. The length check above already fixed how many hashes are used;
  // the sn checks stay as the RFC states them.
  let fn = index;
  let sn = size - 1;
  let r = leafHash;
  for (const p of proof) {
    if (sn === 0) throw proofInvalid('expected a shorter inclusion proof');
    if (fn % 2 === 1 || fn === sn) {
      r = hashChildren(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2;
        sn = Math.floor(sn / 2);
      }
    } else {
      r = hashChildren(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  // Step 5 (first half): sn must be 0.
  if (sn !== 0) throw proofInvalid('expected a longer inclusion proof');
  return r;
}

/** RFC 9162 §2.1.3.2, throwing: MERKLE_PROOF_INVALID when the proof does not reach `root`. */
export function assertInclusion(
  leafHash: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): void {
  assertBytes(root, 'root');
  const computed = rootFromInclusionProof(leafHash, index, size, proof);
  // Step 5 (second half): r must equal root_hash.
  if (!constantTimeEqual(computed, root)) {
    throw proofInvalid(`expected root ${toHex(root)}, proof yields ${toHex(computed)}`);
  }
}

/** False wherever assertInclusion throws; never throws on hostile input. */
export function verifyInclusion(
  leafHash: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  return succeeds(() => assertInclusion(leafHash, index, size, proof, root));
}

/**
 * RFC 9162 §2.1.4.2, throwing. Requires 0 < oldSize <= newSize (MERKLE_INVALID_ARGUMENT
 * otherwise: a proof from the empty tree proves nothing). Equal sizes, outside §2.1.4.2,
 * need an empty proof (§2.1.4.1 SUBPROOF(m, D[m], true) = {}) and byte-identical roots.
 * Roots are compared, not parsed: one of the wrong length simply does not match.
 */
export function assertConsistency(
  oldSize: number,
  newSize: number,
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
  proof: readonly Uint8Array[],
): void {
  assertSizePair(oldSize, newSize);
  assertBytes(oldRoot, 'old root');
  assertBytes(newRoot, 'new root');
  // Step 1 (an empty proof fails when sizes differ) is part of this exact-length check.
  assertProofHashes(proof, consistencyProofRanges(oldSize, newSize).length);
  if (oldSize === newSize) {
    if (!constantTimeEqual(oldRoot, newRoot)) throw proofInvalid('expected equal roots for equal sizes');
    return;
  }
  // Step 2: for a power-of-two old size the old head is the subtree the proof starts from.
  let path = proof;
  if (isPowerOfTwo(oldSize)) {
    if (oldRoot.length !== H) throw proofInvalid(`expected a 32-byte old root, got ${oldRoot.length} bytes`);
    path = [oldRoot, ...proof];
  }
  // Steps 3-4.
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (fn % 2 === 1) {
    fn = (fn - 1) / 2;
    sn = Math.floor(sn / 2);
  }
  // Step 5.
  let fr = path[0]!;
  let sr = path[0]!;
  // Step 6.
  for (const c of path.slice(1)) {
    if (sn === 0) throw proofInvalid('expected a shorter consistency proof');
    if (fn % 2 === 1 || fn === sn) {
      fr = hashChildren(c, fr);
      sr = hashChildren(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2;
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = hashChildren(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  // Step 7.
  if (sn !== 0) throw proofInvalid('expected a longer consistency proof');
  if (!constantTimeEqual(fr, oldRoot)) {
    throw proofInvalid(`expected old root ${toHex(oldRoot)}, proof yields ${toHex(fr)}`);
  }
  if (!constantTimeEqual(sr, newRoot)) {
    throw proofInvalid(`expected new root ${toHex(newRoot)}, proof yields ${toHex(sr)}`);
  }
}

/** False wherever assertConsistency throws; never throws on hostile input. */
export function verifyConsistency(
  oldSize: number,
  newSize: number,
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  return succeeds(() => assertConsistency(oldSize, newSize, oldRoot, newRoot, proof));
}

// ---------------------------------------------------------------------------------------
// JSON form: proofs as arrays of lowercase hex, like the evidence format's other hashes

export function proofToHex(proof: readonly Uint8Array[]): string[] {
  return proof.map(toHex);
}

/** Throws MERKLE_PROOF_INVALID unless every element is 64 lowercase hex characters. */
export function proofFromHex(hex: readonly string[]): Uint8Array[] {
  if (!Array.isArray(hex)) throw proofInvalid(`expected proof as an array of hex strings, got ${typeName(hex)}`);
  return hex.map((element: unknown, i) => {
    if (!isSha256Hex(element)) {
      throw proofInvalid(`expected proof[${i}] as 64 lowercase hex characters, got ${typeName(element)}`);
    }
    return fromHex(element);
  });
}

// ---------------------------------------------------------------------------------------
// Checks

function succeeds(check: () => void): boolean {
  try {
    check();
    return true;
  } catch (e) {
    if (isSvcError(e)) return false;
    throw e;
  }
}

function isBytes(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array;
}

function assertBytes(value: unknown, what: string): asserts value is Uint8Array {
  if (!isBytes(value)) throw invalidArgument(`expected ${what} as Uint8Array, got ${typeName(value)}`);
}

function assertHash(value: unknown, what: string): asserts value is Uint8Array {
  assertBytes(value, what);
  if (value.length !== H) throw invalidArgument(`expected ${what} of length ${H}, got ${value.length}`);
}

function assertCount(value: unknown, what: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalidArgument(`expected ${what} as a safe non-negative integer, got ${String(value)}`);
  }
}

function assertIndex(index: unknown, size: unknown): asserts index is number {
  assertCount(size, 'tree size');
  assertCount(index, 'leaf index');
  if (index >= size) throw invalidArgument(`expected leaf index < tree size ${size}, got ${index}`);
}

function assertSizePair(oldSize: unknown, newSize: unknown): void {
  assertCount(oldSize, 'old tree size');
  assertCount(newSize, 'new tree size');
  if (oldSize === 0) throw invalidArgument('expected old tree size > 0, got 0 (nothing to be consistent with)');
  if (oldSize > newSize) throw invalidArgument(`expected old tree size <= ${newSize}, got ${oldSize}`);
}

function assertProofHashes(proof: unknown, expected: number): asserts proof is readonly Uint8Array[] {
  if (!Array.isArray(proof)) throw proofInvalid(`expected proof as an array, got ${typeName(proof)}`);
  if (proof.length !== expected) throw proofInvalid(`expected ${expected} proof hashes, got ${proof.length}`);
  proof.forEach((element: unknown, i) => {
    if (!isBytes(element) || element.length !== H) {
      const got = isBytes(element) ? `${element.length} bytes` : typeName(element);
      throw proofInvalid(`expected proof[${i}] of ${H} bytes, got ${got}`);
    }
  });
}

function invalidArgument(message: string): SvcError {
  return new SvcError('MERKLE_INVALID_ARGUMENT', message);
}

function proofInvalid(message: string): SvcError {
  return new SvcError('MERKLE_PROOF_INVALID', message);
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (isBytes(value)) return `Uint8Array(${value.length})`;
  if (typeof value === 'string') return value.length > 70 ? `a ${value.length}-character string` : JSON.stringify(value);
  return typeof value;
}
