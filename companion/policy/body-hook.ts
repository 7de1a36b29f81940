/**
 * The validation hook of a policy body route (PUT /tenant/policy here, POST
 * /tenant/policy/preview in gate/policy-preview.ts, which decides samples with the gate's own
 * decision and so lives with the gate).
 */
import type { Context } from 'hono';
import { fieldErrors } from '../core/errors.ts';
import type { FieldError } from '../core/errors.ts';
import { validationHook } from '../core/router.ts';
import type { z } from '../core/router.ts';
import { getGatePack } from '../packs/registry.ts';
import type { GatePack } from '../packs/registry.ts';
import { policyProblem } from './document.ts';

type HookResult = { target: string; success: boolean; error?: z.ZodError; data?: unknown };

/**
 * The validation hook of a policy body route. When the route's schema refuses the body, the
 * pack-specific check runs on the same input, so the answer lists every path (and calls raw
 * material raw material) rather than only what the looser documented schema saw. `covers`
 * names the paths that check speaks for; the route schema's errors elsewhere are kept.
 */
export function policyBodyHook(check: (pack: GatePack, input: unknown) => FieldError[], covers: (path: string) => boolean) {
  return (result: HookResult, c: Context) => {
    if (result.success) return undefined;
    // The query validator ran first, so policy_pack is a gate pack whenever the body is checked.
    const pack = result.target === 'json' ? getGatePack(c.req.query('policy_pack') ?? '') : undefined;
    const errors = pack ? check(pack, result.data) : [];
    if (errors.length === 0) validationHook(result);
    const rest = fieldErrors(result.error!, 'body').filter((e) => !covers(e.path));
    throw policyProblem([...errors, ...rest]);
  };
}

