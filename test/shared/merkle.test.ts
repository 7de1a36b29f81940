import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from '../../shared/encoding.ts';
import type { SvcErrorCode } from '../../shared/errors.ts';
import { SvcError } from '../../shared/errors.ts';
import {
  MERKLE_HASH_LENGTH,
  MerkleTree,
  RFC9162_LEAF_PREFIX,
  RFC9162_NODE_PREFIX,
  assertConsistency,
  assertInclusion,
  consistencyProofRanges,
  inclusionProofRanges,
  leafHash,
  nodeHash,
  proofFromHex,
  proofToHex,
  rootFromInclusionProof,
  treeHead,
  verifyConsistency,
  verifyInclusion,
} from '../../shared/merkle.ts';
import type { LeafRange } from '../../shared/merkle.ts';
import { readVectorJson, vectorPath } from '../helpers/vectors.ts';

// ---------------------------------------------------------------------------------------
// Helpers

function thrown(run: () => unknown): SvcError {
  try {
    run();
  } catch (e) {
    if (e instanceof SvcError) return e;
    throw e;
  }
  return expect.unreachable('expected an SvcError') as never;
}

function expectCode(run: () => unknown, code: SvcErrorCode): void {
  expect(thrown(run).code).toBe(code);
}

const MERKLE_CODES: SvcErrorCode[] = ['MERKLE_INVALID_ARGUMENT', 'MERKLE_PROOF_INVALID'];

/** Strict standard base64 (RFC 4648 §4), as the transparency-dev files use it. */
function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

function flipBit(bytes: Uint8Array, bit: number): Uint8Array {
  const out = bytes.slice();
  out[Math.floor(bit / 8) % out.length]! ^= 1 << bit % 8;
  return out;
}

function replaceAt<T>(items: readonly T[], i: number, item: T): T[] {
  return items.map((x, j) => (j === i ? item : x));
}

// An oracle written straight from RFC 9162 §2.1, recursive, on node:crypto rather than noble.
const sha = (...parts: Uint8Array[]): Uint8Array => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};
const split = (n: number): number => {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
};
const ONE = Uint8Array.of(1);
function refMth(d: Uint8Array[]): Uint8Array {
  if (d.length === 0) return sha();
  if (d.length === 1) return d[0]!;
  const k = split(d.length);
  return sha(ONE, refMth(d.slice(0, k)), refMth(d.slice(k)));
}
function refPath(m: number, d: Uint8Array[]): Uint8Array[] {
  if (d.length <= 1) return [];
  const k = split(d.length);
  return m < k
    ? [...refPath(m, d.slice(0, k)), refMth(d.slice(k))]
    : [...refPath(m - k, d.slice(k)), refMth(d.slice(0, k))];
}
function refSubproof(m: number, d: Uint8Array[], b: boolean): Uint8Array[] {
  if (m === d.length) return b ? [] : [refMth(d)];
  const k = split(d.length);
  return m <= k
    ? [...refSubproof(m, d.slice(0, k), b), refMth(d.slice(k))]
    : [...refSubproof(m - k, d.slice(k), false), refMth(d.slice(0, k))];
}

/** Distinct leaf hashes for generated trees. */
const LEAVES = Array.from({ length: 300 }, (_, i) => leafHash(Uint8Array.of(0xa5, i >> 8, i & 0xff)));
const TREE = MerkleTree.fromLeafHashes(LEAVES);
const HEADS = Array.from({ length: LEAVES.length + 1 }, (_, n) => refMth(LEAVES.slice(0, n)));

// ---------------------------------------------------------------------------------------
// Vectors

interface Tree8 {
  leaf_inputs: string[];
  node_hashes_by_level: string[][];
  root_hash_by_tree_size: string[];
  inclusion_proofs: { leaf_index: number; tree_size: number; proof: string[]; leaf_hash: string; root: string }[];
  consistency_proofs: { size1: number; size2: number; proof: string[]; root1: string; root2: string }[];
  hasher_vectors: {
    desc: string;
    want: string;
    leaf_input_hex?: string;
    left_hex?: string;
    right_hex?: string;
  }[];
}

const TREE8 = readVectorJson<Tree8>('merkle', 'rfc6962_8leaf_tree.json');
const LEAVES8 = TREE8.leaf_inputs.map((hex) => leafHash(fromHex(hex)));

