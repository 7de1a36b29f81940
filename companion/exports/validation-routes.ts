/**
 * Validation profiles, the schema manifest, schema bindings and validation runs (interface-spec
 * Tenant exports). Profiles and the manifest describe the pinned official schemas shipped with
 * the service; bindings and runs are the tenant's hash-only receipts (migration 0008).
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { ProblemError } from '../core/errors.ts';
import type { AppEnv } from '../core/router.ts';
import { defineRoute, jsonBody, jsonContent, z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import { documentContext } from './document-routes.ts';
import { OWNER_REVIEW_NOTICE } from './notice.ts';
import type { SchemaProfile } from './schema-profiles.ts';
import { EXPORT_KINDS, SCHEMA_PROFILES, findProfile, loadSchema, profileDigest, profileFiles, readPinned } from './schema-profiles.ts';
import { bindingView, planBinding, recordBinding, runValidation, runView } from './validation.ts';

const Key = (name: string, description: string) => z.string().min(1).max(100).optional().openapi({ param: { name, in: 'query' }, description });
const Bool = (name: string, description: string) =>
  z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true')
    .openapi({ param: { name, in: 'query' }, description });

const RunFilters = {
  export_kind: Key('export_kind', 'Only runs of this export kind'),
  adapter_key: Key('adapter_key', 'Only runs of documents from this adapter'),
  binding_key: Key('binding_key', 'Only runs made under this binding'),
  validation_status: z.enum(['passed', 'failed']).optional().openapi({ param: { name: 'validation_status', in: 'query' } }),
};

const Profile = z.record(z.string(), z.unknown()).openapi('ValidationSchemaProfile');
const Binding = z
  .object({
    binding_key: z.string().nullable(),
    export_kind: z.string(),
    adapter_key: z.string(),
    schema_profile_key: z.string(),
    schema_digest: z.string(),
    binding_digest: z.string(),
    active: z.boolean(),
    created_at: z.string().nullable(),
    superseded_at: z.string().nullable(),
  })
  .openapi('ValidationSchemaBinding');
const BindingResponse = z
  .object({ notice: z.string(), recorded: z.boolean(), binding: Binding, supersedes: z.string().nullable() })
  .openapi('ValidationSchemaBindingResponse');
const BindingRequest = z
  .strictObject({
    export_kind: z.enum(EXPORT_KINDS),
    schema_profile_key: z.string().min(1).max(100).optional(),
    adapter_key: z.string().min(1).max(100).optional(),
  })
  .openapi('ValidationSchemaBindingRequest');
const Run = z
  .object({
    run_key: z.string(),
    export_kind: z.string(),
    adapter_key: z.string(),
    binding_key: z.string().nullable(),
    schema_profile_key: z.string(),
    schema_digest: z.string(),
    export_digest: z.string(),
    validation_status: z.enum(['passed', 'failed']),
    error_count: z.number().int(),
    created_at: z.string(),
  })
  .openapi('ValidationRun');
const RunRequest = z.strictObject({ export_kind: z.enum(EXPORT_KINDS), binding_key: z.string().min(1).max(100).optional() }).openapi('ValidationRunRequest');
const Violation = z.object({ path: z.string(), message: z.string(), keyword: z.string() });

/** The list endpoint's bound; the overview pages by limit. */
const RUN_LIST_MAX = 1000;

function profileView(p: SchemaProfile, includeSchema = false): Record<string, unknown> {
  return {
    schema_profile_key: p.key,
    title: p.title,
    export_kind: p.exportKind,
    adapter_key: p.adapterKey,
    json_schema_draft: p.draft,
    schema_digest: profileDigest(p),
    files: profileFiles(p).map((f) => ({ path: f.path, sha256: f.sha256 })),
    licence: p.licence,
    source: p.source,
    ...(includeSchema ? { schemas: Object.fromEntries(profileFiles(p).map((f) => [f.path, loadSchema(f)])) } : {}),
  };
}

