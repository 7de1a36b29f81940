/**
 * Closing epochs (DESIGN.md §4; interface-spec Events receipt.anchored). Each due period is
 * closed in one transaction that writes the epoch, its leaves, the tenants' anchored sizes and
 * the receipt.anchored events together: a crash mid-close leaves nothing behind and the next
 * round closes the same period again. Closers take turns (AnchoringStore.lockEpochClose: several
 * companions on one PostgreSQL database all run this worker) and the transaction re-reads the
 * last epoch, so a period is closed exactly once; `epochs.period_end` is UNIQUE besides.
 *
 * Cost: the tenant logs with unanchored leaves are found through a partial index, and each
 * costs one index probe for its size at the boundary and O(log n) stored nodes for its root:
 * O(tenants with new leaves), independent of how many records exist.
 */
import { canonicalize } from '../../shared/canonical-json.ts';
import { fromHex, toBase64Url, toHex, utf8 } from '../../shared/encoding.ts';
import { EPOCH_HEADER_FORMAT, checkpointBody, epochDigest, epochLeafBytes, signedNote } from '../../shared/epoch.ts';
import type { EpochHeader, EpochLeaf } from '../../shared/epoch.ts';
import { sha256Hex } from '../../shared/hash.ts';
import { leafHash, treeHead } from '../../shared/merkle.ts';
import type { Clock } from '../core/clock.ts';
import { rfc3339 } from '../core/clock.ts';
import type { IdFactory } from '../core/ids.ts';
import type { Logger } from '../core/log.ts';
import type { Signer } from '../core/signer.ts';
import type { Store, Tx } from '../core/stores.ts';
import { nextPeriod } from './schedule.ts';
import type { Period } from './schedule.ts';
import type { EpochLeafRow, EpochRow } from './store.ts';
import { StoredTrees } from './stored-tree.ts';

/** log_id of the epoch log in merkle_nodes; '#' never starts a tenant id. */
export const EPOCH_LOG_ID = '#epochs';
/** Periods closed per round at most, so a long catch-up never holds the event loop for long. */
export const MAX_EPOCHS_PER_ROUND = 100;

/** The one event an epoch close emits; the webhook outbox satisfies it (webhooks/outbox.ts). */
export interface AnchoredEvents {
  /** Enqueues through `tx`, the close transaction, so the events commit with the epoch. */
  enqueue(e: {
    tenantId: string;
    event: 'receipt.anchored';
    eventKey: string;
    fields: { epoch_seq: number; canonical_root: string; epoch_digest: string; tenant_chain_root: string; tenant_seq: number; leaf_index: number };
    createdAt: string;
  }, tx: Tx): Promise<number>;
}

export interface EpochDeps {
  /** Read for the next period; each period is closed in one of its transactions. */
  store: Pick<Store, 'anchoring' | 'transaction'>;
  /** Where receipt.anchored is enqueued, in the close transaction (the webhook outbox). */
  events: AnchoredEvents;
  /** Signs epoch headers and checkpoints; its public key is in the JWKS. */
  signer: Signer;
  clock: Clock;
  ids: IdFactory;
  cadenceSeconds: number;
  log: Logger;
  /** RFC 3161 timestamp requests (./timestamps.ts): enqueued in the close transaction, woken after its commit. */
  timestamps?: { enqueue(epoch: EpochRow, tx: Tx): Promise<void>; wake(): void };
  /** c2sp.org/tlog-witness submissions (./witness.ts): enqueued in the close transaction, woken after its commit. */
  witnesses?: { enqueue(epoch: EpochRow, tx: Tx): Promise<void>; wake(): void };
}

/** The checkpoint origin and signer name: one per signing key, so a witness can tell logs apart. */
export function checkpointOrigin(signer: Signer): string {
  return `svc/epochs/${signer.keyId}`;
}

export class EpochCloser {
  readonly #d: EpochDeps;

  constructor(deps: EpochDeps) {
    this.#d = deps;
  }

  /** The first record's time, once known: it never changes, and finding it is a table scan. */
  #firstRecordedAt: string | undefined;

