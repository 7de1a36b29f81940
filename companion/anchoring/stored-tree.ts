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
 * The node store is asynchronous (a store behind a network can implement it), so every method
 * here answers with a promise, but for `appendNow` over the synchronous implementation behind a
 * transaction's view (core/async-store.ts syncOf), which a seal's append uses. Inside a
 * transaction, build the trees over the transaction's store (`tx.anchoring`), so reads see the
 * transaction's own writes and writes join it.
 *
 * Each log's frontier (the complete subtrees along its right edge, one per set bit of its
 * size) is also kept in memory, shared by every StoredTrees over stores with the same
 * `treeCacheKey` (a store's outside view and its transactions' views hand the same key): an
 * append then reads nothing, and the head at the current size is a fold of at most log2(n)
 * hashes, which is what an epoch close needs per tenant. A frontier is used only when its size
 * is exactly the size asked about; an append rolled back with its transaction leaves the
 * cached size ahead of the stored one, so the next append or head at the stored size reloads it.
 * An append changes the frontier and the resident levels without awaiting in between, and only
 * then awaits its writes, so the caches never hold half an append.
 *
 * Proofs read a node per level (about 40 at 500,000 leaves). So that they read none from
 * storage, the logs proofs are asked about keep every level in memory ("resident"): loaded
 * from the stored levels on the first proof after startup, then extended by each append while
 * resident, and evicted least recently proved first once all resident levels together would
 * pass RESIDENT_BYTES. A log larger than that on its own is served from storage as before. Only
 * nodes inside the size asked about are read, and every size a caller may ask about is
 * committed, so a rolled-back append left in memory is never served; the next append at that
 * size overwrites it.
 *
 * The caches assume that the appends to a log come from this process (as with SQLite): an
 * append another process committed is noticed through the sizes (a frontier or resident log
 * behind is reloaded), but a leaf this process appended and rolled back, at the size another
 * process then committed a different leaf, is not.
 */
import { consistencyProofRanges, inclusionProofRanges } from '../../shared/merkle.ts';
import type { LeafRange } from '../../shared/merkle.ts';
import { sha256 } from '../../shared/hash.ts';
import type { Sync } from '../core/async-store.ts';
import { hex, leafHash, nodeHash } from './hashes.ts';

/** What the trees read and write: part of AnchoringStore (./store.ts). */
export interface NodeStore {
  /**
   * The storage these nodes live in, as the caches know it: StoredTrees over stores with the
   * same key share one frontier and resident-level cache. A store's outside view and the views
   * its transactions hand out carry the same key; two stores opened separately do not.
   */
  readonly treeCacheKey: object;
  getNode(logId: string, level: number, idx: number): Promise<Uint8Array | undefined>;
  putNode(logId: string, level: number, idx: number, hash: Uint8Array): Promise<void>;
  /** The log's leaf count. */
  leafCount(logId: string): Promise<number>;
  /** The stored nodes of one level, by idx. */
  levelNodes(logId: string, level: number): Promise<Uint8Array[]>;
  /**
   * Levels below this one are not stored: they are computed from the leaves' data, which the
   * store keeps anyway (a tenant log's leaves are its records' attestation hashes). The same
   * answer for a log every time.
   */
  lowestStoredLevel(logId: string): Promise<number>;
  /** The data of leaves [from, to), in order; needed only for logs with unstored levels. */
  leafData(logId: string, from: number, to: number): Promise<Uint8Array[]>;
}

/**
 * A NodeStore, or the synchronous implementation behind a transaction's view of one
 * (core/async-store.ts syncOf): through it, an append that finds its log's frontier cached is
 * done before `appendNow` returns.
 */
export type Nodes = NodeStore | Sync<NodeStore>;

const H = 32;
/** Memory held by resident levels of all logs together: a 1,000,000-leaf log takes about 72 MB. */
export const RESIDENT_BYTES = 128 * 1024 * 1024;
/** Leaves read per call while loading a log whose lowest levels are unstored. */
const LEAF_PAGE = 65_536;

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

/** A log's right edge: the hashes of its complete subtrees, largest (leftmost) first. */
interface Frontier {
  size: number;
  hashes: Uint8Array[];
  /** The log's lowestStoredLevel, kept so a cached append awaits nothing before its writes. */
  stored: number;
}

