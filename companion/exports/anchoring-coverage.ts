/**
 * How many of a tenant's records are anchored in a closed roll-up epoch (interface-spec
 * "Inclusion proof", DESIGN.md §4), per pack. The exports summary reads it through this small
 * interface so it does not depend on how anchoring stores epochs.
 *
 * This build has no epochs yet, so no record is anchored: `noEpochsYet` answers 0 for every
 * pack, which is the true count, and every record is reported as not yet anchored. When the
 * anchoring capability lands, it supplies an implementation that counts records whose
 * tenant_seq is below the tenant size committed by the latest closed epoch.
 */
export interface AnchoredCounts {
  /** Anchored records per pack; a pack that is absent has none. */
  anchoredByPack(tenantId: string): ReadonlyMap<string, number>;
}

export const noEpochsYet: AnchoredCounts = { anchoredByPack: () => new Map() };
