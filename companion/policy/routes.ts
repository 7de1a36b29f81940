/**
 * Tenant policy (interface-spec "Tenant policy (query policy_pack)"; "What the service does" 3):
 * GET /tenant/policy/options, POST /tenant/policy/preview, PUT /tenant/policy and
 * GET /tenant/policy/receipts, all API-key authenticated and all for one gate pack named by
 * the required policy_pack query parameter. The tenant comes from the key (Authentication 6).
 *
 * Bodies are validated twice over: the route's schema (what the OpenAPI document shows) and,
 * since a policy is checked against the pack the query names, policy/document.ts, which also
 * refuses raw material. A body that fails either gets one 422 listing every failing path.
 */
import type { Context } from 'hono';
import { fieldErrors } from '../core/errors.ts';
import type { FieldError } from '../core/errors.ts';
import { createRouter, defineRoute, jsonBody, jsonContent, validationHook } from '../core/router.ts';
import type { z } from '../core/router.ts';
import type { RouteDeps } from '../deps.ts';
import { getGatePack } from '../packs/registry.ts';
import type { GatePack } from '../packs/registry.ts';
import { checkPolicy, overlayOf, PolicyDocumentBody, policyProblem } from './document.ts';
import { policyOptions } from './options.ts';
import { overlayOfVersion } from './overlay.ts';
import { checkSamples, previewPolicy } from './preview.ts';
import { OptionsResponse, PolicyQuery, PreviewRequest, PreviewResponse, PutResponse, ReceiptsQuery, ReceiptsResponse } from './schema.ts';
import { putPolicy, versionView } from './versions.ts';

type HookResult = { target: string; success: boolean; error?: z.ZodError; data?: unknown };

/**
 * The validation hook of a policy body route. When the route's schema refuses the body, the
 * pack-specific check runs on the same input, so the answer lists every path (and calls raw
 * material raw material) rather than only what the looser documented schema saw. `covers`
 * names the paths that check speaks for; the route schema's errors elsewhere are kept.
 */
function policyBodyHook(check: (pack: GatePack, input: unknown) => FieldError[], covers: (path: string) => boolean) {
  return (result: HookResult, c: Context) => {
    if (result.success) return undefined;
    // The query validator ran first, so policy_pack is a gate pack whenever the body is checked.
    const pack = result.target === 'json' ? getGatePack(c.req.query('policy_pack') ?? '') : undefined;
    const errors = pack ? check(pack, result.data) : [];
    if (errors.length === 0) validationHook(result);
    const rest = fieldErrors(result.error!, 'body').filter((e) => !covers(e.path));
    throw policyProblem([...errors, ...rest]);
  };
}

function previewErrors(pack: GatePack, input: unknown): FieldError[] {
  const body = (typeof input === 'object' && input !== null ? input : {}) as { policy?: unknown; samples?: unknown };
  const policy = checkPolicy(pack, body.policy, ['policy']);
  const samples = Array.isArray(body.samples) ? checkSamples(pack, body.samples, ['samples']) : { ok: true as const };
  return [...(policy.ok ? [] : policy.errors), ...(samples.ok ? [] : samples.errors)];
}

