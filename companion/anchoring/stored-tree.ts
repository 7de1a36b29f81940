/**
 * Append-only RFC 9162 §2.1 trees kept as stored levels (DESIGN.md §4): node (level, idx) is
 * the hash of the complete subtree of 2^level leaves starting at leaf idx·2^level. Appending
 * a leaf writes each subtree it completes, so a tree head or proof at any size costs O(log n)
 * node reads and never a rebuild. A store may leave the lowest levels unstored when it keeps
 * the leaves' data anyway (NodeStore.lowestStoredLevel): a node there is hashed from its few
 * leaves when asked for, and appends write far fewer nodes (with four levels unstored, about
 * one per eight appends instead of two per append).
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
 *
 * Proofs read a node per level (about 40 at 500,000 leaves). So that they read none from
 * SQLite, the logs proofs are asked about keep every level in memory ("resident"): loaded
 * from the stored levels on the first proof after startup, then extended by each append while
 * resident, and evicted least recently proved first once all resident levels together would
 * pass RESIDENT_BYTES. A log larger than that on its own is served from SQLite as before. Only
 * nodes inside the size asked about are read, and every size a caller may ask about is
 * committed, so a rolled-back append left in memory is never served; the next append at that
 * size overwrites it.
 */
import { consistencyProofRanges, inclusionProofRanges } from '../../shared/merkle.ts';
import type { LeafRange } from '../../shared/merkle.ts';
import { sha256 } from '../../shared/hash.ts';
import { hex, leafHash, nodeHash } from './hashes.ts';

export interface NodeStore {
  get(logId: string, level: number, idx: number): Uint8Array | undefined;
  put(logId: string, level: number, idx: number, hash: Uint8Array): void;
  /** The log's leaf count. */
  leafCount(logId: string): number;
  /** The stored nodes of one level, by idx. */
  level(logId: string, level: number): Iterable<Uint8Array>;
  /**
   * Levels below this one are not stored: they are computed from the leaves' data, which the
   * store keeps anyway (a tenant log's leaves are its records' attestation hashes).
   */
  lowestStoredLevel(logId: string): number;
  /** The data of leaves [from, to), in order; needed only for logs with unstored levels. */
  leaves(logId: string, from: number, to: number): Iterable<Uint8Array>;
}

const H = 32;
/** Memory held by resident levels of all logs together: a 1,000,000-leaf log takes about 72 MB. */
export const RESIDENT_BYTES = 128 * 1024 * 1024;

/** Every level of one log: level l holds floor(size / 2^l) nodes, packed in `levels[l]`. */
interface Resident {
  size: number;
  levels: Buffer[];
  bytes: number;
  /**
   * Hex hashes of ranges that are not one complete subtree (the right edge of a proof's tree),
   * keyed "start,end": every leaf's proof at one size shares them, and each costs a hash per
   * complete subtree inside it.
   */
  edges: Map<string, string>;
  /**
   * Hex of the nodes of a proof's upper levels, which every proof of the log shares: only for
   * levels with at most HEX_CACHED_NODES nodes, each covering at least 2^HEX_CACHED_LEVEL leaves,
   * so the strings stay a small fraction of the resident hashes. A complete node never changes.
   */
  hex: (string | undefined)[][];
}

/** Right-edge ranges remembered per resident log: a few sizes' worth. */
const EDGE_CACHE = 256;
const HEX_CACHED_NODES = 1024;
const HEX_CACHED_LEVEL = 6;

interface Residents {
  logs: Map<string, Resident>;
  bytes: number;
  /** The log proved last: already at the recent end of `logs`. */
  last: string | undefined;
}