  /** The next period to close and whether it is due now. */
  async next(): Promise<{ period: Period; due: boolean } | undefined> {
    const a = this.#d.store.anchoring;
    const last = await a.lastEpoch();
    const first = last ? undefined : (this.#firstRecordedAt ??= await a.firstRecordedAt());
    const period = nextPeriod(last && new Date(last.periodEnd), first === undefined ? undefined : new Date(first), this.#d.cadenceSeconds);
    return period && { period, due: period.end.getTime() <= this.#d.clock.now().getTime() };
  }

  /** Closes every due period, oldest first (bounded per call); returns the epochs closed. */
  async closeDue(): Promise<EpochRow[]> {
    const closed: EpochRow[] = [];
    for (let i = 0; i < MAX_EPOCHS_PER_ROUND; i++) {
      const next = await this.next();
      if (!next?.due) break;
      const periodEnd = rfc3339(next.period.end);
      this.#d.log.info('epoch closing', { period_end: periodEnd });
      const epoch = await this.#d.store.transaction((tx) => this.#close(tx, next.period));
      if (!epoch) continue;
      this.#d.log.info('epoch closed', { epoch_seq: epoch.epochSeq, period_end: periodEnd, tenants: epoch.tenantCount });
      closed.push(epoch);
    }
    if (closed.length > 0) this.#d.timestamps?.wake();
    if (closed.length > 0) this.#d.witnesses?.wake();
    return closed;
  }

  async #close(tx: Tx, period: Period): Promise<EpochRow | undefined> {
    const { signer, clock, cadenceSeconds } = this.#d;
    const a = tx.anchoring;
    const trees = new StoredTrees(a);
    // Companions sharing one database close one at a time; a closer that waited here then
    // sees the epoch the other one closed.
    await a.lockEpochClose();
    const last = await a.lastEpoch();
    // Inside the transaction: another closer may have closed it since `next()` looked.
    if (last && Date.parse(last.periodEnd) >= period.end.getTime()) return undefined;
    const periodEnd = rfc3339(period.end);

    const leaves: EpochLeaf[] = [];
    for (const log of await a.unanchoredLogs()) {
      // Leaves sealed before the boundary (usually the whole log: no probe then), never fewer
      // than already anchored (a clock that stepped back cannot un-anchor anything).
      const before = log.lastRecordedAt < periodEnd ? log.size : await a.recordsBefore(log.tenantId, periodEnd);
      const size = Math.max(log.anchoredSize, Math.min(log.size, before));
      if (size === log.anchoredSize) continue;
      leaves.push({ tenant_id: log.tenantId, tenant_size: size, tenant_chain_root: toHex(await trees.rootAt(log.tenantId, size)) });
    }
    const canonicalRoot = toHex(treeHead(leaves.map((l) => leafHash(epochLeafBytes(l)))));
    const epochSeq = last ? last.epochSeq + 1 : 0;
    const digestInput = {
      epoch_seq: epochSeq,
      canonical_root: canonicalRoot,
      prev_epoch_digest: last?.epochDigest ?? null,
      anchored_at: rfc3339(clock.now()),
      cadence_seconds: cadenceSeconds,
    };
    const digest = epochDigest(digestInput);
    await trees.append(EPOCH_LOG_ID, epochSeq, fromHex(digest));
    const epochLogRoot = await trees.rootAt(EPOCH_LOG_ID, epochSeq + 1);

    const header: EpochHeader = {
      format: EPOCH_HEADER_FORMAT,
      ...digestInput,
      epoch_digest: digest,
      period_start: rfc3339(period.start),
      period_end: periodEnd,
      tenant_count: leaves.length,
      epoch_log: { size: epochSeq + 1, root: toHex(epochLogRoot) },
      key_id: signer.keyId,
    };
    const headerText = canonicalize(header);
    const origin = checkpointOrigin(signer);
    const body = checkpointBody(origin, epochSeq + 1, epochLogRoot);
    const row: EpochRow = {
      epochSeq,
      periodStart: header.period_start,
      periodEnd,
      cadenceSeconds,
      tenantCount: leaves.length,
      canonicalRoot,
      prevEpochDigest: digestInput.prev_epoch_digest,
      epochDigest: digest,
      anchoredAt: digestInput.anchored_at,
      header: headerText,
      signature: toBase64Url(signer.sign(utf8(headerText))),
      keyId: signer.keyId,
      checkpoint: signedNote(body, origin, signer.publicKey, signer.sign(utf8(body))),
    };
    const rows: EpochLeafRow[] = leaves.map((l, i) => ({
      epochSeq,
      leafIndex: i,
      tenantId: l.tenant_id,
      tenantSize: l.tenant_size,
      tenantChainRoot: l.tenant_chain_root,
    }));
    await a.insertEpoch(row, rows);
    await this.#d.timestamps?.enqueue(row, tx);
    await this.#d.witnesses?.enqueue(row, tx);
    for (const l of rows) await this.#enqueueAnchored(tx, row, l);
    return row;
  }

  /** interface-spec Events: receipt.anchored, once per tenant per epoch (dedupe key). */
  async #enqueueAnchored(tx: Tx, epoch: EpochRow, leaf: EpochLeafRow): Promise<void> {
    await this.#d.events.enqueue({
      tenantId: leaf.tenantId,
      event: 'receipt.anchored',
      eventKey: `receipt.anchored:${epoch.epochSeq}`,
      fields: {
        epoch_seq: epoch.epochSeq,
        canonical_root: epoch.canonicalRoot,
        epoch_digest: epoch.epochDigest,
        tenant_chain_root: leaf.tenantChainRoot,
        // The newest leaf this epoch anchored for the tenant.
        tenant_seq: leaf.tenantSize - 1,
        leaf_index: leaf.leafIndex,
      },
      createdAt: epoch.anchoredAt,
    }, tx);
  }
}

/** The header as served, with its hash (the verifier recomputes it from the exact text). */
export function signedHeader(epoch: EpochRow) {
  return {
    header: JSON.parse(epoch.header) as EpochHeader,
    header_hash: sha256Hex(epoch.header),
    signature: epoch.signature,
    key_id: epoch.keyId,
    alg: 'Ed25519' as const,
    checkpoint: epoch.checkpoint,
  };
}
