/**
 * Reading and verifying evidence (interface-spec Endpoints "Gate, record, review, verify" and
 * "Evidence packets"): a sealed record, its evidence packet, online verification with
 * itemized checks, and the published verification recipe.
 */
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import { failedChecks, verifyEvidence } from '../../shared/verify.ts';
import { rfc3339 } from '../core/clock.ts';
import { ProblemError } from '../core/errors.ts';
import { createRouter, defineRoute, jsonBody, jsonContent, problemContent, z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import { recordBody, viewRecord } from './record-view.ts';
import { EvidencePacket, SealedRecord, VerifyRequest, VerifyResponse } from './schemas.ts';
import type { SealedRecordRow } from './store.ts';
import { verifyKit } from './verify-kit.ts';

const ActionKeyParam = z.object({
  action_key: z.string().min(1).max(200).openapi({ param: { name: 'action_key', in: 'path' }, example: 'law:proposed-action:01JD3Q8Z5V7N4M2K6H8G0F1E2D' }),
});

const Kit = z.record(z.string(), z.unknown()).openapi('VerifyKit');

function notFound(actionKey: string): ProblemError {
  // Another tenant's record answers exactly like a missing one (interface-spec Authentication 6).
  return new ProblemError({ status: 404, code: 'not_found', detail: `no sealed record ${actionKey} for this tenant` });
}

/**
 * A capability's live part of GET /v1/records/{action_key}, under its own member: the reviews
 * capability adds a paused action's review state. Handed in by app.ts, so evidence imports
 * none of the capabilities that join its reads.
 */
export interface RecordPart {
  name: string;
  schema: z.ZodType;
  /** The part for this record now, or undefined when it has none. */
  view(deps: RouteDeps, row: SealedRecordRow, now: string): Promise<unknown>;
}

export const evidenceRoutes = (parts: readonly RecordPart[]) => (deps: RouteDeps) => {
  const router = createRouter();
  const trusted = trustedKeySet(deps.keyring.jwks());

  const getRecord = defineRoute({
    method: 'get',
    path: '/v1/records/{action_key}',
    operationId: 'getRecord',
    tags: ['evidence'],
    auth: deps.auth.keyOrSession('records:read'),
    summary: 'Fetch a sealed record with its evidence packet and a ready verify request',
    request: { params: ActionKeyParam },
    responses: {
      200: jsonContent(SealedRecord.extend(Object.fromEntries(parts.map((p) => [p.name, p.schema.optional()]))), 'The sealed record'),
      404: problemContent("Unknown record (another tenant's record answers the same)"),
    },
  });
  router.openapi(getRecord, async (c) => {
    const { action_key } = c.req.valid('param');
    const row = await deps.store.evidence.findRecord(c.var.auth.tenantId, action_key);
    if (!row) throw notFound(action_key);
    const now = rfc3339(deps.clock.now());
    const extra: Record<string, unknown> = {};
    for (const p of parts) {
      const view = await p.view(deps, row, now);
      if (view !== undefined) extra[p.name] = view;
    }
    return c.json({ ...recordBody(row), ...extra } as z.infer<typeof SealedRecord>, 200);
  });

  const getPacket = defineRoute({
    method: 'get',
    path: '/{vertical}/evidence-packets/{action_key}',
    operationId: 'getEvidencePacket',
    tags: ['evidence'],
    auth: deps.auth.keyOrSession('records:read'),
    summary: 'Evidence packet of a record (the durable href of every packet)',
    request: {
      params: ActionKeyParam.extend({
        vertical: z.string().min(1).max(40).openapi({ param: { name: 'vertical', in: 'path' }, example: 'law' }),
      }),
    },
    responses: { 200: jsonContent(EvidencePacket, 'The evidence packet'), 404: problemContent("Unknown record (another tenant's record answers the same)") },
  });
  router.openapi(getPacket, async (c) => {
    const { vertical, action_key } = c.req.valid('param');
    const row = await deps.store.evidence.findRecord(c.var.auth.tenantId, action_key);
    if (!row || row.vertical !== vertical) throw notFound(action_key);
    return c.json(viewRecord(row).packet as z.infer<typeof EvidencePacket>, 200);
  });

  const verify = defineRoute({
    method: 'post',
    path: '/v1/verify',
    operationId: 'verifyEvidence',
    tags: ['evidence'],
    auth: deps.auth.optionalApiKey,
    summary: 'Recompute every check of an evidence packet (signature, hashes, key identity and status)',
    request: { body: jsonBody(VerifyRequest) },
    responses: { 200: jsonContent(VerifyResponse, 'Itemized result; verified is true only when every check passed') },
  });
  router.openapi(verify, async (c) => {
    const body = c.req.valid('json');
    const result = await verifyEvidence(body, trusted);
    const failed = failedChecks(result);
    const auth = c.var.auth;
    if (auth && !result.verified) await deps.webhooks.verifyFailed(auth.tenantId, body, failed);
    return c.json({ ...result, action_key: body.action_key, failed_checks: failed }, 200);
  });

  const kit = defineRoute({
    method: 'get',
    path: '/v1/verify/kit',
    operationId: 'getVerifyKit',
    tags: ['evidence'],
    auth: 'public',
    summary: 'Offline verification recipe: fields, hashes, checks; no key material',
    responses: { 200: jsonContent(Kit, 'The recipe') },
  });
  router.openapi(kit, (c) => c.json(verifyKit(), 200));

  return router;
};