export function mountValidation(router: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  const auth = deps.auth.keyOrSession('exports:read');
  const tags = ['exports'];

  router.openapi(
    defineRoute({
      method: 'get', path: '/tenant/exports/validation-schema-profiles', tags, auth, operationId: 'listValidationSchemaProfiles',
      summary: 'The pinned official schema profiles exports are validated against',
      request: { query: z.object({}).strict() },
      responses: { 200: jsonContent(z.object({ profiles: z.array(Profile) }), 'Profiles') },
    }),
    (c) => c.json({ profiles: SCHEMA_PROFILES.map((p) => profileView(p)) }, 200),
  );

  router.openapi(
    defineRoute({
      method: 'get', path: '/tenant/exports/validation-schema-profiles/{schema_profile_key}', tags, auth, operationId: 'getValidationSchemaProfile',
      summary: 'One profile; include_schema=true adds the pinned schema documents',
      request: {
        params: z.object({ schema_profile_key: z.string().min(1).max(100).openapi({ param: { name: 'schema_profile_key', in: 'path' }, example: 'oscal-1.2.1-complete' }) }),
        query: z.object({ include_schema: Bool('include_schema', 'Include the schema documents themselves') }).strict(),
      },
      responses: { 200: jsonContent(Profile, 'The profile') },
    }),
    (c) => {
      const profile = findProfile(c.req.valid('param').schema_profile_key);
      if (!profile) throw ProblemError.notFound(`no schema profile ${c.req.valid('param').schema_profile_key}`);
      return c.json(profileView(profile, c.req.valid('query').include_schema), 200);
    },
  );

  router.openapi(
    defineRoute({
      method: 'get', path: '/tenant/exports/validation-schema-manifest', tags, auth, operationId: 'getValidationSchemaManifest',
      summary: 'Every vendored schema file with its size and pinned SHA-256, re-checked on read',
      request: { query: z.object({}).strict() },
      responses: { 200: jsonContent(z.record(z.string(), z.unknown()).openapi('ValidationSchemaManifest'), 'The manifest') },
    }),
    (c) => {
      const files = SCHEMA_PROFILES.flatMap((p) => profileFiles(p).map((f) => ({ schema_profile_key: p.key, path: f.path, sha256: f.sha256, bytes: readPinned(f).bytes })));
      const profiles = SCHEMA_PROFILES.map((p) => ({ schema_profile_key: p.key, schema_digest: profileDigest(p), licence: p.licence }));
      return c.json({ manifest_version: 1, profiles, files }, 200);
    },
  );

  for (const preview of [true, false]) {
    router.openapi(
      defineRoute({
        method: 'post', path: preview ? '/tenant/exports/validation-schema-bindings/preview' : '/tenant/exports/validation-schema-bindings', tags, auth, operationId: preview ? 'previewValidationSchemaBinding' : 'createValidationSchemaBinding',
        summary: preview ? 'What recording this binding would store and supersede; stores nothing' : 'Record a binding; supersedes the active one for the same export kind and adapter',
        request: { body: jsonBody(BindingRequest) },
        responses: preview ? { 200: jsonContent(BindingResponse, 'The binding it would record') } : { 201: jsonContent(BindingResponse, 'The recorded binding') },
      }),
      async (c) => {
        const ctx = documentContext(deps, c.var.auth.tenantId);
        const plan = await planBinding(ctx, c.req.valid('json'));
        if (preview) {
          const binding = { ...bindingView({ ...plan.row, bindingKey: '', createdAt: '' }), binding_key: null, created_at: null };
          return c.json({ notice: OWNER_REVIEW_NOTICE, recorded: false, binding, supersedes: plan.supersedes } as never, 200);
        }
        const row = await recordBinding(ctx, plan);
        return c.json({ notice: OWNER_REVIEW_NOTICE, recorded: true, binding: bindingView(row), supersedes: plan.supersedes } as never, 201);
      },
    );
  }

  router.openapi(
    defineRoute({
      method: 'get', path: '/tenant/exports/validation-schema-bindings', tags, auth, operationId: 'listValidationSchemaBindings',
      summary: 'Bindings newest first',
      request: {
        query: z
          .object({
            export_kind: Key('export_kind', 'Only bindings for this export kind'),
            adapter_key: Key('adapter_key', 'Only bindings for this adapter'),
            active_only: Bool('active_only', 'Only bindings in force'),
          })
          .strict(),
      },
      responses: { 200: jsonContent(z.object({ bindings: z.array(Binding) }), 'Bindings') },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const rows = await deps.store.exports.listBindings(c.var.auth.tenantId, { exportKind: q.export_kind, adapterKey: q.adapter_key, activeOnly: q.active_only });
      return c.json({ bindings: rows.map(bindingView) } as never, 200);
    },
  );

  router.openapi(
    defineRoute({
      method: 'post', path: '/tenant/exports/validation-runs', tags, auth, operationId: 'createValidationRun',
      summary: 'Preflight an export locally against its pinned schema; stores a hash-only receipt',
      request: { body: jsonBody(RunRequest) },
      responses: { 201: jsonContent(z.object({ notice: z.string(), run: Run, errors: z.array(Violation) }).openapi('ValidationRunResponse'), 'The stored receipt, with the first violations (not stored)') },
    }),
    async (c) => {
      const { run, violations } = await runValidation(documentContext(deps, c.var.auth.tenantId), c.req.valid('json'));
      return c.json({ notice: OWNER_REVIEW_NOTICE, run: runView(run), errors: violations } as never, 201);
    },
  );

  router.openapi(
    defineRoute({
      method: 'get', path: '/tenant/exports/validation-runs', tags, auth, operationId: 'listValidationRuns',
      summary: `Runs newest first (at most ${RUN_LIST_MAX})`,
      request: { query: z.object(RunFilters).strict() },
      responses: { 200: jsonContent(z.object({ runs: z.array(Run), truncated: z.boolean() }), 'Runs') },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const rows = await deps.store.exports.listRuns(c.var.auth.tenantId, filterOf(q), RUN_LIST_MAX + 1);
      return c.json({ runs: rows.slice(0, RUN_LIST_MAX).map(runView), truncated: rows.length > RUN_LIST_MAX } as never, 200);
    },
  );

  router.openapi(
    defineRoute({
      method: 'get', path: '/tenant/exports/validation-runs/overview', tags, auth, operationId: 'getValidationRunsOverview',
      summary: 'Counts by result and the newest runs',
      request: {
        query: z
          .object({
            ...RunFilters,
            limit: z.coerce.number().int().min(1).max(100).default(50).openapi({ param: { name: 'limit', in: 'query' }, description: '1 to 100, default 50' }),
          })
          .strict(),
      },
      responses: {
        200: jsonContent(
          z.object({ total: z.number().int(), passed: z.number().int(), failed: z.number().int(), limit: z.number().int(), runs: z.array(Run) }).openapi('ValidationRunOverview'),
          'Overview',
        ),
      },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const tenantId = c.var.auth.tenantId;
      const counts = await deps.store.exports.countRuns(tenantId, filterOf(q));
      const runs = (await deps.store.exports.listRuns(tenantId, filterOf(q), q.limit)).map(runView);
      return c.json({ ...counts, limit: q.limit, runs } as never, 200);
    },
  );

  router.openapi(
    defineRoute({
      method: 'get', path: '/tenant/exports/validation-runs/{run_key}', tags, auth, operationId: 'getValidationRun',
      summary: 'One run',
      request: { params: z.object({ run_key: z.string().min(1).max(100).openapi({ param: { name: 'run_key', in: 'path' } }) }), query: z.object({}).strict() },
      responses: { 200: jsonContent(Run, 'The run') },
    }),
    async (c) => {
      const { run_key } = c.req.valid('param');
      const row = await deps.store.exports.findRun(c.var.auth.tenantId, run_key);
      if (!row) throw ProblemError.notFound(`no validation run ${run_key} for this tenant`);
      return c.json(runView(row) as never, 200);
    },
  );
}

function filterOf(q: { export_kind?: string | undefined; adapter_key?: string | undefined; binding_key?: string | undefined; validation_status?: string | undefined }) {
  return { exportKind: q.export_kind, adapterKey: q.adapter_key, bindingKey: q.binding_key, validationStatus: q.validation_status };
}
