/**
 * The routes the hot path (./hot-path.ts) answers, each with the schema, the 422 and the seal of
 * its app route (gate/routes.ts, records/routes.ts): the same schema objects validate, so the
 * same bodies pass and every failing field is named alike.
 */
import type { AuthenticatedContext, Capability } from '../core/auth.ts';
import type { Clock } from '../core/clock.ts';
import { ProblemError } from '../core/errors.ts';
import type { SealOutcome, SealPipeline } from '../evidence/sealer.ts';
import { GateRequest, verticalRequestSchema } from '../gate/schema.ts';
import { sealGate } from '../gate/seal-gate.ts';
import type { GateBody, GateSealDeps } from '../gate/seal-gate.ts';
import { gatePacks, getGatePack } from '../packs/registry.ts';
import type { GatePack } from '../packs/registry.ts';
import { currentOverlay } from '../policy/overlay.ts';
import { RecordRequest, recordProblem } from '../records/schema.ts';
import type { RecordBody } from '../records/schema.ts';
import { metadataRetention, sealRecord } from '../records/seal-record.ts';
import type { RecordSealDeps } from '../records/seal-record.ts';

export interface HotRouteDeps {
  sealer: SealPipeline;
  clock: Clock;
  config: { reviewTimeoutSeconds: number };
  store: Parameters<typeof currentOverlay>[0] & { tenants: RecordSealDeps['tenants'] };
}

export interface HotRoute {
  /** The route's OpenAPI pattern: the access log's route and a problem's instance. */
  pattern: string;
  capability: Capability;
  /** The validated body, or the route's 422 thrown. */
  validate(value: unknown): unknown;
  seal(auth: AuthenticatedContext, body: unknown): Promise<SealOutcome>;
}

type Schema = { safeParse(value: unknown): { success: true; data: unknown } | { success: false; error: import('zod').ZodError } };

/** core/router.ts validationHook for a body. */
function validator(schema: Schema, problem: (error: import('zod').ZodError) => ProblemError): (value: unknown) => unknown {
  return (value) => {
    const result = schema.safeParse(value);
    if (!result.success) throw problem(result.error);
    return result.data;
  };
}

const bodyProblem = (error: import('zod').ZodError) => ProblemError.fromZod(error, 'body');

/** Path → route, matched exactly: Hono's router is strict about a trailing slash too. */
export function hotRoutes(service: HotRouteDeps): Map<string, HotRoute> {
  const routes = new Map<string, HotRoute>();
  // Answers come back as text where the sealing thread seals them (evidence/sealer.ts SealRequest answerAsText).
  const pipeline = service.sealer;
  const sealer: SealPipeline = {
    seal: (request) => pipeline.seal({ ...request, answerAsText: true }),
    get queued() {
      return pipeline.queued;
    },
    drain: () => pipeline.drain(),
    close: () => pipeline.close(),
  };
  const deps = { ...service, sealer };
  // The gate's seal request asks for text itself: no copy of it per request.
  const gateDeps: GateSealDeps = { sealer: pipeline, config: service.config, answerAsText: true };
  const sealWith = (pack: GatePack, auth: AuthenticatedContext, body: GateBody) =>
    currentOverlay(deps.store, auth.tenantId, pack.manifest.name).then((overlay) => sealGate(gateDeps, auth, pack, body, overlay));

  routes.set('/v1/gate', {
    pattern: '/v1/gate',
    capability: 'gate:submit',
    validate: validator(GateRequest as unknown as Schema, bodyProblem),
    seal: (auth, body) => sealWith(getGatePack((body as { pack: string }).pack)!, auth, body as GateBody),
  });
  for (const pack of gatePacks()) {
    const pattern = `/${pack.manifest.name}/proposed-action`;
    routes.set(pattern, {
      pattern,
      capability: 'gate:submit',
      validate: validator(verticalRequestSchema(pack.manifest) as unknown as Schema, bodyProblem),
      seal: (auth, body) => sealWith(pack, auth, body as GateBody),
    });
  }

  const recordDeps: RecordSealDeps = { sealer: deps.sealer, clock: deps.clock, tenants: deps.store.tenants };
  routes.set('/v1/record', {
    pattern: '/v1/record',
    capability: 'records:write',
    validate: validator(RecordRequest as unknown as Schema, recordProblem),
    async seal(auth, value) {
      const body = value as RecordBody;
      const retain = body.metadata !== undefined && (await metadataRetention(recordDeps, auth.tenantId));
      return sealRecord(recordDeps, auth, body, retain);
    },
  });
  return routes;
}
