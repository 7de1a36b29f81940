/**
 * POST /v1/gate and POST /{vertical}/proposed-action (interface-spec Endpoints "Gate, record,
 * review, verify"). One route per gate vertical, each documented with its own pack's schema;
 * a body `pack` that disagrees with the path is a 422.
 */
import type { Context } from 'hono';
import { PROBLEM_CONTENT_TYPE } from '../core/errors.ts';
import { createRouter, defineRoute, jsonBody, jsonContent, ProblemSchema } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import type { SealOutcome } from '../evidence/sealer.ts';
import { gatePacks, getGatePack } from '../packs/registry.ts';
import type { GatePack } from '../packs/registry.ts';
import { currentOverlay } from '../policy/overlay.ts';
import type { PolicyOverlay } from '../policy/policy-overlay.ts';
import { GateRequest, GateResponse, verticalRequestSchema } from './schema.ts';
import { sealGate } from './seal-gate.ts';
import type { GateBody } from './seal-gate.ts';

const responses = {
  201: jsonContent(GateResponse, 'The decision, sealed; a retry with the same idempotency_key returns this body again'),
  402: {
    description: 'The sandbox allowance of sealed actions is used up',
    content: { [PROBLEM_CONTENT_TYPE]: { schema: ProblemSchema } },
  },
} as const;

const DESCRIPTION =
  'Applies the pack and the tenant policy overlay and seals the decision. Only hash commitments are stored: ' +
  'proposed_action and redacted_text are hashed into payload_hash and never stored or logged. ' +
  'A replay of an earlier idempotency_key answers with the original body and the header Idempotent-Replayed: true.';

/**
 * The tenant's current policy overlay for the pack (interface-spec "What the service does" 3),
 * from memory where the engine allows it (policy/overlay.ts); a tenant without a policy gets the
 * pack's defaults. Its digest is committed as the seal's policy_digest.
 */
function overlayFor(deps: RouteDeps, tenantId: string, pack: GatePack): Promise<PolicyOverlay> {
  return currentOverlay(deps.store, tenantId, pack.manifest.name);
}

/** 201 with the sealed body; a replay carries Idempotent-Replayed (draft-ietf-httpapi-idempotency-key-header). */
function answer(c: Context, outcome: SealOutcome) {
  if (outcome.replayed) c.header('idempotent-replayed', 'true');
  return c.json(outcome.body as never, outcome.status as 201);
}

export function gateRoutes(deps: RouteDeps) {
  const router = createRouter();

  const gate = defineRoute({
    method: 'post',
    path: '/v1/gate',
    operationId: 'gateAction',
    tags: ['gate'],
    auth: deps.auth.key('gate:submit'),
    summary: 'Gate the next action of an AI workflow with a vertical pack',
    description: DESCRIPTION,
    request: { body: jsonBody(GateRequest) },
    responses,
  });
  router.openapi(gate, async (c) => {
    const body = c.req.valid('json') as GateBody & { pack: string };
    const pack = getGatePack(body.pack)!; // the schema admits gate pack names only
    return answer(c, await sealGate(deps, c.var.auth, pack, body, await overlayFor(deps, c.var.auth.tenantId, pack)));
  });

  for (const pack of gatePacks()) {
    const name = pack.manifest.name;
    const route = defineRoute({
      method: 'post',
      path: `/${name}/proposed-action`,
      operationId: `gate${name.replace(/(^|-)([a-z])/g, (_, _dash: string, c: string) => c.toUpperCase())}ProposedAction`,
      tags: ['gate'],
      auth: deps.auth.key('gate:submit'),
      summary: `Gate a proposed action with the ${name} pack (pack may be omitted; if given it must be "${name}")`,
      description: DESCRIPTION,
      request: { body: jsonBody(verticalRequestSchema(pack.manifest)) },
      responses,
    });
    router.openapi(route, async (c) => {
      const body = c.req.valid('json') as GateBody;
      return answer(c, await sealGate(deps, c.var.auth, pack, body, await overlayFor(deps, c.var.auth.tenantId, pack)));
    });
  }

  return router;
}