/** Logs whose frontier stays in memory; a miss costs popcount(size) node reads. */
const FRONTIER_CACHE_MAX = 100_000;

/** The caches of one storage, by NodeStore.treeCacheKey. */
const caches = new WeakMap<object, { frontiers: Map<string, Frontier>; residents: Residents }>();

export class StoredTrees {
  readonly #nodes: Nodes;
  readonly #frontiers: Map<string, Frontier>;
  readonly #residents: Residents;

  constructor(nodes: Nodes) {
    this.#nodes = nodes;
    let cache = caches.get(nodes.treeCacheKey);
    if (!cache) caches.set(nodes.treeCacheKey, (cache = { frontiers: new Map(), residents: { logs: new Map(), bytes: 0, last: undefined } }));
    this.#frontiers = cache.frontiers;
    this.#residents = cache.residents;
  }

  /** Appends leaf data as leaf number `size` (the tree's size before) of log `logId`. */
  async append(logId: string, size: number, leafData: Uint8Array): Promise<void> {
    await this.appendNow(logId, size, leafData);
  }

  /**
   * `append`, done before it returns (undefined) when the log's frontier at `size` is cached and
   * the store is synchronous: a seal's append then costs no promise (anchoring/tenant-log.ts).
   */
  appendNow(logId: string, size: number, leafData: Uint8Array): Promise<void> | undefined {
    const frontier = this.#frontiers.get(logId);
    return frontier?.size === size ? this.#extend(logId, size, leafData, frontier) : this.#reloadAndAppend(logId, size, leafData);
  }

  async #reloadAndAppend(logId: string, size: number, leafData: Uint8Array): Promise<void> {
    const stored = await this.#nodes.lowestStoredLevel(logId);
    const frontier = { size, hashes: await this.#frontierHashes(logId, size, stored), stored };
    if (!this.#frontiers.has(logId) && this.#frontiers.size >= FRONTIER_CACHE_MAX) this.#frontiers.delete(this.#frontiers.keys().next().value!);
    this.#frontiers.set(logId, frontier);
    await this.#extend(logId, size, leafData, frontier);
  }

  /** Leaf `size` onto `frontier`, the log's right edge at `size`; a promise only for writes that answer with one. */
  #extend(logId: string, size: number, leafData: Uint8Array, frontier: Frontier): Promise<void> | undefined {
    // Nothing awaited from here until the writes are issued: the frontier and the resident
    // levels move together, and no other append to the log runs in between.
    const { stored } = frontier;
    const resident = this.#residentForAppend(logId, size);
    /** Nodes to store, [level, idx, hash]: written once the caches have moved. */
    let nodes: [number, number, Uint8Array][] | undefined;
    let hash = leafHash(leafData);
    if (stored === 0) (nodes ??= []).push([0, size, hash]);
    if (resident) setNode(resident, 0, size, hash);
    // A node at an odd position is a right child: with its left sibling, the last subtree of
    // the frontier, it completes the parent (RFC 9162 §2.1.1: HASH(0x01 ‖ left ‖ right)).
    for (let level = 0, j = size; j % 2 === 1; level++, j = (j - 1) / 2) {
      hash = nodeHash(frontier.hashes.pop()!, hash);
      if (level + 1 >= stored) (nodes ??= []).push([level + 1, (j - 1) / 2, hash]);
      if (resident) setNode(resident, level + 1, (j - 1) / 2, hash);
    }
    frontier.hashes.push(hash);
    frontier.size = size + 1;
    if (resident) {
      resident.size = size + 1;
      this.#account(resident);
    }
    // Most appends to a tenant log write nothing: its lowest levels are not stored. A write
    // that fails leaves the caches one leaf ahead of the stored log, like a rollback.
    if (nodes === undefined) return undefined;
    let writes: Promise<void>[] | undefined;
    for (const [level, idx, h] of nodes) {
      const written = this.#nodes.putNode(logId, level, idx, h) as Promise<void> | undefined;
      if (written) (writes ??= []).push(written);
    }
    if (writes === undefined) return undefined;
    return writes.length === 1 ? writes[0] : Promise.all(writes).then(() => undefined);
  }

