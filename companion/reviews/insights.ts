/**
 * Review insights (GET /reviews/insights and the `insights` of GET /active-manifest): how the
 * tenant's reviews are going. The numbers come from SQL over the tenant's review items
 * (./sqlite-store.ts); this shapes them. Read-only, tenant from the credential only
 * (interface-spec Authentication 6).
 */
import type { InsightsRow, ReviewStore } from './store.ts';

function counts(r: InsightsRow | undefined, now: Date) {
  const decided = (r?.approved ?? 0) + (r?.rejected ?? 0);
  return {
    total: r?.total ?? 0,
    pending: r?.pending ?? 0,
    oldest_pending_age_seconds: r?.oldestPendingAt ? Math.max(0, Math.floor((now.getTime() - Date.parse(r.oldestPendingAt)) / 1000)) : null,
    approved: r?.approved ?? 0,
    rejected: r?.rejected ?? 0,
    expired: r?.expired ?? 0,
    escalated: r?.escalated ?? 0,
    approval_rate: decided === 0 ? null : Math.round((r!.approved / decided) * 10_000) / 10_000,
    median_seconds_to_decide: r?.medianSecondsToDecide ?? null,
    p90_seconds_to_decide: r?.p90SecondsToDecide ?? null,
  };
}

export async function reviewInsights(reviews: ReviewStore, tenantId: string, now: Date, since: string | null) {
  const rows = await reviews.insights(tenantId, now.toISOString(), since);
  const overall = rows.find((r) => r.actionType === null);
  return {
    tenant_id: tenantId,
    generated_at: now.toISOString(),
    since,
    ...counts(overall, now),
    action_types: rows
      .filter((r): r is InsightsRow & { actionType: string } => r.actionType !== null)
      .sort((a, b) => (a.actionType < b.actionType ? -1 : a.actionType > b.actionType ? 1 : 0))
      .map((r) => ({ action_type: r.actionType, ...counts(r, now) })),
  };
}