export function policyRoutes(deps: RouteDeps) {
  const router = createRouter();
  const store = deps.store.policy;
  const versionDeps = { sealer: deps.sealer, policy: store, evidence: deps.store.evidence };
  const currentVersion = (tenantId: string, pack: GatePack) => {
    const row = store.current(tenantId, pack.manifest.name);
    return row ? versionView(deps.store.evidence, row) : null;
  };

  const options = defineRoute({
    method: 'get',
    path: '/tenant/policy/options',
    operationId: 'getPolicyOptions',
    tags: ['policy'],
    auth: deps.auth.apiKey,
    summary: "The pack's action types and defaults, the current policy version, the document schema and the raw-material rules",
    request: { query: PolicyQuery },
    responses: { 200: jsonContent(OptionsResponse, 'What a policy for this pack may say, and what it says now') },
  });
  router.openapi(options, (c) => {
    const pack = getGatePack(c.req.valid('query').policy_pack);
    return c.json(policyOptions(pack, currentVersion(c.var.auth.tenantId, pack)) as never, 200);
  });

  const preview = defineRoute({
    method: 'post',
    path: '/tenant/policy/preview',
    operationId: 'previewPolicy',
    tags: ['policy'],
    auth: deps.auth.apiKey,
    summary: 'Decide sample gate requests under the current and a candidate policy; nothing is saved, sealed or metered',
    request: { query: PolicyQuery, body: jsonBody(PreviewRequest) },
    responses: { 200: jsonContent(PreviewResponse, 'Each sample’s current and candidate decision, by index and action type only') },
  });
  router.openapi(
    preview,
    (c) => {
      const pack = getGatePack(c.req.valid('query').policy_pack);
      const body = c.req.valid('json');
      const candidate = checkPolicy(pack, body.policy, ['policy']);
      const samples = checkSamples(pack, body.samples, ['samples']);
      if (!candidate.ok || !samples.ok) throw policyProblem([...(candidate.ok ? [] : candidate.errors), ...(samples.ok ? [] : samples.errors)]);
      const currentRow = store.current(c.var.auth.tenantId, pack.manifest.name);
      const current = overlayOfVersion(currentRow);
      const { results, summary } = previewPolicy(pack, current, overlayOf(candidate.document, candidate.digest), samples.samples);
      return c.json(
        {
          policy_pack: pack.manifest.name,
          current: { version: currentRow?.version ?? null, digest: current.digest },
          candidate: { digest: candidate.digest, document: candidate.document },
          results,
          summary,
          saved: false as const,
        },
        200,
      );
    },
    policyBodyHook(previewErrors, (path) => path.startsWith('/policy') || /^\/samples\/\d+(\/|$)/.test(path)),
  );

  const put = defineRoute({
    method: 'put',
    path: '/tenant/policy',
    operationId: 'updatePolicy',
    tags: ['policy'],
    auth: deps.auth.apiKey,
    summary: 'Make a new policy version for the pack, sealed as a policy receipt',
    description:
      'A new version, never an edit in place. The version is sealed as a policy receipt (kind policy, status recorded, not metered) ' +
      'in the same transaction that stores it. A document equal to the current version (same digest) answers 200 with changed false ' +
      'and seals nothing. Raw prompt, document, key or secret material answers 422 raw_content_rejected and nothing is stored.',
    request: { query: PolicyQuery, body: jsonBody(PolicyDocumentBody) },
    responses: {
      201: jsonContent(PutResponse, 'A new version and its sealed receipt'),
      200: jsonContent(PutResponse, 'The document equals the current version: that version, unchanged'),
    },
  });
  router.openapi(
    put,
    async (c) => {
      const pack = getGatePack(c.req.valid('query').policy_pack);
      const checked = checkPolicy(pack, c.req.valid('json'));
      if (!checked.ok) throw policyProblem(checked.errors);
      const { changed, row } = await putPolicy(versionDeps, c.var.auth, pack, checked.document, checked.digest);
      return c.json({ ...versionView(deps.store.evidence, row), changed } as never, changed ? 201 : 200);
    },
    policyBodyHook(
      (pack, input) => {
        const checked = checkPolicy(pack, input);
        return checked.ok ? [] : checked.errors;
      },
      () => true, // the pack's schema is the documented one with narrower action types
    ),
  );

  const receipts = defineRoute({
    method: 'get',
    path: '/tenant/policy/receipts',
    operationId: 'listPolicyReceipts',
    tags: ['policy'],
    auth: deps.auth.apiKey,
    summary: 'Policy version history for the pack, newest first, each with its sealed receipt',
    request: { query: ReceiptsQuery },
    responses: { 200: jsonContent(ReceiptsResponse, 'Versions newest first') },
  });
  router.openapi(receipts, (c) => {
    const { policy_pack, limit, before_version } = c.req.valid('query');
    const rows = store.listVersions(c.var.auth.tenantId, policy_pack, { limit, beforeVersion: before_version });
    const last = rows.at(-1);
    return c.json(
      {
        policy_pack,
        receipts: rows.map((row) => versionView(deps.store.evidence, row)),
        next_before_version: rows.length === limit && last !== undefined && last.version > 1 ? last.version : null,
      } as never,
      200,
    );
  });

  return router;
}
