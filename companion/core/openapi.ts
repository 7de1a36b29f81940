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
    description:
      'Account session cookie for the /account endpoints (interface-spec Authentication 2), set by POST /account/session; writes also need the X-CSRF-Token returned there',
  });
  registry.registerComponent('securitySchemes', 'ServiceCallbackSignature', {
    type: 'apiKey',
    in: 'header',
    name: 'X-Service-Signature',
    description:
      'Signed route callbacks (interface-spec Authentication 3), no API key: workflow and webhook routes send X-Service-Signature: sha256=<hex HMAC-SHA256 of the raw body>; ' +
      'chat routes send the chat platform\'s v0 signed request (X-Slack-Signature with X-Slack-Request-Timestamp, five-minute window).',
  });
  registry.registerComponent('securitySchemes', 'MetricsToken', {
    type: 'http',
    scheme: 'bearer',
    description: 'The operator token set in SVC_METRICS_TOKEN; GET /metrics requires it only when it is set',
  });
}

/** Every tag an operation may carry, declared with its meaning (OpenAPI 3.1 §4.8.1 `tags`). */
export const TAGS = [
  { name: 'account', description: 'Sandbox signup, the tenant\'s API keys, account sessions, people, billing and the upgrade to production' },
  { name: 'packs', description: 'Vertical packs: manifests, required fields, rates' },
  { name: 'gate', description: 'Decide and seal the next action of an AI workflow' },
  { name: 'records', description: 'Seal records of actions taken elsewhere' },
  { name: 'evidence', description: 'Sealed records, evidence packets, keys and verification' },
  { name: 'policy', description: 'Tenant policy versions per pack and their receipts' },
  { name: 'reviews', description: 'Paused actions, review decisions and the law grading mirror' },
  { name: 'metering', description: 'Usage and credits' },
  { name: 'anchoring', description: 'Tenant logs, hourly epochs, inclusion and consistency proofs' },
  { name: 'integrations', description: 'Route and webhook setups per channel and target, with their readiness' },
  { name: 'routing', description: 'Review route dispatches to chat, workflow and webhook routes, their outbox and signed callbacks' },
  { name: 'webhooks', description: 'Signed event webhooks: deliveries and replay' },
  { name: 'exports', description: 'Read models for auditors and procurement, schema bindings and validation runs (owner review, not approvals)' },
  { name: 'console', description: 'The tenant console: a browser app for admins and reviewers, signed in with an account session' },
  { name: 'operations', description: 'Health, readiness and metrics for operators' },
  { name: 'control-plane', description: 'Public product, demo and deployment maps generated from the running configuration and code' },
  { name: 'meta', description: 'This description' },
] as const;

export function openApiDocument(app: OpenAPIHono<any>) {
  const document = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title: 'Action Gate Service',
      version: API_VERSION,
      description:
        'A tenant-owned gate for the next action of an AI workflow, with signed, offline-verifiable evidence.\n\n' +
        'Errors are RFC 9457 problem+json (ProblemDetails). `type` is always `about:blank` and `title` the HTTP status ' +
        'phrase; the stable `code` member names the problem and `errors` lists every failing field of a 422. ' +
        'Unknown query parameters are always rejected with 422.',
    },
    // Each tenant runs its own companion; the variables default to its out-of-the-box address.
    servers: [
      {
        url: '{scheme}://{host}:{port}',
        description: 'A companion (defaults: npm start on this machine)',
        variables: {
          scheme: { enum: ['http', 'https'], default: 'http' },
          host: { default: '127.0.0.1' },
          port: { default: '8787' },
        },
      },
    ],
    tags: [...TAGS],
  });
  flattenExtendedObjects(document as unknown as JsonObject);
  return document;
}

type JsonObject = Record<string, unknown>;
const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * zod's `.extend()` of a registered schema is generated as `allOf: [{$ref}, {properties,
 * additionalProperties: false}]`. JSON Schema evaluates each branch alone, so the closed
 * second branch refuses the referenced properties (and a closed referenced schema refuses
 * the new ones): no real response satisfies it. Such pairs are merged here into one object
 * schema with the union of properties and required names, as `.extend()` means.
 */
export function flattenExtendedObjects(document: JsonObject): void {
  const schemas = isObject(document.components) && isObject(document.components.schemas) ? document.components.schemas : {};
  const resolve = (node: unknown): JsonObject | undefined => {
    if (!isObject(node)) return undefined;
    const ref = typeof node.$ref === 'string' ? /^#\/components\/schemas\/(.+)$/.exec(node.$ref) : null;
    return ref ? resolve(schemas[ref[1]!]) : node;
  };
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!isObject(node)) return;
    for (const value of Object.values(node)) visit(value);
    const parts = node.allOf;
    if (!Array.isArray(parts) || parts.length !== 2) return;
    const base = resolve(parts[0]);
    const extension = parts[1];
    if (!base || !isObject(extension) || base.type !== 'object' || extension.type !== 'object' || base.allOf || extension.allOf) return;
    const merged: JsonObject = {
      ...base,
      ...extension,
      properties: { ...(base.properties as JsonObject), ...(extension.properties as JsonObject) },
      required: [...new Set([...((base.required as string[]) ?? []), ...((extension.required as string[]) ?? [])])],
    };
    delete node.allOf;
    Object.assign(node, merged);
  };
  // Components first, so an extension of an extension merges an already-flat base.
  visit(schemas);
  visit(document.paths);
}

export type OpenApiDocument = ReturnType<typeof openApiDocument>;

const OpenApiDocumentSchema = z.looseObject({ openapi: z.literal('3.1.0') }).openapi('OpenApiDocument');

/**
 * Registers the schemes and GET /openapi.json on the root app. Call after every capability
 * is mounted; `describe` generates the document once, on first use, when routes are final.
 */
export function mountOpenApi<E extends Env>(app: OpenAPIHono<E>, describe: () => OpenApiDocument): void {
  registerSecuritySchemes(app);
  const route = defineRoute({
    method: 'get',
    path: '/openapi.json',
    operationId: 'getOpenApiDocument',
    tags: ['meta'],
    auth: 'public',
    summary: 'This OpenAPI 3.1.0 description',
    responses: { 200: jsonContent(OpenApiDocumentSchema, 'The OpenAPI document') },
  });
  app.openapi(route, (c) => c.json(describe() as unknown as z.infer<typeof OpenApiDocumentSchema>, 200));
}
