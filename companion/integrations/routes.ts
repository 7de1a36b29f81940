/**
 * Tenant integrations (interface-spec "Routing and integrations"): PUT
 * /tenant/integrations/{channel}/{target} stores a route's setup and secret_ref; GET
 * /tenant/integrations/readiness says how each stands. The channels accepted in the path are
 * exactly those handed in (app.ts), so a new channel extends the enum by registering itself.
 *
 * A setup is checked whole before anything is written: a bad one answers 422 listing every
 * failing field and leaves the stored target exactly as it was (interface-spec Errors 422).
 */
import { boundedRecord } from '../core/bounds.ts';
import { ProblemError } from '../core/errors.ts';
import type { FieldError } from '../core/errors.ts';
import { createRouter, defineRoute, jsonBody, jsonContent, z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import type { IntegrationChannel, IntegrationInput } from './channel.ts';
import { secretRefErrors } from './secret-ref-check.ts';
import type { IntegrationRow } from './store.ts';

export const TARGET_PATTERN = /^[a-z0-9][a-z0-9._-]{0,62}$/;

const Target = z
  .string()
  .max(63)
  .regex(TARGET_PATTERN, 'target must be 1–63 characters of a-z, 0-9, ".", "_" or "-", starting with a letter or digit')
  .openapi({ param: { name: 'target', in: 'path' }, example: 'ops-alerts' });

const Readiness = z
  .looseObject({
    state: z.enum(['disabled', 'auto_disabled', 'incomplete', 'waiting_on_secret', 'ready']),
    detail: z.string(),
  })
  .openapi('IntegrationReadiness');

export const IntegrationView = z
  .looseObject({
    channel: z.string(),
    target: z.string(),
    enabled: z.boolean(),
    config: z.record(z.string(), z.unknown()),
    secret_ref: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    readiness: Readiness,
  })
  .openapi('Integration');

export async function integrationView(deps: RouteDeps, channel: IntegrationChannel, row: IntegrationRow) {
  return {
    channel: row.channel,
    target: row.target,
    enabled: row.enabled,
    config: JSON.parse(row.config) as Record<string, unknown>,
    secret_ref: row.secretRef,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    readiness: await channel.readiness(deps, row),
  };
}

/** interface-spec "Webhook integration" secret_ref: a reference the operator granted, never raw material. */
function checkSecretRef(deps: RouteDeps, tenantId: string, value: string): FieldError[] {
  return secretRefErrors(deps.secrets, tenantId, '/secret_ref', value);
}

function prefixIssues(error: z.ZodError, key: string): z.ZodError {
  return new z.ZodError(error.issues.map((i) => ({ ...i, path: [key, ...i.path] })));
}

export function integrationRoutes(channels: readonly IntegrationChannel<any>[]) {
  const byName = new Map(channels.map((c) => [c.name, c]));
  const names = channels.map((c) => c.name) as [string, ...string[]];

  return function routes(deps: RouteDeps) {
    const router = createRouter();

    const put = defineRoute({
      method: 'put',
      path: '/tenant/integrations/{channel}/{target}',
      operationId: 'updateIntegration',
      tags: ['integrations'],
      auth: deps.auth.keyOrSession('integrations:manage'),
      summary: 'Store a route setup and its secret_ref; a webhook target answers its signing secret once',
      request: {
        params: z.object({ channel: z.enum(names).openapi({ param: { name: 'channel', in: 'path' } }), target: Target }),
        body: jsonBody(
          z
            .object({
              enabled: z.boolean(),
              // Documents every channel's config; the channel named in the path checks it
              // as its own below, so its errors name the exact failing fields.
              config: z.union([...channels.map((c) => c.config), boundedRecord(z.string().max(64), z.unknown(), 32)] as any),
              secret_ref: z.string().max(300).nullable().optional().openapi({ description: 'env://NAME, secret://…, aws-sm://…, vault://mount/path#field granted to this tenant by the operator, or secret://tenants/{tenant_id}/… in its own namespace; a scheme the service cannot resolve (gcp-sm://, azure-kv://, or an unconfigured provider) answers 422 secret_provider_unavailable' }),
              rotate_signing_secret: z.boolean().optional().openapi({ description: 'true mints a fresh signing secret, shown once' }),
            })
            .strict(),
        ),
      },
      responses: {
        200: jsonContent(IntegrationView, 'The updated setup'),
        201: jsonContent(IntegrationView, 'The new setup'),
      },
    });
    router.openapi(put, async (c) => {
      const { channel: name, target } = c.req.valid('param');
      const channel = byName.get(name)!;
      // The config exactly as sent (the union above may have matched another channel's
      // schema and applied its defaults); the channel named in the path must accept it.
      const raw = c.req.valid('json') as IntegrationInput<unknown>;
      const sent = ((await c.req.json()) as { config: unknown }).config;
      const parsed = channel.config.safeParse(sent);
      if (!parsed.success) throw ProblemError.fromZod(prefixIssues(parsed.error, 'config'), 'body');
      const body: IntegrationInput<unknown> = { ...raw, config: parsed.data };
      const tenantId = c.var.auth.tenantId;
      const now = deps.clock.now();
      const at = now.toISOString();
      const existing = await deps.store.integrations.find(tenantId, name, target);
      const ctx = { deps, tenantId, target, existing, now };
      const errors = [...(body.secret_ref ? checkSecretRef(deps, tenantId, body.secret_ref) : []), ...channel.check(ctx, body)];
      if (errors.length > 0) throw ProblemError.validation(errors, `the ${name} setup was not saved: ${errors.length} field${errors.length === 1 ? '' : 's'} failed`);

      const { row, extra } = await deps.store.transaction(async (tx) => {
        await tx.integrations.save({
          tenantId,
          channel: name,
          target,
          enabled: body.enabled,
          config: JSON.stringify(body.config),
          secretRef: body.secret_ref ?? null,
          at,
        });
        const extra = await channel.saved(ctx, body, tx);
        return { row: (await tx.integrations.find(tenantId, name, target))!, extra };
      });
      c.header('cache-control', 'no-store'); // the answer may hold a secret shown once
      return c.json({ ...(await integrationView(deps, channel, row)), ...extra }, existing ? 200 : 201);
    });

    const readiness = defineRoute({
      method: 'get',
      path: '/tenant/integrations/readiness',
      operationId: 'getIntegrationReadiness',
      tags: ['integrations'],
      auth: deps.auth.keyOrSession('integrations:manage'),
      summary: 'Whether each route is disabled, incomplete, waiting on secret resolution or ready',
      request: { query: z.object({}).strict() },
      responses: {
        200: jsonContent(z.object({ integrations: z.array(z.looseObject({ channel: z.string(), target: z.string(), readiness: Readiness })) }).openapi('IntegrationReadinessList'), 'Every stored route'),
      },
    });
    router.openapi(readiness, async (c) => {
      const rows = (await deps.store.integrations.list(c.var.auth.tenantId)).filter((r) => byName.has(r.channel));
      const integrations = [];
      for (const r of rows) integrations.push({ channel: r.channel, target: r.target, enabled: r.enabled, readiness: await byName.get(r.channel)!.readiness(deps, r) });
      return c.json({ integrations }, 200);
    });

    return router;
  };
}
