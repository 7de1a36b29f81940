/**
 * Declaring routes: one zod schema per request part both validates the request and
 * generates the OpenAPI 3.1 document (interface-spec Versioning: it is the schema authority),
 * so the two cannot drift. `defineRoute` also ties a route's documented `security` to the
 * middleware that enforces it, and documents the problem+json answers every route can give.
 *
 *   const route = defineRoute({
 *     method: 'get', path: '/tenant/api-keys', operationId: 'listApiKeys', tags: ['account'],
 *     auth: deps.auth.apiKey, summary: '…', request: { query: z.object({ … }) },
 *     responses: { 200: jsonContent(ApiKeyList, "The tenant's keys") },
 *   });
 *   router.openapi(route, (c) => c.json(list(c.var.auth.tenantId), 200));
 */
import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import type { RouteConfig } from '@hono/zod-openapi';
import type { Env, MiddlewareHandler } from 'hono';
import { PROBLEM_CONTENT_TYPE, ProblemError } from './errors.ts';
import type { ValidationLocation } from './errors.ts';
import { STRICT_JSON_SUMMARY, strictJsonBody } from './strict-json.ts';

/** Per-request values every route can read. */
export interface AppVariables {
  /** `req_<ULID>`, echoed as X-Request-Id and as `request_id` in problem bodies. */
  requestId: string;
}

export type AppEnv = { Variables: AppVariables };

/** An OpenAPI security requirement object: scheme name → scopes. */
export type SecurityRequirement = Record<string, string[]>;

/**
 * What a protected route needs: the requirement it documents and the middleware that enforces
 * it. Built once per app (see core/auth.ts); `E` is what the middleware adds to `c.var`.
 */
export interface AuthRequirement<E extends Env = Env> {
  readonly security: SecurityRequirement[];
  readonly middleware: MiddlewareHandler<E>;
  /** The capability the middleware requires, documented as the operation's x-required-capability. */
  readonly capability?: string;
}

/** zod v4 schemas with OpenAPI metadata (`.openapi('Name')` registers a component). */
export { z };

const TARGET_LOCATION: Record<string, ValidationLocation> = {
  json: 'body',
  form: 'body',
  query: 'query',
  param: 'path',
  header: 'header',
  cookie: 'cookie',
};

/**
 * The one validation hook (Hono's default answers `{success:false}`): every failed request
 * part becomes a 422 problem+json listing each failing field (interface-spec Errors, 422).
 */
export function validationHook(result: { target: string; success: boolean; error?: unknown }): void {
  if (!result.success) {
    throw ProblemError.fromZod(result.error as z.ZodError, TARGET_LOCATION[result.target] ?? 'body');
  }
}

/** A router for one capability; mount it with `app.route('/', router)`. */
export function createRouter<E extends Env = AppEnv>(): OpenAPIHono<E> {
  return new OpenAPIHono<E>({ defaultHook: validationHook });
}