const residents = new WeakMap<NodeStore, Residents>();

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
  readonly #residents: Residents;

  constructor(nodes: NodeStore) {
    this.#nodes = nodes;
    let cache = frontiers.get(nodes);
    if (!cache) frontiers.set(nodes, (cache = new Map()));
    this.#frontiers = cache;
    let r = residents.get(nodes);
    if (!r) residents.set(nodes, (r = { logs: new Map(), bytes: 0, last: undefined }));
    this.#residents = r;
  }

  /** Appends leaf data as leaf number `size` (the tree's size before) of log `logId`. */
  append(logId: string, size: number, leafData: Uint8Array): void {
    const frontier = this.#frontier(logId, size);
    const resident = this.#residentForAppend(logId, size);
    const stored = this.#nodes.lowestStoredLevel(logId);
    let hash = leafHash(leafData);
    if (stored === 0) this.#nodes.put(logId, 0, size, hash);
    if (resident) setNode(resident, 0, size, hash);
    // A node at an odd position is a right child: with its left sibling, the last subtree of
    // the frontier, it completes the parent (RFC 9162 §2.1.1: HASH(0x01 ‖ left ‖ right)).
    for (let level = 0, j = size; j % 2 === 1; level++, j = (j - 1) / 2) {
      hash = nodeHash(frontier.hashes.pop()!, hash);
      if (level + 1 >= stored) this.#nodes.put(logId, level + 1, (j - 1) / 2, hash);
      if (resident) setNode(resident, level + 1, (j - 1) / 2, hash);
    }
    frontier.hashes.push(hash);
    frontier.size = size + 1;
    if (resident) {
      resident.size = size + 1;
      this.#account(resident);
    }
  }

  /** The resident levels to extend with leaf `size`, or undefined when the log is not resident. */
  #residentForAppend(logId: string, size: number): Resident | undefined {
    const r = this.#residents.logs.get(logId);
    // Behind means appends happened while it was not extended (cannot happen in one process,
    // but costs nothing to survive): drop it, the next proof reloads it.
    if (r && r.size < size) this.#evict(logId);
    else if (r && r.size > size) {
      // Ahead: an append rolled back; this one takes its place, and ranges that ended in the
      // rolled-back leaves are forgotten, and so are node strings that covered them.
      r.size = size;
      r.edges.clear();
      r.hex = [];
    }
    return r && r.size === size ? r : undefined;
  }

  /** Loads every level of the log on first use, when it fits the budget. */
  #resident(logId: string): Resident | undefined {
    const { logs } = this.#residents;
    let r = logs.get(logId);
    if (r) {
      // Most recently used last: eviction takes from the front.
      if (this.#residents.last !== logId) {
        logs.delete(logId);
        logs.set(logId, r);
        this.#residents.last = logId;
      }
      return r;
    }
    const size = this.#nodes.leafCount(logId);
    if (size === 0 || residentBytes(size) > RESIDENT_BYTES) return undefined;
    r = { size, levels: [], bytes: 0, edges: new Map(), hex: [] };
    const stored = this.#nodes.lowestStoredLevel(logId);
    for (let level = 0; size >> level > 0; level++) {
      const count = Math.floor(size / 2 ** level);
      const buf = Buffer.alloc(capacity(count) * H);
      let i = 0;
      if (level === 0 && stored > 0) {
        for (const data of this.#nodes.leaves(logId, 0, count)) buf.set(leafHash(data), i++ * H);
      } else if (level < stored) {
        // Each node of an unstored level is the hash of its two children one level down.
        const below = r.levels[level - 1]!;
        for (; i < count; i++) buf.set(nodeHash(below.subarray(2 * i * H, (2 * i + 1) * H), below.subarray((2 * i + 1) * H, (2 * i + 2) * H)), i * H);
      } else {
        for (const h of this.#nodes.level(logId, level)) {
          if (i === count) break;
          buf.set(h, i++ * H);
        }
      }
      if (i !== count) return undefined; // a hole: leave it to the stored levels
      r.levels.push(buf);
    }
    logs.set(logId, r);
    this.#residents.last = logId;
    this.#account(r);
    return logs.get(logId);
  }

  /** Recounts a log's bytes, then evicts the least recently used logs over the budget. */
  #account(r: Resident): void {
    const bytes = r.levels.reduce((n, l) => n + l.byteLength, 0);
    this.#residents.bytes += bytes - r.bytes;
    r.bytes = bytes;
    const { logs } = this.#residents;
    while (this.#residents.bytes > RESIDENT_BYTES && logs.size > 0) this.#evict(logs.keys().next().value!);
  }

  #evict(logId: string): void {
    const r = this.#residents.logs.get(logId);
    if (!r) return;
    this.#residents.logs.delete(logId);
    this.#residents.bytes -= r.bytes;
    if (this.#residents.last === logId) this.#residents.last = undefined;
  }

  /** MTH(D[0:size]) (RFC 9162 §2.1.1); SHA-256 of nothing for the empty tree. */
  rootAt(logId: string, size: number): Uint8Array {
    if (size === 0) return sha256(new Uint8Array(0));
    const cached = this.#frontiers.get(logId);
    if (cached?.size !== size) return this.#subtree(logId, 0, size, this.#residents.logs.get(logId));
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

  /** inclusionProof as lowercase hex: from resident levels, each node encoded in place. */
  inclusionProofHex(logId: string, index: number, size: number): string[] {
    const r = this.#resident(logId);
    return inclusionProofRanges(index, size).map(([start, end]) => {
      const n = end - start;
      if (!r || end > r.size) return hex(this.#subtree(logId, start, end));
      if ((n & (n - 1)) === 0) return residentHex(r, 31 - Math.clz32(n), start / n);
      const key = `${start},${end}`;
      let edge = r.edges.get(key);
      if (edge === undefined) {
        if (r.edges.size >= EDGE_CACHE) r.edges.clear();
        r.edges.set(key, (edge = hex(this.#subtree(logId, start, end, r))));
      }
      return edge;
    });
  }

  #hashes(logId: string, ranges: readonly LeafRange[]): Uint8Array[] {
    const r = this.#resident(logId);
    return ranges.map(([start, end]) => this.#subtree(logId, start, end, r));
  }

  /** MTH(D[start:end]) for a range the RFC 9162 recursion produces (start aligned to its split). */
  #subtree(logId: string, start: number, end: number, r?: Resident): Uint8Array {
    const n = end - start;
    // A range inside the unstored levels (a log's right edge, usually): its leaves in one read.
    if (n < 2 ** this.#nodes.lowestStoredLevel(logId) && !(r && end <= r.size)) return this.#fromLeaves(logId, start, end);
    if ((n & (n - 1)) === 0) {
      const level = 31 - Math.clz32(n);
      // Resident nodes up to r.size only: [start, end) lies inside a committed size.
      if (r && end <= r.size) return r.levels[level]!.subarray((start / n) * H, (start / n + 1) * H);
      return this.#node(logId, level, start / n);
    }
    const k = 1 << (31 - Math.clz32(n - 1));
    return nodeHash(this.#subtree(logId, start, start + k, r), this.#subtree(logId, start + k, end, r));
  }

  #node(logId: string, level: number, idx: number): Uint8Array {
    if (level < this.#nodes.lowestStoredLevel(logId)) return this.#fromLeaves(logId, idx * 2 ** level, (idx + 1) * 2 ** level);
    const hash = this.#nodes.get(logId, level, idx);
    // A missing node means a leaf was never appended: the caller asked past the tree's size.
    if (!hash) throw new RangeError(`log ${logId} has no node at level ${level}, index ${idx}`);
    return hash;
  }

  /** MTH(D[start:end]) from the leaves themselves, for a range inside the unstored levels. */
  #fromLeaves(logId: string, start: number, end: number): Uint8Array {
    const hashes: Uint8Array[] = [];
    for (const data of this.#nodes.leaves(logId, start, end)) hashes.push(leafHash(data));
    if (hashes.length !== end - start) throw new RangeError(`log ${logId} has no node over leaves ${start}..${end}: the tree is smaller`);
    return mth(hashes);
  }
}

/** RFC 9162 §2.1.1 MTH over leaf hashes: split at the largest power of two below n. */
function mth(hashes: readonly Uint8Array[]): Uint8Array {
  if (hashes.length === 1) return hashes[0]!;
  const k = 1 << (31 - Math.clz32(hashes.length - 1));
  return nodeHash(mth(hashes.slice(0, k)), mth(hashes.slice(k)));
}

/** Node slots to allocate for `count` nodes: room to grow by an eighth before copying. */
function capacity(count: number): number {
  return count + Math.max(64, count >> 3);
}

/** Bytes every level of a log of `size` leaves takes when loaded. */
function residentBytes(size: number): number {
  let bytes = 0;
  for (let level = 0; size >> level > 0; level++) bytes += capacity(Math.floor(size / 2 ** level)) * H;
  return bytes;
}

function setNode(r: Resident, level: number, idx: number, hash: Uint8Array): void {
  let buf = r.levels[level];
  if (!buf || (idx + 1) * H > buf.byteLength) {
    const grown = Buffer.alloc(capacity(idx + 1) * H);
    if (buf) grown.set(buf);
    r.levels[level] = buf = grown;
  }
  buf.set(hash, idx * H);
}

/** The hex of a complete resident node; the upper levels' strings are kept (Resident.hex). */
function residentHex(r: Resident, level: number, idx: number): string {
  const at = idx * H;
  if (level < HEX_CACHED_LEVEL || r.size >> level > HEX_CACHED_NODES) return r.levels[level]!.toString('hex', at, at + H);
  const cached = (r.hex[level] ??= []);
  return (cached[idx] ??= r.levels[level]!.toString('hex', at, at + H));
}
