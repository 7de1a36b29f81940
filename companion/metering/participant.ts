/**
 * Metering's part of every seal (interface-spec Limits, "Usage ledger"): the sandbox
 * allowance is checked before anything is sealed (402), and the counters move in the seal's
 * own transaction, so a seal is metered exactly when it commits. The allowance check must see
 * this transaction's earlier seals: the batch carries the tenant's counters from seal to seal
 * and writes them once, before the commit.
 */
import { UPGRADE_POINTERS } from './upgrade-pointers.ts';
import { ProblemError } from '../core/errors.ts';
import { syncOf } from '../core/async-store.ts';
import type { SealBatch, SealContext, SealParticipant, UsageTotals } from '../evidence/participants.ts';
import type { UsageStore } from './store.ts';
import { SANDBOX_ACTION_ALLOWANCE } from './credits.ts';

/** One tenant's counters in a batch: as they stand after its seals so far, and what the batch adds. */
interface TenantUsage {
  totals: UsageTotals;
  actions: number;
  credits: number;
  at: string;
}

/**
 * The tenant's usage in this batch: read once, inside the batch's transaction, then carried
 * from seal to seal (the batch holds the tenant's log head, so no other seal of the tenant
 * can move its counters meanwhile, on either engine). At hand without a promise once read, and
 * on the first read too where the store answers synchronously (core/async-store.ts syncOf).
 */
function tenantUsage(batch: SealBatch, tx: { readonly usage: UsageStore }, tenantId: string): TenantUsage | Promise<TenantUsage> {
  const tenants = batch.of('metering', () => new Map<string, TenantUsage>());
  const known = tenants.get(tenantId);
  if (known) return known;
  const start = (totals: UsageTotals) => {
    const u = { totals, actions: 0, credits: 0, at: '' };
    tenants.set(tenantId, u);
    return u;
  };
  const usage = syncOf(tx.usage);
  return usage ? start(usage.usage(tenantId)) : tx.usage.usage(tenantId).then(start);
}

/** interface-spec Limits: the sandbox allowance, checked against the usage before this seal. */
function admitAgainst(u: TenantUsage): void {
  const used = u.totals.actionsUsed;
  if (used < SANDBOX_ACTION_ALLOWANCE) return;
  throw new ProblemError({
    status: 402,
    code: 'sandbox_allowance_exhausted',
    detail: `This sandbox tenant has sealed its ${SANDBOX_ACTION_ALLOWANCE} included actions. Upgrade to a production tenant to continue; sandbox history is preserved.`,
    extra: { allowance: SANDBOX_ACTION_ALLOWANCE, used, ...UPGRADE_POINTERS },
  });
}

/** Counts one seal into its tenant's batch counters. */
function count(seal: SealContext, actions: number, u: TenantUsage): void {
  const before = u.totals;
  u.totals = { actionsUsed: before.actionsUsed + actions, creditsUsed: before.creditsUsed + seal.credits };
  u.actions += actions;
  u.credits += seal.credits;
  u.at = seal.record.recordedAt;
  // Later participants (meter.threshold events) see which thresholds this seal crossed.
  seal.usage = { before, after: u.totals };
}

export function meteringParticipant(): SealParticipant {
  return {
    name: 'metering',
    admit(req, tx, batch) {
      if (!req.metering.counted || req.auth.tenantKind !== 'sandbox') return;
      const u = tenantUsage(batch, tx, req.auth.tenantId);
      if (u instanceof Promise) return u.then(admitAgainst);
      admitAgainst(u);
    },
    sealed(seal, tx, batch) {
      const actions = seal.request.metering.counted ? 1 : 0;
      if (actions === 0 && seal.credits === 0) return;
      const u = tenantUsage(batch, tx, seal.record.tenantId);
      if (u instanceof Promise) return u.then((read) => count(seal, actions, read));
      count(seal, actions, u);
    },
    // The counters move once per tenant per batch, by the batch's seals together.
    async flush(tx, batch) {
      for (const [tenantId, u] of batch.of('metering', () => new Map<string, TenantUsage>())) {
        if (u.actions > 0 || u.credits > 0) await tx.usage.add(tenantId, u.actions, u.credits, u.at);
      }
    },
  };
}
