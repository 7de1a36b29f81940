/**
 * GET /.well-known/service-keys.json: the public trust anchor (interface-spec Endpoints and
 * Authentication 4; DESIGN.md §3). Public keys only; the production private key never leaves
 * its file.
 */
import { etag } from 'hono/etag';
import { createRouter, defineRoute, jsonContent, z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';

export const JWKS_PATH = '/.well-known/service-keys.json';

const ServiceJwkSchema = z
  .object({
    kty: z.literal('OKP'),
    crv: z.literal('Ed25519'),
    x: z.string().openapi({ description: 'RFC 8037 public key, base64url' }),
    kid: z.string().openapi({ description: 'RFC 7638 thumbprint' }),
    alg: z.literal('EdDSA').optional(),
    use: z.literal('sig').optional(),
    status: z.enum(['active', 'retired', 'revoked', 'sandbox']),
    dev_key: z.boolean(),
  })
  .openapi('ServiceJwk');

const ServiceJwksSchema = z.object({ keys: z.array(ServiceJwkSchema) }).openapi('ServiceJwks');

export function wellKnownRoutes(deps: RouteDeps) {
  const router = createRouter();
  // Verifiers re-fetch often; a strong validator lets them revalidate for free (RFC 9110 §8.8.3).
  router.use(JWKS_PATH, etag());

  const route = defineRoute({
    method: 'get',
    path: JWKS_PATH,
    operationId: 'getServiceKeys',
    tags: ['evidence'],
    auth: 'public',
    summary: 'Public signing keys (JWKS): the sandbox dev key and the production key',
    responses: {
      200: jsonContent(ServiceJwksSchema, 'RFC 8037 key set with status and dev_key per key'),
      304: { description: 'Not modified: If-None-Match matched the ETag (RFC 9110 §15.4.5)' },
    },
  });

  router.openapi(route, (c) => {
    // Short freshness: a revoked or rotated key should reach verifiers within minutes.
    c.header('cache-control', 'public, max-age=300');
    // Public keys for offline verifiers, browser ones included.
    c.header('access-control-allow-origin', '*');
    return c.json(deps.keyring.jwks(), 200);
  });
  return router;
}
