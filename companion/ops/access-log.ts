/**
 * The first middleware of every request: assigns its request id, then, once the response is
 * ready, writes one access-log line and records the request metrics.
 *
 * The line names the route pattern (/v1/records/{action_key}), never the concrete path or the
 * query string, and no header, body or key: see core/log.ts for why nothing else can slip in.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { AuthContext } from '../core/auth.ts';
import type { IdFactory } from '../core/ids.ts';
import type { Logger } from '../core/log.ts';
import type { AppEnv } from '../core/router.ts';
import type { Metrics } from './metrics.ts';

/**
 * An incoming X-Request-Id is honoured when it is an opaque token of this shape (a proxy's or
 * client's correlation id); anything else is replaced, so the log and problem bodies only
 * ever carry a short, printable id.
 */
const INCOMING_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** The label for requests that matched no route (404 and 405 answers). */
export const UNMATCHED_ROUTE = 'unmatched';

export function requestTelemetry(deps: { ids: IdFactory; log: Logger; metrics: Metrics }): MiddlewareHandler<AppEnv> {
  return async function requestTelemetry(c, next) {
    const started = performance.now();
    const incoming = c.req.header('x-request-id');
    const requestId = incoming !== undefined && INCOMING_REQUEST_ID.test(incoming) ? incoming : deps.ids.next('req');
    c.set('requestId', requestId);
    await next();
    c.res.headers.set('x-request-id', requestId);

    const seconds = (performance.now() - started) / 1000;
    const route = routePattern(c);
    const status = c.res.status;
    deps.metrics.observeRequest(c.req.method, route, status, seconds);
    const auth = (c.var as { auth?: AuthContext }).auth;
    deps.log.info('request', {
      method: c.req.method,
      route,
      status,
      duration_ms: seconds * 1000,
      request_id: requestId,
      ...(auth ? { tenant_id: auth.tenantId } : {}),
    });
  };
}

/** The OpenAPI form of the route that answered (Hono's `:name{regex}` → `{name}`). */
export function routePattern(c: Context): string {
  const matched = [...c.req.matchedRoutes].reverse().find((r) => r.method !== 'ALL');
  return matched ? matched.path.replace(/:(\w+)(\{[^}]*\})?/g, '{$1}') : UNMATCHED_ROUTE;
}
