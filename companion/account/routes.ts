/**
 * Account routes: sandbox signup (DESIGN.md §6) and the tenant's key listing
 * (interface-spec Endpoints, "Other").
 */
import { createRouter, defineRoute, jsonBody, jsonContent, problemContent, z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import { SANDBOX_ALLOWANCE, signUpSandbox } from './signup.ts';

const SignupRequest = z
  .object({
    // Normalised (trim, lowercase) before the format check, so the digest sees one spelling.
    email: z.string().trim().toLowerCase().max(254).check(z.email()).openapi({ example: 'ada@example.com' }),
  })
  .strict()
  .openapi('SignupRequest');

const TenantKindSchema = z.enum(['sandbox', 'production']);
const KeyPrefixSchema = z.enum(['svc_test_', 'svc_live_']);

const SignupResponse = z
  .object({
    tenant_id: z.string().openapi({ example: 'ten_01JD3Q8Z5V7N4M2K6H8G0F1E2D' }),
    tenant_kind: z.literal('sandbox'),
    display_name: z.string(),
    api_key: z.string().openapi({ description: 'Shown once; only its hash is stored' }),
    api_key_id: z.string(),
    key_prefix: KeyPrefixSchema,
    key_last_four: z.string(),
    sandbox_allowance: z.number().int().openapi({ description: 'Sealed actions included (interface-spec Limits)' }),
    created_at: z.string(),
  })
  .openapi('SignupResponse');

const ApiKeySummary = z
  .object({
    id: z.string(),
    prefix: KeyPrefixSchema,
    last_four: z.string(),
    status: z.enum(['active', 'revoked']),
    created_at: z.string(),
    revoked_at: z.string().nullable(),
  })
  .openapi('ApiKeySummary');

const ApiKeyList = z
  .object({ tenant_id: z.string(), tenant_kind: TenantKindSchema, keys: z.array(ApiKeySummary) })
  .openapi('ApiKeyList');

export function accountRoutes(deps: RouteDeps) {
  const router = createRouter();

  const signup = defineRoute({
    method: 'post',
    path: '/signup/checkout',
    operationId: 'createSandboxTenant',
    tags: ['account'],
    auth: 'public',
    summary: 'Create a sandbox tenant and its svc_test_ key (one sandbox per email)',
    request: { body: jsonBody(SignupRequest) },
    responses: {
      201: jsonContent(SignupResponse, 'Sandbox created; the API key is shown only in this response'),
      409: problemContent('sandbox_exists: a sandbox exists for this email; the body points to the upgrade'),
    },
  });

  router.openapi(signup, async (c) => {
    const { email } = c.req.valid('json');
    const { tenant, apiKey, keyId } = await signUpSandbox({ tenants: deps.store.tenants, clock: deps.clock, ids: deps.ids }, email);
    // RFC 9111 §5.2.2.5: a response carrying a secret must not be stored by any cache.
    c.header('cache-control', 'no-store');
    return c.json(
      {
        tenant_id: tenant.id,
        tenant_kind: 'sandbox' as const,
        display_name: tenant.displayName,
        api_key: apiKey.key,
        api_key_id: keyId,
        key_prefix: apiKey.prefix,
        key_last_four: apiKey.lastFour,
        sandbox_allowance: SANDBOX_ALLOWANCE,
        created_at: tenant.createdAt,
      },
      201,
    );
  });

  const listKeys = defineRoute({
    method: 'get',
    path: '/tenant/api-keys',
    operationId: 'listApiKeys',
    tags: ['account'],
    auth: deps.auth.key('records:read'),
    summary: "The calling tenant's API keys: prefix and last four characters only",
    request: { query: z.object({}).strict() },
    responses: { 200: jsonContent(ApiKeyList, "The tenant's keys, oldest first") },
  });

  router.openapi(listKeys, async (c) => {
    const { tenantId, tenantKind } = c.var.auth;
    const keys = (await deps.store.tenants.listApiKeys(tenantId)).map((k) => ({
      id: k.id,
      prefix: k.prefix,
      last_four: k.lastFour,
      status: k.status,
      created_at: k.createdAt,
      revoked_at: k.revokedAt,
    }));
    return c.json({ tenant_id: tenantId, tenant_kind: tenantKind, keys }, 200);
  });

  return router;
}
