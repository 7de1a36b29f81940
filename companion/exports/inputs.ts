/**
 * What every document export is built from: the tenant, its evidence coverage and the newest
 * records of each pack. Gathered once per request; the builders (oscal.ts, data-catalog.ts,
 * ai-acquisition.ts) are pure functions of it, so the same evidence always exports to the same
 * bytes and a validation run's export digest can be recomputed.
 */
import { ProblemError } from '../core/errors.ts';
import type { AppDeps } from '../core/app-deps.ts';
import { rfc3339 } from '../core/clock.ts';
import { anchoredCounts } from './anchoring-coverage.ts';
import { evidenceCoverage } from './coverage.ts';
import type { Coverage } from './coverage.ts';
import type { RecentRecord } from './store.ts';

/** Evidence packets linked from each pack's OSCAL observation; the records export has them all. */
export const LINKED_RECORDS_PER_PACK = 20;

export interface ExportInputs {
  tenantId: string;
  tenantName: string;
  tenantKind: 'sandbox' | 'production';
  tenantCreatedAt: string;
  coverage: Coverage;
  recent: ReadonlyMap<string, RecentRecord[]>;
}

export async function gatherInputs(deps: AppDeps, tenantId: string): Promise<ExportInputs> {
  const tenant = await deps.store.tenants.getTenant(tenantId);
  if (!tenant) throw ProblemError.notFound('tenant not found');
  const coverage = await evidenceCoverage(deps.store.exports, anchoredCounts(deps.store.anchoring, deps.store.exports), tenantId, rfc3339(deps.clock.now()));
  const recent = new Map<string, RecentRecord[]>();
  for (const p of coverage.packs) {
    if (p.records > 0) recent.set(p.pack, await deps.store.exports.recentRecords(tenantId, p.pack, LINKED_RECORDS_PER_PACK));
  }
  return { tenantId, tenantName: tenant.displayName, tenantKind: tenant.kind, tenantCreatedAt: tenant.createdAt, coverage, recent };
}

/** The instant a document describes: its newest evidence, or the tenant's creation before any. */
export function asOf(inputs: ExportInputs): string {
  return inputs.coverage.last_recorded_at ?? inputs.tenantCreatedAt;
}
