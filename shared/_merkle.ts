/**
 * Internals of the RFC 9162 §2.1 Merkle code shared by merkle.ts (tree heads, proofs,
 * verification) and merkle-tree.ts (the append-only tree): node hashing into reused buffers,
 * the proof-shape arithmetic, and argument checks. Not a public entry point (noble's `_md.ts`
 * convention); import from merkle.ts.
 *
 * Sizes and indices are numbers, accepted when they are safe non-negative integers; anything
 * else is MERKLE_INVALID_ARGUMENT. Size arithmetic uses 32-bit operators only below 2^31, so
 * hostile sizes up to 2^53 - 1 are judged exactly, not after wrapping.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { SvcError, isSvcError } from './errors.ts';

export const RFC9162_LEAF_PREFIX = 0x00;
export const RFC9162_NODE_PREFIX = 0x01;
/** Every leaf and node hash is one SHA-256 output. */
export const MERKLE_HASH_LENGTH = 32;

/** Leaves [start, end): the subtree whose hash MTH(D[start:end]) fills one proof slot. */
export type LeafRange = readonly [start: number, end: number];

export const H = MERKLE_HASH_LENGTH;

// ---------------------------------------------------------------------------------------
// Hashing

// Trees hash millions of 65-byte node inputs. Allocating a hasher per node is the slow part
// (notes/performance.md), so one hasher is reset from a pristine template with noble's
// Hash#_cloneInto and digests straight into its destination (~1.5x faster, measured). All
// of this runs synchronously, so the module-level scratch is never shared by two callers.
const PRISTINE = sha256.create();
const WORK = sha256.create();
export const NODE_INPUT = new Uint8Array(1 + 2 * H);
NODE_INPUT[0] = RFC9162_NODE_PREFIX;
const LEAF_PREFIX = Uint8Array.of(RFC9162_LEAF_PREFIX);

/** Writes SHA-256(NODE_INPUT) into out[0..32); the caller has filled left ‖ right. */
export function digestNodeInput(out: Uint8Array): void {
  PRISTINE._cloneInto(WORK);
  WORK.update(NODE_INPUT);
  WORK.digestInto(out);
}

/** RFC 9162 §2.1.1: HASH(0x01 ‖ left ‖ right), for inputs already known to be 32 bytes. */
export function hashChildren(left: Uint8Array, right: Uint8Array): Uint8Array {
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
export function hashPairs(src: Uint8Array, count: number, dst: Uint8Array): number {
  const parents = Math.floor(count / 2);
  for (let i = 0; i < parents; i++) {
    NODE_INPUT.set(src.subarray(2 * H * i, 2 * H * (i + 1)), 1);
    digestNodeInput(dst.subarray(H * i, H * (i + 1)));
  }
  return parents;
}

/** Copies 32-byte leaf hashes into one buffer, so levels can be hashed without allocating. */
export function packHashes(leafHashes: readonly Uint8Array[]): Uint8Array {
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
export function splitPoint(n: number): number {
  // Shifts are exact below 2^31 (every stored tree); larger, hostile sizes take the slow path.
  if (n <= 2 ** 31) return 1 << (31 - Math.clz32(n - 1));
  let k = 2 ** 30;
  while (k * 2 < n) k *= 2;
  return k;
}

export function isPowerOfTwo(n: number): boolean {
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
// Argument checks

export function succeeds(check: () => void): boolean {
  try {
    check();
    return true;
  } catch (e) {
    if (isSvcError(e)) return false;
    throw e;
  }
}

export function isBytes(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array;
}

export function assertBytes(value: unknown, what: string): asserts value is Uint8Array {
  if (!isBytes(value)) throw invalidArgument(`expected ${what} as Uint8Array, got ${typeName(value)}`);
}

export function assertHash(value: unknown, what: string): asserts value is Uint8Array {
  assertBytes(value, what);
  if (value.length !== H) throw invalidArgument(`expected ${what} of length ${H}, got ${value.length}`);
}

export function assertCount(value: unknown, what: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    // typeName, not String(): a hostile object's toString must not run or throw here.
    throw invalidArgument(`expected ${what} as a safe non-negative integer, got ${typeof value === 'number' ? String(value) : typeName(value)}`);
  }
}

export function assertIndex(index: unknown, size: unknown): asserts index is number {
  assertCount(size, 'tree size');
  assertCount(index, 'leaf index');
  if (index >= size) throw invalidArgument(`expected leaf index < tree size ${size}, got ${index}`);
}

export function assertSizePair(oldSize: unknown, newSize: unknown): void {
  assertCount(oldSize, 'old tree size');
  assertCount(newSize, 'new tree size');
  if (oldSize === 0) throw invalidArgument('expected old tree size > 0, got 0 (nothing to be consistent with)');
  if (oldSize > newSize) throw invalidArgument(`expected old tree size <= ${newSize}, got ${oldSize}`);
}

export function assertProofHashes(proof: unknown, expected: number): asserts proof is readonly Uint8Array[] {
  if (!Array.isArray(proof)) throw proofInvalid(`expected proof as an array, got ${typeName(proof)}`);
  if (proof.length !== expected) throw proofInvalid(`expected ${expected} proof hashes, got ${proof.length}`);
  proof.forEach((element: unknown, i) => {
    if (!isBytes(element) || element.length !== H) {
      const got = isBytes(element) ? `${element.length} bytes` : typeName(element);
      throw proofInvalid(`expected proof[${i}] of ${H} bytes, got ${got}`);
    }
  });
}

export function invalidArgument(message: string): SvcError {
  return new SvcError('MERKLE_INVALID_ARGUMENT', message);
}

export function proofInvalid(message: string): SvcError {
  return new SvcError('MERKLE_PROOF_INVALID', message);
}

export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (isBytes(value)) return `Uint8Array(${value.length})`;
  if (typeof value === 'string') return value.length > 70 ? `a ${value.length}-character string` : JSON.stringify(value);
  return typeof value;
}
