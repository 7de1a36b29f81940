/**
 * The machine-readable description: OpenAPI 3.1.0 at GET /openapi.json, interface version
 * 0.1.0, generated from the zod schemas that validate requests (interface-spec Versioning;
 * DESIGN.md §6).
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Env } from 'hono';
import { defineRoute, jsonContent, z } from './router.ts';

export const API_VERSION = '0.1.0';

/** A dedicated session cookie for /account (DESIGN.md §6). */
export const SESSION_COOKIE = 'svc_session';

/** interface-spec Authentication: scheme names BearerAuth, ServiceKey, ServiceAccountSession. */
function registerSecuritySchemes(app: OpenAPIHono<any>): void {
  const registry = app.openAPIRegistry;
  registry.registerComponent('securitySchemes', 'BearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'API key as a bearer token: Authorization: Bearer svc_test_… or svc_live_…',
  });
  registry.registerComponent('securitySchemes', 'ServiceKey', {
    type: 'apiKey',
    in: 'header',
    name: 'X-Service-Key',
    description: 'API key in the X-Service-Key header (either this or BearerAuth suffices)',
  });
  registry.registerComponent('securitySchemes', 'ServiceAccountSession', {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description: 'Account session cookie from POST /account/session, for /account endpoints',
  });
}

export function openApiDocument(app: OpenAPIHono<any>) {
  return app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title: 'Action Gate Service',
      version: API_VERSION,
      description:
        'A tenant-owned gate for the next action of an AI workflow, with signed, offline-verifiable evidence. Errors are RFC 9457 problem+json with a stable code.',
    },
  });
}

const OpenApiDocumentSchema = z.looseObject({ openapi: z.literal('3.1.0') }).openapi('OpenApiDocument');

/**
 * Registers the schemes and GET /openapi.json on the root app. Call after every capability
 * is mounted; the document is generated once, on first request, when routes are final.
 */
export function mountOpenApi<E extends Env>(app: OpenAPIHono<E>): void {
  registerSecuritySchemes(app);
  let document: ReturnType<typeof openApiDocument> | undefined;
  const route = defineRoute({
    method: 'get',
    path: '/openapi.json',
    tags: ['meta'],
    auth: 'public',
    summary: 'This OpenAPI 3.1.0 description',
    responses: { 200: jsonContent(OpenApiDocumentSchema, 'The OpenAPI document') },
  });
  app.openapi(route, (c) => {
    document ??= openApiDocument(app);
    return c.json(document as unknown as z.infer<typeof OpenApiDocumentSchema>, 200);
  });
}
