/** GET /tenant/usage: the tenant's usage ledger (interface-spec "Usage ledger", Limits). */
import { createRouter, defineRoute, jsonContent, z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import { CENTS_PER_CREDIT, SANDBOX_ACTION_ALLOWANCE, USAGE_WARNING_RATIO } from './credits.ts';

export const Usage = z
  .object({
    tenant_id: z.string(),
    tenant_kind: z.enum(['sandbox', 'production']),
    actions_used: z.number().int(),
    cap: z.number().int().nullable().openapi({ description: 'Sealed actions included; null when uncapped (production)' }),
    remaining: z.number().int().nullable(),
    credits_used: z.number().int(),
    cost_cents: z.number().int().openapi({ description: '1 cent per credit (interface-spec Limits)' }),
    usage_unit: z.literal('credits'),
    warning: z.string().nullable().openapi({ description: 'Set from 80% of the cap on' }),
  })
  .openapi('Usage');

export async function usageBody(deps: RouteDeps, tenantId: string, tenantKind: 'sandbox' | 'production'): Promise<z.infer<typeof Usage>> {
  const { actionsUsed, creditsUsed } = await deps.store.usage.usage(tenantId);
  const cap = tenantKind === 'sandbox' ? SANDBOX_ACTION_ALLOWANCE : null;
  const remaining = cap === null ? null : Math.max(0, cap - actionsUsed);
  let warning: string | null = null;
  if (cap !== null && actionsUsed >= cap) warning = `The sandbox allowance of ${cap} sealed actions is used up; upgrade to continue.`;
  else if (cap !== null && actionsUsed >= cap * USAGE_WARNING_RATIO) warning = `${actionsUsed} of ${cap} sandbox actions used; ${remaining} remain.`;
  return {
    tenant_id: tenantId,
    tenant_kind: tenantKind,
    actions_used: actionsUsed,
    cap,
    remaining,
    credits_used: creditsUsed,
    cost_cents: creditsUsed * CENTS_PER_CREDIT,
    usage_unit: 'credits',
    warning,
  };
}

export function meteringRoutes(deps: RouteDeps) {
  const router = createRouter();
  const usage = defineRoute({
    method: 'get',
    path: '/tenant/usage',
    operationId: 'getUsage',
    tags: ['metering'],
    auth: deps.auth.keyOrSession('records:read'),
    summary: 'Actions used, the cap, what remains, credits, and a warning when approaching the cap',
    responses: { 200: jsonContent(Usage, 'The usage ledger') },
  });
  router.openapi(usage, async (c) => c.json(await usageBody(deps, c.var.auth.tenantId, c.var.auth.tenantKind), 200));
  return router;
}
