/**
 * The companion's HTTP application. `createApp` wires the common core (request ids, body
 * limit, problem+json for every error, 405s) around each capability's router; it does no
 * I/O, so importing or building it is free and tests call `app.request(...)` directly.
 *
 * Adding a capability: write `companion/<capability>/routes.ts` exporting
 * `<capability>Routes(deps: RouteDeps)` that returns `createRouter()` with its routes
 * declared by `defineRoute`, then add it to CAPABILITIES below.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { createKeyOrSessionAuth, createSessionAuth } from './account/people.ts';
import { accountRoutes } from './account/routes.ts';
import { accountSessionRoutes } from './account/session-routes.ts';
import { signerPlanRoutes } from './control-plane/signer-plan.ts';
import { anchoringRoutes, recordInclusionProofs } from './anchoring/routes.ts';
import { consoleRoutes } from './console/routes.ts';
import { controlPlaneRoutes } from './control-plane/routes.ts';
import { createApiKeyAuth, createOptionalApiKeyAuth, lastUseRecorder } from './core/auth.ts';
import { limitRequestBody } from './core/body-limit.ts';
import { signupRateLimit } from './core/rate-limit.ts';
import { rfc3339 } from './core/clock.ts';
import { callerInput } from './core/caller-input.ts';
import { ProblemError, problemResponse, toProblem } from './core/errors.ts';
import type { ProblemContext } from './core/errors.ts';
import { errorFields } from './core/log.ts';
import { allowedMethodsFor } from './core/method-not-allowed.ts';
import { mountOpenApi, openApiDocument } from './core/openapi.ts';
import type { OpenApiDocument } from './core/openapi.ts';
import type { AppEnv } from './core/router.ts';
import { validationHook } from './core/router.ts';
import type { AppDeps, RouteDeps } from './deps.ts';
import { evidencePacketRoutes } from './evidence/packet-routes.ts';
import { evidenceRoutes } from './evidence/routes.ts';
import { reviewRecordPart } from './reviews/record-review.ts';
import { reviewContextRecordPart } from './review-context/record-part.ts';
import { requestTelemetry, routePattern, UNMATCHED_ROUTE } from './ops/access-log.ts';
import { opsRoutes, PROBE_PATHS } from './ops/routes.ts';
import { exportRoutes } from './exports/routes.ts';
import { policyPreviewRoutes } from './gate/policy-preview.ts';
import { gateRoutes } from './gate/routes.ts';
import { integrationRoutes } from './integrations/routes.ts';
import { meteringRoutes } from './metering/routes.ts';
import { packRoutes } from './packs/routes.ts';
import { policyRoutes } from './policy/routes.ts';
import { recordRoutes } from './records/routes.ts';
import { reviewRoutes } from './reviews/routes.ts';
import { reviewContextRoutes } from './review-context/routes.ts';
import { callbackRoutes } from './routing/callbacks/routes.ts';
import { chatChannel } from './routing/chat-channel.ts';
import { integrationDocsRoutes } from './routing/docs-routes.ts';
import { routingRoutes } from './routing/routes.ts';
import { workflowChannel } from './routing/workflow-channel.ts';
import { webhookChannel } from './webhooks/channel.ts';
import { webhookRoutes } from './webhooks/routes.ts';
import { wellKnownRoutes } from './well-known/routes.ts';
import { deviceGrantRoutes } from './sign-in/device-grant-routes.ts';
import { oidcRoutes } from './sign-in/oidc-routes.ts';

type CapabilityRoutes = (deps: RouteDeps) => OpenAPIHono<any, any, any>;

/** The channels of PUT /tenant/integrations/{channel}/{target}; the control plane's recipes list the same. */
export const INTEGRATION_CHANNELS = [webhookChannel, chatChannel, workflowChannel];

/** Every capability's router, mounted at the root in this order. */
export const CAPABILITIES: readonly CapabilityRoutes[] = [
  opsRoutes,
  wellKnownRoutes,
  accountRoutes,
  accountSessionRoutes,
  deviceGrantRoutes,
  oidcRoutes,
  packRoutes,
  gateRoutes,
  recordRoutes,
  // Each capability's live part of GET /v1/records/{action_key} registers here.
  evidenceRoutes([reviewRecordPart, reviewContextRecordPart]),
  // Seal-bundle packages carry each record's inclusion proof, which anchoring builds.
  evidencePacketRoutes(recordInclusionProofs),
  anchoringRoutes,
  policyRoutes,
  policyPreviewRoutes,
  reviewRoutes,
  reviewContextRoutes,
  meteringRoutes,
  // Each channel of PUT /tenant/integrations/{channel}/{target} registers in INTEGRATION_CHANNELS.
  integrationRoutes(INTEGRATION_CHANNELS),
  integrationDocsRoutes,
  webhookRoutes,
  routingRoutes,
  callbackRoutes,
  exportRoutes,
  controlPlaneRoutes(INTEGRATION_CHANNELS),
  signerPlanRoutes,
  consoleRoutes,
];

