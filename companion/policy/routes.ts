/**
 * Tenant policy (interface-spec "Tenant policy (query policy_pack)"; "What the service does" 3):
 * GET /tenant/policy/options, PUT /tenant/policy and GET /tenant/policy/receipts, all API-key
 * authenticated and all for one gate pack named by the required policy_pack query parameter
 * (POST /tenant/policy/preview runs the gate's decision, so it lives in gate/policy-preview.ts). The tenant comes from the key (Authentication 6).
 *
 * Bodies are validated twice over: the route's schema (what the OpenAPI document shows) and,
 * since a policy is checked against the pack the query names, policy/document.ts, which also
 * refuses raw material. A body that fails either gets one 422 listing every failing path.
 */
import { createRouter, defineRoute, jsonBody, jsonContent } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import { getGatePack } from '../packs/registry.ts';
import type { GatePack } from '../packs/registry.ts';
import { checkPolicy, PolicyDocumentBody, policyProblem } from './document.ts';
import { policyOptions } from './options.ts';
import { policyBodyHook } from './body-hook.ts';
import { OptionsResponse, PolicyQuery, PutResponse, ReceiptsQuery, ReceiptsResponse } from './schema.ts';
import { putPolicy, versionView } from './versions.ts';

export function policyRoutes(deps: RouteDeps) {
  const router = createRouter();
  const store = deps.store.policy;
  const versionDeps = { sealer: deps.sealer, policy: store, evidence: deps.store.evidence };
  const currentVersion = async (tenantId: string, pack: GatePack) => {
    const row = await store.current(tenantId, pack.manifest.name);
    return row ? await versionView(deps.store.evidence, row) : null;
  };

  const options = defineRoute({
    method: 'get',
    path: '/tenant/policy/options',
    operationId: 'getPolicyOptions',
    tags: ['policy'],
    auth: deps.auth.keyOrSession('records:read'),
    summary: "The pack's action types and defaults, the current policy version, the document schema and the raw-material rules",
    request: { query: PolicyQuery },
    responses: { 200: jsonContent(OptionsResponse, 'What a policy for this pack may say, and what it says now') },
  });
  router.openapi(options, async (c) => {
    const pack = getGatePack(c.req.valid('query').policy_pack);
    return c.json(policyOptions(pack, await currentVersion(c.var.auth.tenantId, pack)) as never, 200);
  });

  const put = defineRoute({
    method: 'put',
    path: '/tenant/policy',
    operationId: 'updatePolicy',
    tags: ['policy'],
    auth: deps.auth.keyOrSession('policy:manage'),
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
      return c.json({ ...(await versionView(deps.store.evidence, row)), changed } as never, changed ? 201 : 200);
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
    auth: deps.auth.keyOrSession('records:read'),
    summary: 'Policy version history for the pack, newest first, each with its sealed receipt',
    request: { query: ReceiptsQuery },
    responses: { 200: jsonContent(ReceiptsResponse, 'Versions newest first') },
  });
  router.openapi(receipts, async (c) => {
    const { policy_pack, limit, before_version } = c.req.valid('query');
    const rows = await store.listVersions(c.var.auth.tenantId, policy_pack, { limit, beforeVersion: before_version });
    const last = rows.at(-1);
    const views = [];
    for (const row of rows) views.push(await versionView(deps.store.evidence, row));
    return c.json(
      {
        policy_pack,
        receipts: views,
        next_before_version: rows.length === limit && last !== undefined && last.version > 1 ? last.version : null,
      } as never,
      200,
    );
  });

  return router;
}