export const ProblemSchema = z
  .looseObject({
    type: z.string().openapi({ example: 'about:blank' }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().optional(),
    instance: z.string().optional(),
    code: z.string().openapi({ description: 'Stable machine-readable error code' }),
    request_id: z.string().optional(),
    errors: z
      .array(
        z.object({
          in: z.enum(['body', 'query', 'path', 'header', 'cookie']),
          path: z.string().openapi({ description: 'RFC 6901 JSON Pointer inside that part' }),
          message: z.string(),
          code: z.string().optional(),
        }),
      )
      .optional(),
  })
  .openapi('ProblemDetails', { description: 'RFC 9457 Problem Details' });

/** A problem+json response described by the one shared Problem schema. */
export function problemContent(description: string) {
  return { description, content: { [PROBLEM_CONTENT_TYPE]: { schema: ProblemSchema } } } as const;
}

/** `{ description, content: { 'application/json': { schema } } }` for a response or body. */
export function jsonContent<S extends z.ZodType>(schema: S, description: string) {
  return { description, content: { 'application/json': { schema } } };
}

/** A required JSON request body. */
export function jsonBody<S extends z.ZodType>(schema: S, description?: string) {
  return { required: true, ...(description ? { description } : {}), content: { 'application/json': { schema } } };
}

type RouteBase = Omit<RouteConfig, 'method' | 'path' | 'request' | 'responses' | 'security' | 'middleware' | 'operationId'>;

/**
 * operationId: a stable verb-noun name (listApiKeys, getRecord) that generated clients use as
 * the method name; never derived from the path, so renaming a path does not rename the method.
 */
const OPERATION_ID = /^(get|list|create|submit|record|update|preview|verify|sign|gate)[A-Z][A-Za-z0-9]*$/;

/**
 * interface-spec Errors: "Unknown query parameters are always rejected". Every route gets a
 * strict query schema, declared or empty, so a parameter the route does not document answers
 * 422 naming it, from the same schema the OpenAPI document is generated from.
 */
export function strictQuery<R extends NonNullable<RouteConfig['request']>>(request: R | undefined): R {
  const query = request?.query;
  if (query === undefined) return { ...request, query: z.strictObject({}) } as R;
  return { ...request, query: query instanceof z.ZodObject ? query.strict() : query } as R;
}

type ProblemResponses = { default: ReturnType<typeof problemContent> };

type AuthMiddlewareOf<A> = A extends AuthRequirement<infer E> ? MiddlewareHandler<E> : undefined;

/**
 * createRoute plus: `security` from `auth` and its middleware first (so what the document
 * says is what is enforced), and the problem+json answers every route can give.
 * `auth` is 'public' (no credential; interface-spec Authentication 4) or an AuthRequirement
 * such as `deps.auth.apiKey`.
 */
export function defineRoute<
  M extends RouteConfig['method'],
  P extends string,
  Req extends NonNullable<RouteConfig['request']> | undefined,
  Res extends RouteConfig['responses'],
  A extends 'public' | AuthRequirement<any>,
>(
  spec: RouteBase & { method: M; path: P; operationId: string; request?: Req; responses: Res; auth: A },
): RouteBase & {
  operationId: string;
  method: M;
  path: P;
  request: Req;
  responses: Res & ProblemResponses;
  security: SecurityRequirement[];
  middleware: AuthMiddlewareOf<A>;
  getRoutingPath(): string;
} {
  const { auth, responses, ...rest } = spec;
  if (!OPERATION_ID.test(spec.operationId)) throw new Error(`operationId ${spec.operationId} of ${spec.path} must be verb-noun camelCase`);
  const isPublic = auth === 'public';
  const request = rest.request;
  const problems: Record<string, ReturnType<typeof problemContent>> = {
    ...(isPublic ? {} : { 401: problemContent('Missing or invalid credential'), 403: problemContent('Missing capability') }),
    // Every route has at least its (strict) query to validate.
    422: problemContent(unprocessableDescription(request)),
    default: problemContent('Any other failure'),
  };
  const route = createRoute({
    ...rest,
    request: strictQuery(rest.request),
    security: isPublic ? [] : auth.security,
    ...(!isPublic && auth.capability ? { 'x-required-capability': auth.capability } : {}),
    middleware: [...(isPublic ? [] : [noStore, auth.middleware]), ...strictJsonFor(request)],
    responses: { ...problems, ...responses },
  });
  return route as unknown as ReturnType<typeof defineRoute<M, P, Req, Res, A>>;
}

/**
 * RFC 9111 §5.2.2.5: an answer to a credentialed request is the tenant's alone, so no cache
 * (a browser's, a proxy's) may keep it. Runs before the credential check and sets the header
 * after everything inside it, so a 401, a 403 and every other error carry it too.
 */
const noStore: MiddlewareHandler = async (c, next) => {
  await next();
  c.header('cache-control', 'no-store');
};

/** Whether a route's request declares a JSON body (any application/json or +json media type). */
function takesJson(request: RouteConfig['request'] | undefined): boolean {
  return Object.keys(request?.body?.content ?? {}).some((type) => /^application\/(?:[\w.-]+\+)?json$/i.test(type));
}

/**
 * A JSON body is read by core/strict-json.ts after authentication and before the validator, so
 * nothing is validated or hashed that breaks its rules; the 422 documents them.
 */
function strictJsonFor(request: RouteConfig['request'] | undefined): MiddlewareHandler[] {
  return takesJson(request) ? [strictJsonBody] : [];
}

function unprocessableDescription(request: RouteConfig['request'] | undefined): string {
  const base = 'Malformed body, unknown query parameter or invalid fields; every failing field is listed';
  return takesJson(request) ? `${base}. ${STRICT_JSON_SUMMARY}` : base;
}