export type App = OpenAPIHono<AppEnv>;

/** Sandbox signup (account/routes.ts): unauthenticated and creates a tenant, so rate limited. */
const SIGNUP_PATH = '/signup/checkout';

/**
 * An error's instance is the matched route's pattern, and nothing the caller sent is repeated
 * in it (RFC 9457 §3.1; core/caller-input.ts).
 */
async function problemContext(c: Context<AppEnv>): Promise<ProblemContext> {
  const pattern = routePattern(c);
  const requestId = c.get('requestId') as string | undefined;
  return {
    ...(pattern !== UNMATCHED_ROUTE ? { path: pattern } : {}),
    ...(requestId ? { requestId } : {}),
    callerInput: await callerInput(c),
  };
}

export function createApp(deps: AppDeps): App {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  let document: OpenApiDocument | undefined;
  const describe = () => (document ??= openApiDocument(app));
  const now = () => rfc3339(deps.clock.now());
  const keyAuth = { now: () => deps.clock.now(), used: lastUseRecorder(deps.store.tenants, () => deps.clock.now()) };
  const routeDeps: RouteDeps = {
    ...deps,
    describe,
    auth: {
      apiKey: createApiKeyAuth(deps.store.tenants, keyAuth),
      key: (capability) => createApiKeyAuth(deps.store.tenants, keyAuth, capability),
      optionalApiKey: createOptionalApiKeyAuth(deps.store.tenants, keyAuth),
      session: createSessionAuth(deps.store.account, now),
      keyOrSession: createKeyOrSessionAuth(deps.store.tenants, deps.store.account, keyAuth),
    },
  };

  app.use('*', requestTelemetry(deps));

  const max = deps.config.maxBodyBytes;
  app.use('*', limitRequestBody(max));
  app.use(SIGNUP_PATH, signupRateLimit(deps.config, deps.clock));
  // A seal batch is readable from its commit, a moment before its fsync ends
  // (core/wal-sync.ts): a read answers only once what it read is on disk, and after a failed
  // fsync it answers 503, since what it read may be gone after the restart. Seals need no wait
  // of their own (the sealer answers after their fsync), so writes are not held for later
  // ones; the probes read no evidence and must answer whatever the disk does.
  app.use('*', async (c, next) => {
    await next();
    if ((c.req.method !== 'GET' && c.req.method !== 'HEAD') || PROBE_PATHS.has(c.req.path)) return;
    try {
      await deps.store.durable();
    } catch {
      const problem = new ProblemError({ status: 503, code: 'service_unavailable', detail: 'what this read returned may not be on disk; the service must be restarted' });
      void c.res.body?.cancel();
      c.res = undefined; // so none of the read's own headers carry over to the problem
      c.res = problemResponse(problem, await problemContext(c));
    }
  });

  for (const routes of CAPABILITIES) app.route('/', routes(routeDeps));
  mountOpenApi(app, describe);

  const allowedMethods = allowedMethodsFor(() => app.routes);
  app.notFound((c) => {
    const allow = allowedMethods(c.req.path);
    const problem =
      allow.length > 0
        ? new ProblemError({
            status: 405,
            code: 'method_not_allowed',
            detail: `this method is not allowed on this path; allowed: ${allow.join(', ')}`,
            headers: { allow: allow.join(', ') }, // RFC 9110 §15.5.6: a 405 MUST list them
          })
        : ProblemError.notFound('no route serves this method and path');
    // No instance: an unmatched path is the caller's own text, not a route pattern.
    return problemResponse(problem, { requestId: c.get('requestId') });
  });

  app.onError(async (err, c) => {
    const { problem, internal } = toProblem(err);
    const requestId = c.get('requestId') as string | undefined;
    const where = { request_id: requestId, method: c.req.method, route: routePattern(c) };
    if (internal) deps.log.error('request failed', { ...where, ...errorFields(err) });
    // Not our fault and no stack to read, but operators must see it (readiness says so too).
    else if (problem.code === 'database_unavailable') deps.log.warn('database unavailable', { ...where, reason: problem.detail });
    return problemResponse(problem, await problemContext(c));
  });

  return app;
}