  /** The resident levels to extend with leaf `size`, or undefined when the log is not resident. */
  #residentForAppend(logId: string, size: number): Resident | undefined {
    const r = this.#residents.logs.get(logId);
    // Behind means appends happened while it was not extended (another process, or appends
    // while it was loading): drop it, the next proof reloads it.
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

  /** The log's resident levels, marked most recently used, or undefined when not loaded. */
  #touch(logId: string): Resident | undefined {
    const { logs } = this.#residents;
    const r = logs.get(logId);
    // Most recently used last: eviction takes from the front.
    if (r && this.#residents.last !== logId) {
      logs.delete(logId);
      logs.set(logId, r);
      this.#residents.last = logId;
    }
    return r;
  }

  /** Loads every level of the log on first use, when it fits the budget (after #touch missed). */
  async #load(logId: string): Promise<Resident | undefined> {
    const size = await this.#nodes.leafCount(logId);
    if (size === 0 || residentBytes(size) > RESIDENT_BYTES) return undefined;
    const stored = await this.#nodes.lowestStoredLevel(logId);
    const levels: Buffer[] = [];
    for (let level = 0; size >> level > 0; level++) {
      const count = Math.floor(size / 2 ** level);
      const buf = Buffer.alloc(capacity(count) * H);
      let i = 0;
      if (level === 0 && stored > 0) {
        for (let from = 0; i === from && from < count; from += LEAF_PAGE) {
          for (const data of await this.#nodes.leafData(logId, from, Math.min(count, from + LEAF_PAGE))) buf.set(leafHash(data), i++ * H);
        }
      } else if (level < stored) {
        // Each node of an unstored level is the hash of its two children one level down.
        const below = levels[level - 1]!;
        for (; i < count; i++) buf.set(nodeHash(below.subarray(2 * i * H, (2 * i + 1) * H), below.subarray((2 * i + 1) * H, (2 * i + 2) * H)), i * H);
      } else {
        for (const h of await this.#nodes.levelNodes(logId, level)) {
          if (i === count) break;
          buf.set(h, i++ * H);
        }
      }
      if (i !== count) return undefined; // a hole: leave it to the stored levels
      levels.push(buf);
    }
    // Another proof may have loaded it while this one read.
    const loaded = this.#touch(logId);
    if (loaded) return loaded;
    const r: Resident = { size, levels, bytes: 0, edges: new Map(), hex: [] };
    this.#residents.logs.set(logId, r);
    this.#residents.last = logId;
    this.#account(r);
    return this.#residents.logs.get(logId);
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
  async rootAt(logId: string, size: number): Promise<Uint8Array> {
    if (size === 0) return sha256(new Uint8Array(0));
    const cached = this.#frontiers.get(logId);
    if (cached?.size === size) {
      // Folding the right edge from the right is the RFC recursion: MTH = HASH(A ‖ HASH(B ‖ C)).
      const { hashes } = cached;
      let root = hashes[hashes.length - 1]!;
      for (let i = hashes.length - 2; i >= 0; i--) root = nodeHash(hashes[i]!, root);
      return root;
    }
    const r = this.#residents.logs.get(logId);
    if (r && size <= r.size) return residentSubtree(r, 0, size);
    return this.#subtree(logId, 0, size, r, await this.#nodes.lowestStoredLevel(logId));
  }

  /** The right edge of the tree of `size` leaves, read from storage. */
  #frontierHashes(logId: string, size: number, stored: number): Promise<Uint8Array[]> {
    const reads: Promise<Uint8Array>[] = [];
    for (let level = 31, start = 0; level >= 0; level--) {
      const width = 2 ** level;
      if (size & width) {
        reads.push(this.#node(logId, level, start / width, stored));
        start += width;
      }
    }
    return Promise.all(reads);
  }

  /** RFC 9162 §2.1.3.1 audit path for leaf `index` of the tree of `size` leaves, leaf first. */
  inclusionProof(logId: string, index: number, size: number): Promise<Uint8Array[]> {
    return this.#hashes(logId, inclusionProofRanges(index, size), size);
  }

  /** RFC 9162 §2.1.4.1 proof that the tree of `newSize` leaves extends the one of `oldSize`. */
  consistencyProof(logId: string, oldSize: number, newSize: number): Promise<Uint8Array[]> {
    return this.#hashes(logId, consistencyProofRanges(oldSize, newSize), newSize);
  }

  /** inclusionProof as lowercase hex: from resident levels, each node encoded in place. */
  async inclusionProofHex(logId: string, index: number, size: number): Promise<string[]> {
    const ranges = inclusionProofRanges(index, size);
    // Resident already (the common case): no await before the answer is built.
    const r = this.#touch(logId) ?? (await this.#load(logId));
    // Every range ends at or before `size`: all of them resident, the common case.
    if (r && size <= r.size) return ranges.map(([start, end]) => residentHexRange(r, start, end));
    const stored = await this.#nodes.lowestStoredLevel(logId);
    return Promise.all(ranges.map(async ([start, end]) => hex(await this.#subtree(logId, start, end, r, stored))));
  }

  /** The hashes of `ranges`, which all end at or before `size`. */
  async #hashes(logId: string, ranges: readonly LeafRange[], size: number): Promise<Uint8Array[]> {
    const r = this.#touch(logId) ?? (await this.#load(logId));
    if (r && size <= r.size) return ranges.map(([start, end]) => residentSubtree(r, start, end));
    const stored = await this.#nodes.lowestStoredLevel(logId);
    return Promise.all(ranges.map(([start, end]) => this.#subtree(logId, start, end, r, stored)));
  }

  /**
   * MTH(D[start:end]) for a range the RFC 9162 recursion produces (start aligned to its split):
   * from the resident levels as far as they reach (up to r.size only: [start, end) lies inside
   * a committed size), from storage beyond.
   */
  async #subtree(logId: string, start: number, end: number, r: Resident | undefined, stored: number): Promise<Uint8Array> {
    if (r && end <= r.size) return residentSubtree(r, start, end);
    const n = end - start;
    // A range inside the unstored levels (a log's right edge, usually): its leaves in one read.
    if (n < 2 ** stored) return this.#fromLeaves(logId, start, end);
    if ((n & (n - 1)) === 0) return this.#node(logId, 31 - Math.clz32(n), start / n, stored);
    const k = 1 << (31 - Math.clz32(n - 1));
    const [left, right] = await Promise.all([this.#subtree(logId, start, start + k, r, stored), this.#subtree(logId, start + k, end, r, stored)]);
    return nodeHash(left, right);
  }

  async #node(logId: string, level: number, idx: number, stored: number): Promise<Uint8Array> {
    if (level < stored) return this.#fromLeaves(logId, idx * 2 ** level, (idx + 1) * 2 ** level);
    const hash = await this.#nodes.getNode(logId, level, idx);
    // A missing node means a leaf was never appended: the caller asked past the tree's size.
    if (!hash) throw new RangeError(`log ${logId} has no node at level ${level}, index ${idx}`);
    return hash;
  }

  /** MTH(D[start:end]) from the leaves themselves, for a range inside the unstored levels. */
  async #fromLeaves(logId: string, start: number, end: number): Promise<Uint8Array> {
    const data = await this.#nodes.leafData(logId, start, end);
    if (data.length !== end - start) throw new RangeError(`log ${logId} has no node over leaves ${start}..${end}: the tree is smaller`);
    return mth(data.map((d) => leafHash(d)));
  }
}

/** MTH(D[start:end]) from resident levels, for a range inside r.size. */
function residentSubtree(r: Resident, start: number, end: number): Uint8Array {
  const n = end - start;
  if ((n & (n - 1)) === 0) {
    const level = 31 - Math.clz32(n);
    return r.levels[level]!.subarray((start / n) * H, (start / n + 1) * H);
  }
  const k = 1 << (31 - Math.clz32(n - 1));
  return nodeHash(residentSubtree(r, start, start + k), residentSubtree(r, start + k, end));
}

/** The hex of a range inside r.size: complete nodes encoded in place, right edges remembered. */
function residentHexRange(r: Resident, start: number, end: number): string {
  const n = end - start;
  if ((n & (n - 1)) === 0) return residentHex(r, 31 - Math.clz32(n), start / n);
  const key = `${start},${end}`;
  let edge = r.edges.get(key);
  if (edge === undefined) {
    if (r.edges.size >= EDGE_CACHE) r.edges.clear();
    r.edges.set(key, (edge = hex(residentSubtree(r, start, end))));
  }
  return edge;
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