interface InclusionFile {
  leafIdx: number;
  treeSize: number;
  root: string;
  leafHash: string;
  proof: string[] | null;
  desc: string;
  wantErr: boolean;
}
interface ConsistencyFile {
  size1: number;
  size2: number;
  root1: string;
  root2: string;
  proof: string[] | null;
  desc: string;
  wantErr: boolean;
}

function transparencyDev<T>(kind: 'inclusion' | 'consistency'): [string, T][] {
  const dir = ['merkle', 'transparency-dev', kind];
  return readdirSync(vectorPath(...dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => [file, readVectorJson<T>(...dir, file)]);
}

const INCLUSION_FILES = transparencyDev<InclusionFile>('inclusion');
const CONSISTENCY_FILES = transparencyDev<ConsistencyFile>('consistency');

describe('RFC 9162 §2.1.1 hashing', () => {
  it('uses the RFC prefixes and 32-byte hashes', () => {
    expect(RFC9162_LEAF_PREFIX).toBe(0x00);
    expect(RFC9162_NODE_PREFIX).toBe(0x01);
    expect(MERKLE_HASH_LENGTH).toBe(32);
  });

  it('matches the transparency-dev hasher vectors', () => {
    const [empty, emptyLeaf, leaf, node] = TREE8.hasher_vectors;
    expect(toHex(treeHead([]))).toBe(empty!.want);
    expect(toHex(MerkleTree.fromLeafHashes([]).root())).toBe(empty!.want);
    expect(toHex(leafHash(fromHex(emptyLeaf!.leaf_input_hex!)))).toBe(emptyLeaf!.want);
    expect(toHex(leafHash(fromHex(leaf!.leaf_input_hex!)))).toBe(leaf!.want);
    // The node KAT hashes 4-byte children ("N123", "N456"); nodeHash accepts only 32-byte
    // hashes, so it must refuse them. The KAT itself pins the 0x01 prefix.
    const [left, right] = [fromHex(node!.left_hex!), fromHex(node!.right_hex!)];
    expectCode(() => nodeHash(left, right), 'MERKLE_INVALID_ARGUMENT');
    expect(toHex(sha(Uint8Array.of(RFC9162_NODE_PREFIX), left, right))).toBe(node!.want);
  });

  it('nodeHash is SHA-256(0x01 ‖ left ‖ right)', () => {
    const [a, b] = [LEAVES[0]!, LEAVES[1]!];
    expect(nodeHash(a, b)).toEqual(sha(ONE, a, b));
    expect(nodeHash(b, a)).toEqual(sha(ONE, b, a));
  });

  it('leafHash does not alias a node hash of the same bytes (second-preimage separation)', () => {
    const [a, b] = [LEAVES[0]!, LEAVES[1]!];
    const joined = new Uint8Array([...a, ...b]);
    expect(leafHash(joined)).not.toEqual(nodeHash(a, b));
  });
});

describe('the 8-leaf RFC 6962 tree (rfc6962_8leaf_tree.json)', () => {
  const tree = MerkleTree.fromLeafHashes(LEAVES8);

  it('has the listed leaf hashes', () => {
    expect(LEAVES8.map(toHex)).toEqual(TREE8.node_hashes_by_level[0]);
  });

  it('has the listed node hash at every level', () => {
    TREE8.node_hashes_by_level.forEach((level, h) => {
      const width = 2 ** h;
      level.forEach((hex, j) => {
        // A complete subtree is a tree in its own right, and its hash is a proof element.
        expect(toHex(treeHead(LEAVES8.slice(j * width, (j + 1) * width)))).toBe(hex);
      });
    });
    expect(toHex(nodeHash(LEAVES8[0]!, LEAVES8[1]!))).toBe(TREE8.node_hashes_by_level[1]![0]);
  });

  it('has the listed root at every size 0..8, by treeHead, rootAt and append', () => {
    const grown = new MerkleTree();
    TREE8.root_hash_by_tree_size.forEach((hex, size) => {
      expect(toHex(treeHead(LEAVES8.slice(0, size)))).toBe(hex);
      expect(toHex(tree.rootAt(size))).toBe(hex);
      expect(toHex(MerkleTree.fromLeafHashes(LEAVES8.slice(0, size)).root())).toBe(hex);
      expect(toHex(grown.root())).toBe(hex);
      if (size < 8) expect(grown.append(LEAVES8[size]!)).toBe(size);
    });
  });

  it.each(TREE8.inclusion_proofs)('inclusion proof for leaf $leaf_index of $tree_size', (v) => {
    const proof = proofFromHex(v.proof);
    expect(toHex(LEAVES8[v.leaf_index]!)).toBe(v.leaf_hash);
    expect(verifyInclusion(fromHex(v.leaf_hash), v.leaf_index, v.tree_size, proof, fromHex(v.root))).toBe(true);
    expect(toHex(rootFromInclusionProof(fromHex(v.leaf_hash), v.leaf_index, v.tree_size, proof))).toBe(v.root);
    expect(proofToHex(tree.inclusionProof(v.leaf_index, v.tree_size))).toEqual(v.proof);
  });

  it.each(TREE8.consistency_proofs)('consistency proof from $size1 to $size2', (v) => {
    const proof = proofFromHex(v.proof);
    expect(verifyConsistency(v.size1, v.size2, fromHex(v.root1), fromHex(v.root2), proof)).toBe(true);
    expect(proofToHex(tree.consistencyProof(v.size1, v.size2))).toEqual(v.proof);
  });

  it('gives verifying proofs for every (index, size) and every (size1, size2)', () => {
    const roots = TREE8.root_hash_by_tree_size.map(fromHex);
    for (let n = 1; n <= 8; n++) {
      for (let i = 0; i < n; i++) {
        expect(verifyInclusion(LEAVES8[i]!, i, n, tree.inclusionProof(i, n), roots[n]!)).toBe(true);
      }
      for (let m = 1; m <= n; m++) {
        expect(verifyConsistency(m, n, roots[m]!, roots[n]!, tree.consistencyProof(m, n))).toBe(true);
      }
    }
  });
});

describe('transparency-dev inclusion vectors', () => {
  it('finds all 98 files', () => expect(INCLUSION_FILES).toHaveLength(98));

  it.each(INCLUSION_FILES)('%s', (_file, v) => {
    const args = [fromBase64(v.leafHash), v.leafIdx, v.treeSize, (v.proof ?? []).map(fromBase64), fromBase64(v.root)] as const;
    expect(verifyInclusion(...args)).toBe(!v.wantErr);
    if (v.wantErr) {
      expect(MERKLE_CODES).toContain(thrown(() => assertInclusion(...args)).code);
    } else {
      expect(() => assertInclusion(...args)).not.toThrow();
      // Proofs about the 8-leaf tree: generating one must give the file's proof back.
      if (v.treeSize <= 8 && toHex(args[4]) === TREE8.root_hash_by_tree_size[v.treeSize]) {
        expect(MerkleTree.fromLeafHashes(LEAVES8).inclusionProof(v.leafIdx, v.treeSize)).toEqual(args[3]);
      }
    }
  });
});

describe('transparency-dev consistency vectors', () => {
  it('finds all 98 files', () => expect(CONSISTENCY_FILES).toHaveLength(98));

  it.each(CONSISTENCY_FILES)('%s', (_file, v) => {
    const args = [v.size1, v.size2, fromBase64(v.root1), fromBase64(v.root2), (v.proof ?? []).map(fromBase64)] as const;
    expect(verifyConsistency(...args)).toBe(!v.wantErr);
    if (v.wantErr) {
      expect(MERKLE_CODES).toContain(thrown(() => assertConsistency(...args)).code);
    } else {
      expect(() => assertConsistency(...args)).not.toThrow();
      if (v.size2 <= 8 && toHex(args[3]) === TREE8.root_hash_by_tree_size[v.size2]) {
        expect(MerkleTree.fromLeafHashes(LEAVES8).consistencyProof(v.size1, v.size2)).toEqual(args[4]);
      }
    }
  });
});

describe('tree heads and proofs against a recursive RFC 9162 oracle', () => {
  it('treeHead, fromLeafHashes and append agree with MTH for sizes 0..300', () => {
    const grown = new MerkleTree();
    for (let n = 0; n <= LEAVES.length; n++) {
      expect(treeHead(LEAVES.slice(0, n))).toEqual(HEADS[n]);
      expect(TREE.rootAt(n)).toEqual(HEADS[n]);
      expect(grown.root()).toEqual(HEADS[n]);
      if (n < LEAVES.length) grown.append(LEAVES[n]!);
    }
    expect(TREE.root()).toEqual(HEADS[LEAVES.length]);
  });

  it('keeps growing after fromLeafHashes (exact-size levels, then appends)', () => {
    for (const start of [1, 3, 8, 13]) {
      const tree = MerkleTree.fromLeafHashes(LEAVES.slice(0, start));
      for (let n = start; n < 70; n++) expect(tree.append(LEAVES[n]!)).toBe(n);
      expect(tree.root()).toEqual(HEADS[70]);
      expect(tree.inclusionProof(start, 69)).toEqual(refPath(start, LEAVES.slice(0, 69)));
    }
  });

  it('gives exactly PATH(m, D[n]) and PROOF(m, D[n]) for every m, n <= 64', () => {
    for (let n = 1; n <= 64; n++) {
      const d = LEAVES.slice(0, n);
      for (let m = 0; m < n; m++) {
        expect(TREE.inclusionProof(m, n)).toEqual(refPath(m, d));
        expect(inclusionProofRanges(m, n)).toHaveLength(refPath(m, d).length);
      }
      for (let m = 1; m <= n; m++) {
        expect(TREE.consistencyProof(m, n)).toEqual(refSubproof(m, d, true));
        expect(verifyConsistency(m, n, HEADS[m]!, HEADS[n]!, TREE.consistencyProof(m, n))).toBe(true);
      }
    }
  });

  it('answers proofs while it grows, for the current and older sizes', () => {
    const tree = new MerkleTree();
    for (let n = 1; n <= 100; n++) {
      tree.append(LEAVES[n - 1]!);
      expect(tree.root()).toEqual(HEADS[n]);
      const old = Math.ceil(n / 2);
      expect(verifyInclusion(LEAVES[n - 1]!, n - 1, n, tree.inclusionProof(n - 1), HEADS[n]!)).toBe(true);
      expect(verifyInclusion(LEAVES[0]!, 0, old, tree.inclusionProof(0, old), HEADS[old]!)).toBe(true);
      expect(verifyConsistency(old, n, HEADS[old]!, HEADS[n]!, tree.consistencyProof(old))).toBe(true);
    }
  });

  it('returns copies: mutating a proof or root leaves the tree intact', () => {
    const tree = MerkleTree.fromLeafHashes(LEAVES.slice(0, 13));
    tree.inclusionProof(12)[0]!.fill(0);
    tree.root().fill(0);
    expect(tree.root()).toEqual(HEADS[13]);
    expect(tree.inclusionProof(12)).toEqual(refPath(12, LEAVES.slice(0, 13)));
  });
});

// ---------------------------------------------------------------------------------------
// Properties

const sizeAndIndex = fc
  .integer({ min: 1, max: LEAVES.length })
  .chain((size) => fc.record({ size: fc.constant(size), index: fc.nat(size - 1) }));
const sizePair = fc
  .integer({ min: 1, max: LEAVES.length })
  .chain((n) => fc.record({ m: fc.integer({ min: 1, max: n }), n: fc.constant(n) }));
const hash32 = fc.uint8Array({ minLength: 32, maxLength: 32 });

/**
 * What the §2.1.3.2 verifier does with each proof element: hash it in on the left or right.
 * RFC 9162 binds the size only through the signed root, so another size with the same
 * sequence verifies the same proof (e.g. leaf 0 of 3 and of 4, path [h1, h2] for both).
 */
function inclusionShape(index: number, size: number): string | null {
  if (!Number.isSafeInteger(size) || index >= size) return null;
  return inclusionProofRanges(index, size)
    .map(([start]) => (start < index ? 'L' : 'R'))
    .join('');
}

/** Likewise for §2.1.4.2: seed, left (both roots) or right (new root only) per element. */
function consistencyShape(m: number, n: number): string | null {
  if (m < 1 || m > n) return null;
  if (m === n) return '=';
  const category = ([start, end]: LeafRange): string => (end === m ? 'S' : start >= m ? 'R' : 'L');
  const pow2 = Number.isInteger(Math.log2(m)) ? 'P' : '';
  return pow2 + consistencyProofRanges(m, n).map(category).join('');
}

describe('inclusion proofs (fast-check)', () => {
  it('verify against treeHead for every size and index', () => {
    fc.assert(
      fc.property(sizeAndIndex, ({ size, index }) => {
        const proof = TREE.inclusionProof(index, size);
        expect(verifyInclusion(LEAVES[index]!, index, size, proof, treeHead(LEAVES.slice(0, size)))).toBe(true);
        expect(rootFromInclusionProof(LEAVES[index]!, index, size, proof)).toEqual(HEADS[size]);
      }),
    );
  });

  it('fail when any proof element is tampered with', () => {
    fc.assert(
      fc.property(sizeAndIndex, fc.nat(), fc.nat(255), ({ size, index }, at, bit) => {
        const proof = TREE.inclusionProof(index, size);
        fc.pre(proof.length > 0);
        const i = at % proof.length;
        const tampered = replaceAt(proof, i, flipBit(proof[i]!, bit));
        expect(verifyInclusion(LEAVES[index]!, index, size, tampered, HEADS[size]!)).toBe(false);
        expectCode(() => assertInclusion(LEAVES[index]!, index, size, tampered, HEADS[size]!), 'MERKLE_PROOF_INVALID');
      }),
    );
  });

  it('fail for a tampered root or leaf', () => {
    fc.assert(
      fc.property(sizeAndIndex, fc.nat(255), ({ size, index }, bit) => {
        const proof = TREE.inclusionProof(index, size);
        expect(verifyInclusion(LEAVES[index]!, index, size, proof, flipBit(HEADS[size]!, bit))).toBe(false);
        expect(verifyInclusion(flipBit(LEAVES[index]!, bit), index, size, proof, HEADS[size]!)).toBe(false);
      }),
    );
  });

  it('fail for any other index', () => {
    fc.assert(
      fc.property(sizeAndIndex, fc.nat(2 * LEAVES.length), ({ size, index }, other) => {
        fc.pre(other !== index);
        const proof = TREE.inclusionProof(index, size);
        expect(verifyInclusion(LEAVES[index]!, other, size, proof, HEADS[size]!)).toBe(false);
        if (other >= size) {
          expectCode(() => assertInclusion(LEAVES[index]!, other, size, proof, HEADS[size]!), 'MERKLE_INVALID_ARGUMENT');
        }
      }),
    );
  });

  it('fail for any other size unless that size gives the same path shape', () => {
    fc.assert(
      fc.property(sizeAndIndex, fc.nat(2 * LEAVES.length), ({ size, index }, other) => {
        fc.pre(other !== size);
        const proof = TREE.inclusionProof(index, size);
        const same = inclusionShape(index, other) === inclusionShape(index, size);
        expect(verifyInclusion(LEAVES[index]!, index, other, proof, HEADS[size]!)).toBe(same);
      }),
    );
    // A size change that keeps the shape: leaf 0 of 3 and of 4 both take [h1, h2].
    const proof = TREE.inclusionProof(0, 3);
    expect(verifyInclusion(LEAVES[0]!, 0, 4, proof, HEADS[3]!)).toBe(true);
    expect(verifyInclusion(LEAVES[0]!, 0, 5, proof, HEADS[3]!)).toBe(false);
  });

  it('fail when truncated or extended', () => {
    fc.assert(
      fc.property(sizeAndIndex, fc.nat(), hash32, ({ size, index }, at, extra) => {
        const proof = TREE.inclusionProof(index, size);
        const longer = [...proof.slice(0, at % (proof.length + 1)), extra, ...proof.slice(at % (proof.length + 1))];
        expectCode(() => assertInclusion(LEAVES[index]!, index, size, longer, HEADS[size]!), 'MERKLE_PROOF_INVALID');
        expect(verifyInclusion(LEAVES[index]!, index, size, [...proof, proof.at(-1) ?? extra], HEADS[size]!)).toBe(false);
        if (proof.length > 0) {
          const i = at % proof.length;
          const shorter = proof.filter((_, j) => j !== i);
          expectCode(() => assertInclusion(LEAVES[index]!, index, size, shorter, HEADS[size]!), 'MERKLE_PROOF_INVALID');
        }
      }),
    );
  });
});

describe('consistency proofs (fast-check)', () => {
  it('verify between treeHeads for every pair of sizes', () => {
    fc.assert(
      fc.property(sizePair, ({ m, n }) => {
        const proof = TREE.consistencyProof(m, n);
        const [oldRoot, newRoot] = [treeHead(LEAVES.slice(0, m)), treeHead(LEAVES.slice(0, n))];
        expect(verifyConsistency(m, n, oldRoot, newRoot, proof)).toBe(true);
      }),
    );
  });

  it('fail when any proof element is tampered with', () => {
    fc.assert(
      fc.property(sizePair, fc.nat(), fc.nat(255), ({ m, n }, at, bit) => {
        const proof = TREE.consistencyProof(m, n);
        fc.pre(proof.length > 0);
        const i = at % proof.length;
        const tampered = replaceAt(proof, i, flipBit(proof[i]!, bit));
        expectCode(() => assertConsistency(m, n, HEADS[m]!, HEADS[n]!, tampered), 'MERKLE_PROOF_INVALID');
      }),
    );
  });

  it('fail for a tampered old or new root', () => {
    fc.assert(
      fc.property(sizePair, fc.nat(255), ({ m, n }, bit) => {
        const proof = TREE.consistencyProof(m, n);
        expect(verifyConsistency(m, n, flipBit(HEADS[m]!, bit), HEADS[n]!, proof)).toBe(false);
        expect(verifyConsistency(m, n, HEADS[m]!, flipBit(HEADS[n]!, bit), proof)).toBe(false);
      }),
    );
  });

  it('fail for other sizes unless they give the same proof shape', () => {
    fc.assert(
      fc.property(sizePair, fc.nat(2 * LEAVES.length), fc.nat(2 * LEAVES.length), ({ m, n }, m2, n2) => {
        fc.pre(m2 !== m || n2 !== n);
        const proof = TREE.consistencyProof(m, n);
        const same = consistencyShape(m2, n2) === consistencyShape(m, n);
        expect(verifyConsistency(m2, n2, HEADS[m]!, HEADS[n]!, proof)).toBe(same);
        expect(verifyConsistency(m, n2, HEADS[m]!, HEADS[n]!, proof)).toBe(consistencyShape(m, n2) === consistencyShape(m, n));
      }),
    );
  });

  it('fail when truncated or extended', () => {
    fc.assert(
      fc.property(sizePair, fc.nat(), hash32, ({ m, n }, at, extra) => {
        const proof = TREE.consistencyProof(m, n);
        const cut = at % (proof.length + 1);
        const longer = [...proof.slice(0, cut), extra, ...proof.slice(cut)];
        expectCode(() => assertConsistency(m, n, HEADS[m]!, HEADS[n]!, longer), 'MERKLE_PROOF_INVALID');
        if (proof.length > 0) {
          const shorter = proof.filter((_, j) => j !== at % proof.length);
          expectCode(() => assertConsistency(m, n, HEADS[m]!, HEADS[n]!, shorter), 'MERKLE_PROOF_INVALID');
        }
      }),
    );
  });
});

describe('hostile input', () => {
  it('verifyInclusion and verifyConsistency return false, never throw', () => {
    const anyProof = fc.oneof(fc.anything(), fc.array(fc.oneof(hash32, fc.anything()), { maxLength: 12 }));
    const anySize = fc.oneof(fc.nat(40), fc.integer(), fc.double(), fc.anything());
    const anyHash = fc.oneof(hash32, fc.uint8Array({ maxLength: 40 }), fc.anything());
    const call = (f: (...args: never[]) => boolean, ...args: unknown[]): boolean => f(...(args as never[]));
    fc.assert(
      fc.property(anyHash, anySize, anySize, anyProof, anyHash, (leaf, index, size, proof, root) => {
        expect(typeof call(verifyInclusion, leaf, index, size, proof, root)).toBe('boolean');
        expect(typeof call(verifyConsistency, index, size, leaf, root, proof)).toBe('boolean');
      }),
      { numRuns: 500 },
    );
  });

  it("does not run or trip over a hostile object's toString when naming a bad size", () => {
    // Found by the property above: String({ toString: {} }) throws a TypeError.
    const hostile = { toString: {} };
    expect(verifyInclusion(new Uint8Array(32), 0, hostile as never, [], new Uint8Array(32))).toBe(false);
    expect(verifyConsistency(hostile as never, 2, new Uint8Array(32), new Uint8Array(32), [])).toBe(false);
  });

  it('judges sizes above 2^32 exactly, without 32-bit wrap-around', () => {
    const n = 2 ** 53 - 1; // 53 one-bits: the last leaf has 52 complete subtrees to its left
    expect(inclusionProofRanges(n - 1, n)).toEqual(
      Array.from({ length: 52 }, (_, i) => [n + 1 - 2 ** (i + 2), n + 1 - 2 ** (i + 1)]),
    );
    const path = LEAVES.slice(0, 52);
    const leftChain = path.reduce((r, p) => nodeHash(p, r), LEAVES[299]!);
    expect(rootFromInclusionProof(LEAVES[299]!, n - 1, n, path)).toEqual(leftChain);
    // Leaf 0 of 2^52 + 1 leaves: 52 complete siblings to the right, then the lone last leaf.
    const path0 = LEAVES.slice(0, 53);
    const rightChain = path0.reduce((r, p) => nodeHash(r, p), LEAVES[299]!);
    expect(rootFromInclusionProof(LEAVES[299]!, 0, 2 ** 52 + 1, path0)).toEqual(rightChain);
    expect(verifyInclusion(LEAVES[299]!, 0, 2 ** 52 + 1, path0.slice(1), rightChain)).toBe(false);
    expect(consistencyProofRanges(2 ** 40, 2 ** 52 + 1)).toHaveLength(13);
    expect(verifyConsistency(2 ** 40 + 1, 2 ** 52, HEADS[1]!, HEADS[2]!, LEAVES.slice(0, 13))).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------
// Argument and boundary errors

describe('argument errors (MERKLE_INVALID_ARGUMENT)', () => {
  const bad = (run: () => unknown): void => expectCode(run, 'MERKLE_INVALID_ARGUMENT');

  it('hashing needs bytes, and node hashing 32-byte children', () => {
    bad(() => leafHash('abc' as unknown as Uint8Array));
    bad(() => nodeHash(new Uint8Array(31), LEAVES[0]!));
    bad(() => nodeHash(LEAVES[0]!, new Uint8Array(33)));
    bad(() => treeHead([LEAVES[0]!, new Uint8Array(31)]));
    bad(() => treeHead('leaves' as unknown as Uint8Array[]));
    bad(() => MerkleTree.fromLeafHashes([new Uint8Array(0)]));
  });

  it('append refuses a bad leaf hash and leaves the tree unchanged', () => {
    const tree = MerkleTree.fromLeafHashes(LEAVES.slice(0, 3));
    bad(() => tree.append(new Uint8Array(31)));
    expect(tree.size).toBe(3);
    expect(tree.root()).toEqual(HEADS[3]);
  });

  it('sizes and indices must be safe non-negative integers within the tree', () => {
    const tree = MerkleTree.fromLeafHashes(LEAVES.slice(0, 5));
    for (const size of [-1, 1.5, Number.NaN, Infinity, 2 ** 53, 6]) bad(() => tree.rootAt(size));
    bad(() => tree.inclusionProof(5));
    bad(() => tree.inclusionProof(0, 0));
    bad(() => tree.inclusionProof(-1));
    bad(() => tree.inclusionProof(0, 6));
    bad(() => tree.inclusionProof('0' as unknown as number));
    bad(() => tree.consistencyProof(0));
    bad(() => tree.consistencyProof(4, 3));
    bad(() => tree.consistencyProof(3, 6));
    expect(tree.consistencyProof(5)).toEqual([]);
    expect(tree.rootAt(0)).toEqual(HEADS[0]);
    bad(() => inclusionProofRanges(0, 0));
    bad(() => consistencyProofRanges(0, 0));
  });

  it('inclusion: index >= size, a bad index or size, a leaf hash that is not 32 bytes', () => {
    const proof = TREE.inclusionProof(2, 5);
    bad(() => assertInclusion(LEAVES[2]!, 5, 5, proof, HEADS[5]!));
    bad(() => assertInclusion(LEAVES[2]!, 0, 0, [], HEADS[0]!));
    bad(() => assertInclusion(LEAVES[2]!, -1, 5, proof, HEADS[5]!));
    bad(() => assertInclusion(LEAVES[2]!, 2, 2 ** 64, proof, HEADS[5]!));
    bad(() => assertInclusion(LEAVES[2]!.subarray(1), 2, 5, proof, HEADS[5]!));
    bad(() => assertInclusion(LEAVES[2]!, 2, 5, proof, 'root' as unknown as Uint8Array));
    expect(verifyInclusion(LEAVES[2]!, 5, 5, proof, HEADS[5]!)).toBe(false);
  });

  it('consistency: from size 0, or old size > new size', () => {
    bad(() => assertConsistency(0, 0, HEADS[0]!, HEADS[0]!, []));
    bad(() => assertConsistency(0, 3, HEADS[0]!, HEADS[3]!, []));
    bad(() => assertConsistency(4, 3, HEADS[4]!, HEADS[3]!, []));
    bad(() => assertConsistency(1.5, 3, HEADS[1]!, HEADS[3]!, []));
    expect(verifyConsistency(0, 0, HEADS[0]!, HEADS[0]!, [])).toBe(false);
  });
});

describe('proof errors (MERKLE_PROOF_INVALID)', () => {
  const invalid = (run: () => unknown): void => expectCode(run, 'MERKLE_PROOF_INVALID');

  it('inclusion: wrong length, malformed elements, wrong root', () => {
    const proof = TREE.inclusionProof(2, 5);
    invalid(() => assertInclusion(LEAVES[2]!, 2, 5, proof.slice(1), HEADS[5]!));
    invalid(() => assertInclusion(LEAVES[2]!, 2, 5, [...proof, LEAVES[0]!], HEADS[5]!));
    invalid(() => assertInclusion(LEAVES[2]!, 2, 5, replaceAt(proof, 1, proof[1]!.subarray(1)), HEADS[5]!));
    invalid(() => assertInclusion(LEAVES[2]!, 2, 5, replaceAt(proof, 0, 'x' as unknown as Uint8Array), HEADS[5]!));
    invalid(() => assertInclusion(LEAVES[2]!, 2, 5, null as unknown as Uint8Array[], HEADS[5]!));
    invalid(() => assertInclusion(LEAVES[2]!, 2, 5, proof, HEADS[4]!));
    invalid(() => assertInclusion(LEAVES[2]!, 2, 5, proof, HEADS[5]!.subarray(1)));
    // A single-leaf tree: the leaf hash is the root and the path is empty.
    expect(verifyInclusion(LEAVES[7]!, 0, 1, [], LEAVES[7]!)).toBe(true);
    invalid(() => assertInclusion(LEAVES[7]!, 0, 1, [LEAVES[7]!], LEAVES[7]!));
  });

  it('consistency: equal sizes need an empty proof and identical roots', () => {
    expect(verifyConsistency(5, 5, HEADS[5]!, HEADS[5]!, [])).toBe(true);
    invalid(() => assertConsistency(5, 5, HEADS[5]!, HEADS[5]!, [HEADS[5]!]));
    invalid(() => assertConsistency(5, 5, HEADS[5]!, HEADS[4]!, []));
  });

  it('consistency: an empty proof between different sizes, a wrong length, a short old root', () => {
    invalid(() => assertConsistency(3, 5, HEADS[3]!, HEADS[5]!, []));
    const proof = TREE.consistencyProof(4, 7);
    invalid(() => assertConsistency(4, 7, HEADS[4]!, HEADS[7]!, proof.slice(1)));
    invalid(() => assertConsistency(4, 7, HEADS[4]!.subarray(0, 12), HEADS[7]!, proof));
    invalid(() => assertConsistency(4, 7, new Uint8Array(64), HEADS[7]!, proof));
    invalid(() => assertConsistency(4, 7, HEADS[4]!, HEADS[7]!, replaceAt(proof, 0, new Uint8Array(31))));
  });
});

describe('hex proofs', () => {
  it('round-trip lowercase hex', () => {
    const proof = TREE.inclusionProof(123, 250);
    expect(proofFromHex(proofToHex(proof))).toEqual(proof);
    expect(proofToHex(proof).every((h) => /^[0-9a-f]{64}$/.test(h))).toBe(true);
  });

  it('refuse anything but arrays of 64 lowercase hex characters', () => {
    const hex = toHex(LEAVES[0]!);
    for (const bad of [[hex.toUpperCase()], [hex.slice(2)], [`${hex}00`], ['zz'.repeat(32)], [1], 'abc', null]) {
      expectCode(() => proofFromHex(bad as unknown as string[]), 'MERKLE_PROOF_INVALID');
    }
    expect(proofFromHex([])).toEqual([]);
  });
});
