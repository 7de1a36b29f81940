/**
 * Operations endpoints for service managers, load balancers and Prometheus:
 * GET /healthz (liveness), GET /readyz (readiness, ops/readiness.ts) and GET /metrics.
 * /healthz and /readyz are public: they reveal only which check fails, never why in detail.
 * /metrics is public unless the operator sets SVC_METRICS_TOKEN (see README, Operations).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { unauthorized } from '../core/auth.ts';
import { ProblemError } from '../core/errors.ts';
import { createRouter, defineRoute, jsonContent, problemContent, z } from '../core/router.ts';
import type { AuthRequirement } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';

const HealthSchema = z.object({ status: z.literal('ok') }).openapi('Health');

const CheckResultSchema = z.union([
  z.object({ ok: z.literal(true) }),
  z.object({ ok: z.literal(false), detail: z.string() }),
]);

const ReadinessSchema = z
  .object({ status: z.literal('ready'), checks: z.record(z.string(), CheckResultSchema) })
  .openapi('Readiness', { description: 'Every readiness check passed' });

/** The probes: they read no evidence, and answer on their own terms whatever the disk does. */
export const PROBE_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/** Bearer token for /metrics, compared as SHA-256 digests so the comparison is constant-time. */
export function metricsTokenAuth(token: string): AuthRequirement {
  const expected = createHash('sha256').update(token).digest();
  return {
    security: [{ MetricsToken: [] }],
    middleware: async (c, next) => {
      const header = c.req.header('authorization') ?? '';
      const match = /^Bearer ([\x21-\x7e]+)$/i.exec(header);
      if (!match) throw unauthorized(undefined, 'GET /metrics needs Authorization: Bearer <SVC_METRICS_TOKEN>');
      const presented = createHash('sha256').update(match[1]!).digest();
      if (!timingSafeEqual(presented, expected)) throw unauthorized('invalid_token', 'the metrics token is not valid');
      await next();
    },
  };
}

export function opsRoutes(deps: RouteDeps) {
  const router = createRouter();

  const health = defineRoute({
    method: 'get',
    path: '/healthz',
    operationId: 'getHealth',
    tags: ['operations'],
    auth: 'public',
    summary: 'Liveness: the process is up and answering HTTP',
    responses: { 200: jsonContent(HealthSchema, 'The process is alive') },
  });
  router.openapi(health, (c) => {
    c.header('cache-control', 'no-store');
    return c.json({ status: 'ok' as const }, 200);
  });

  const ready = defineRoute({
    method: 'get',
    path: '/readyz',
    operationId: 'getReadiness',
    tags: ['operations'],
    auth: 'public',
    summary: 'Readiness: database writable, migrations current, signer usable, background workers alive',
    description: 'A 503 problem+json (`not_ready`) lists every check in `checks`, each failing one with a short detail.',
    responses: {
      200: jsonContent(ReadinessSchema, 'Ready to serve'),
      503: problemContent('Not ready: `checks` names every check, each failing one with a short detail'),
    },
  });
  router.openapi(ready, async (c) => {
    const report = await deps.readiness.run();
    if (!report.ready) {
      const failing = Object.keys(report.checks).filter((name) => !report.checks[name]!.ok);
      throw new ProblemError({
        status: 503,
        code: 'not_ready',
        detail: `failing readiness checks: ${failing.join(', ')}`,
        extra: { checks: report.checks },
        headers: { 'cache-control': 'no-store' },
      });
    }
    c.header('cache-control', 'no-store');
    return c.json({ status: 'ready' as const, checks: report.checks }, 200);
  });

  const metricsToken = deps.config.metricsToken;
  const metrics = defineRoute({
    method: 'get',
    path: '/metrics',
    operationId: 'getMetrics',
    tags: ['operations'],
    auth: metricsToken === undefined ? 'public' : metricsTokenAuth(metricsToken),
    summary: 'Prometheus metrics (text exposition format 0.0.4)',
    responses: {
      200: {
        description: 'Requests by route and status with latency histograms, seals, group commits, metering, WAL size',
        content: { 'text/plain': { schema: z.string() } },
      },
    },
  });
  router.openapi(metrics, async (c) => {
    const text = await deps.metrics.exposition();
    return c.text(text, 200, { 'content-type': deps.metrics.contentType, 'cache-control': 'no-store' });
  });

  return router;
}
