/**
 * How many of a tenant's records are anchored in a closed roll-up epoch (interface-spec
 * "Inclusion proof", DESIGN.md §4), per pack. A record is anchored once an epoch has committed
 * its tenant log at a size above its tenant_seq (tenant_seq = leaf index), so the count is the
 * tenant's records below the log's anchored size, read through the anchoring store.
 */
import type { AnchoringStore } from '../anchoring/store.ts';
import type { ExportStore } from './store.ts';

export interface AnchoredCounts {
  /** Anchored records per pack; a pack that is absent has none. */
  anchoredByPack(tenantId: string): Promise<ReadonlyMap<string, number>>;
}

export function anchoredCounts(anchoring: AnchoringStore, exports: ExportStore): AnchoredCounts {
  return {
    async anchoredByPack(tenantId) {
      const anchoredSize = (await anchoring.tenantLog(tenantId))?.anchoredSize ?? 0;
      return anchoredSize === 0 ? new Map() : exports.recordsByPackBelowSeq(tenantId, anchoredSize);
    },
  };
}
