/**
 * POST /tenant/policy/preview: "evaluate a candidate policy against sample requests and show
 * the decisions that would change; nothing saved" (interface-spec "Tenant policy").
 *
 * Each sample is decided twice by the gate's own pure decision (./decide.ts `decide` over
 * `gateInput`), once with the tenant's current overlay and once with the candidate's, so a
 * preview predicts exactly what POST /v1/gate will answer after the PUT. Nothing is stored,
 * sealed or metered, and no sample is echoed: a result names its index and action type only.
 *
 * The route is the policy API's, but it lives with the gate: it runs the gate's decision over
 * policy documents, so the gate depends on policy here as it does for every gate request, and
 * policy never depends on the gate (capability folders import each other in one direction).
 */
import { fieldErrors, jsonPointer } from '../core/errors.ts';
import type { FieldError } from '../core/errors.ts';
import { createRouter, defineRoute, jsonBody, jsonContent } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import { DECISIONS } from '../packs/manifest.ts';
import type { Decision } from '../packs/manifest.ts';
import { getGatePack } from '../packs/registry.ts';
import type { GatePack } from '../packs/registry.ts';
import { policyBodyHook } from '../policy/body-hook.ts';
import { checkPolicy, overlayOf, policyProblem } from '../policy/document.ts';
import { overlayOfVersion } from '../policy/overlay.ts';
import type { PolicyOverlay } from '../policy/policy-overlay.ts';
import { PolicyQuery, PreviewRequest, PreviewResponse } from '../policy/schema.ts';
import { decide, gateInput } from './decide.ts';
import { gateRequestSchema } from './schema.ts';

const SAMPLE_SCHEMAS = new Map<string, ReturnType<typeof gateRequestSchema>>();

/**
 * Validates each sample with the gate's own schema for the pack (the one POST
 * /{vertical}/proposed-action uses: `pack` may be omitted, and must match if given), so a
 * sample the preview decides is exactly a request the gate would accept. Errors sit under `at`.
 */
export function checkSamples(
  pack: GatePack,
  samples: readonly unknown[],
  at: readonly (string | number)[],
): { ok: true; samples: Record<string, unknown>[] } | { ok: false; errors: FieldError[] } {
  const m = pack.manifest;
  let schema = SAMPLE_SCHEMAS.get(m.name);
  if (!schema) SAMPLE_SCHEMAS.set(m.name, (schema = gateRequestSchema(m, 'matches-path')));
  const valid: Record<string, unknown>[] = [];
  const errors: FieldError[] = [];
  samples.forEach((sample, i) => {
    const parsed = schema.safeParse(sample);
    if (parsed.success) valid.push(parsed.data as Record<string, unknown>);
    else errors.push(...fieldErrors(parsed.error, 'body').map((e) => ({ ...e, path: jsonPointer([...at, i]) + e.path })));
  });
  return errors.length === 0 ? { ok: true, samples: valid } : { ok: false, errors };
}

export interface DecisionView {
  decision: Decision;
  review_route: string | null;
}

export interface PreviewResult {
  index: number;
  action_type: string;
  current: DecisionView;
  candidate: DecisionView;
  decision_changed: boolean;
  route_changed: boolean;
  /** Either of the two above. */
  changed: boolean;
}

export interface PreviewSummary {
  samples: number;
  changed: number;
  unchanged: number;
  changed_indexes: number[];
  current_decisions: Record<Decision, number>;
  candidate_decisions: Record<Decision, number>;
}

export function previewPolicy(
  pack: GatePack,
  current: PolicyOverlay,
  candidate: PolicyOverlay,
  samples: readonly Readonly<Record<string, unknown>>[],
): { results: PreviewResult[]; summary: PreviewSummary } {
  const results = samples.map((sample, index): PreviewResult => {
    const input = gateInput(pack, sample);
    const before = decide(pack, input, current);
    const after = decide(pack, input, candidate);
    const decisionChanged = before.decision !== after.decision;
    const routeChanged = before.reviewRoute !== after.reviewRoute;
    return {
      index,
      action_type: before.actionType,
      current: { decision: before.decision, review_route: before.reviewRoute },
      candidate: { decision: after.decision, review_route: after.reviewRoute },
      decision_changed: decisionChanged,
      route_changed: routeChanged,
      changed: decisionChanged || routeChanged,
    };
  });
  const count = (side: 'current' | 'candidate') =>
    Object.fromEntries(DECISIONS.map((d) => [d, results.filter((r) => r[side].decision === d).length])) as Record<Decision, number>;
  const changedIndexes = results.filter((r) => r.changed).map((r) => r.index);
  return {
    results,
    summary: {
      samples: results.length,
      changed: changedIndexes.length,
      unchanged: results.length - changedIndexes.length,
      changed_indexes: changedIndexes,
      current_decisions: count('current'),
      candidate_decisions: count('candidate'),
    },
  };
}

function previewErrors(pack: GatePack, input: unknown): FieldError[] {
  const body = (typeof input === 'object' && input !== null ? input : {}) as { policy?: unknown; samples?: unknown };
  const policy = checkPolicy(pack, body.policy, ['policy']);
  const samples = Array.isArray(body.samples) ? checkSamples(pack, body.samples, ['samples']) : { ok: true as const };
  return [...(policy.ok ? [] : policy.errors), ...(samples.ok ? [] : samples.errors)];
}

/** POST /tenant/policy/preview (tag policy), mounted beside the policy routes (app.ts). */
export function policyPreviewRoutes(deps: RouteDeps) {
  const router = createRouter();
  const store = deps.store.policy;

  const preview = defineRoute({
    method: 'post',
    path: '/tenant/policy/preview',
    operationId: 'previewPolicy',
    tags: ['policy'],
    auth: deps.auth.keyOrSession('policy:manage'),
    summary: 'Decide sample gate requests under the current and a candidate policy; nothing is saved, sealed or metered',
    request: { query: PolicyQuery, body: jsonBody(PreviewRequest) },
    responses: { 200: jsonContent(PreviewResponse, 'Each sample’s current and candidate decision, by index and action type only') },
  });
  router.openapi(
    preview,
    async (c) => {
      const pack = getGatePack(c.req.valid('query').policy_pack);
      const body = c.req.valid('json');
      const candidate = checkPolicy(pack, body.policy, ['policy']);
      const samples = checkSamples(pack, body.samples, ['samples']);
      if (!candidate.ok || !samples.ok) throw policyProblem([...(candidate.ok ? [] : candidate.errors), ...(samples.ok ? [] : samples.errors)]);
      const currentRow = await store.current(c.var.auth.tenantId, pack.manifest.name);
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
  return router;
}
