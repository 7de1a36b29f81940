/**
 * Metering's part of every seal (interface-spec Limits, "Usage ledger"): the sandbox
 * allowance is checked before anything is sealed (402), and the counters move in the seal's
 * own transaction, so a seal is metered exactly when it commits. Both read and write through
 * the seal's `tx`: the allowance check must see this transaction's earlier seals.
 */
import { UPGRADE_POINTERS } from './upgrade-pointers.ts';
import { ProblemError } from '../core/errors.ts';
import type { SealParticipant } from '../evidence/participants.ts';
import { SANDBOX_ACTION_ALLOWANCE } from './credits.ts';

export function meteringParticipant(): SealParticipant {
  return {
    name: 'metering',
    async admit(req, tx) {
      if (!req.metering.counted || req.auth.tenantKind !== 'sandbox') return;
      const used = (await tx.usage.usage(req.auth.tenantId)).actionsUsed;
      if (used < SANDBOX_ACTION_ALLOWANCE) return;
      throw new ProblemError({
        status: 402,
        code: 'sandbox_allowance_exhausted',
        detail: `This sandbox tenant has sealed its ${SANDBOX_ACTION_ALLOWANCE} included actions. Upgrade to a production tenant to continue; sandbox history is preserved.`,
        extra: { allowance: SANDBOX_ACTION_ALLOWANCE, used, ...UPGRADE_POINTERS },
      });
    },
    async sealed(seal, tx) {
      const actions = seal.request.metering.counted ? 1 : 0;
      if (actions === 0 && seal.credits === 0) return;
      const { tenantId, recordedAt } = seal.record;
      const after = await tx.usage.add(tenantId, actions, seal.credits, recordedAt);
      // Later participants (meter.threshold events) see which thresholds this seal crossed.
      seal.usage = { before: { actionsUsed: after.actionsUsed - actions, creditsUsed: after.creditsUsed - seal.credits }, after };
    },
  };
}
