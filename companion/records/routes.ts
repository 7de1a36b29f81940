/**
 * POST /v1/record and POST /v1/record/batch (interface-spec "Record request", Endpoints).
 *
 * The batch body is a bare JSON array of record bodies (1 to 100); a wrapped object answers 422
 * `batch_must_be_array`. Each item is validated and sealed on its own, so one bad item never
 * stops the others. The answer lists every item by index: `recorded` with the same body the
 * single endpoint gives, or `failed` with its problem (code and every failing field).
 *
 * Status: 201 when every item was recorded; 200 when any failed (the call itself succeeded and
 * the body says which items failed and why; in the manner of batch APIs that report per item,
 * rather than WebDAV's 207, whose multistatus body is XML: RFC 4918 §13).
 */
import type { Context } from 'hono';
import { PROBLEM_CONTENT_TYPE, ProblemError, problemBody, toProblem } from '../core/errors.ts';
import { errorFields } from '../core/log.ts';
import { createRouter, defineRoute, jsonBody, jsonContent, ProblemSchema, validationHook, z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import type { SealOutcome } from '../evidence/sealer.ts';
import { RecordRequest, RecordResponse, recordProblem } from './schema.ts';
import type { RecordBody } from './schema.ts';
import { metadataRetention, sealRecord } from './seal-record.ts';
import type { RecordSealDeps } from './seal-record.ts';

export const BATCH_MAX_ITEMS = 100;

const problem402 = {
  description: 'The sandbox allowance of sealed actions is used up',
  content: { [PROBLEM_CONTENT_TYPE]: { schema: ProblemSchema } },
} as const;

const BatchRequest = z
  .array(z.unknown().openapi({ description: 'A record request (RecordRequest); each item is validated on its own' }))
  .min(1)
  .max(BATCH_MAX_ITEMS)
  .openapi('RecordBatchRequest', {
    description: `A bare JSON array of 1 to ${BATCH_MAX_ITEMS} record bodies; a wrapped object is rejected`,
    // Items are validated one by one in the handler (one bad item must not fail the others),
    // so the document names their schema here rather than through the array's validator.
    items: { $ref: '#/components/schemas/RecordRequest' },
  });

const ItemProblem = ProblemSchema.omit({ instance: true, request_id: true });

const BatchItem = z
  .union([
    RecordResponse.extend({ index: z.number().int(), idempotent_replayed: z.boolean() }),
    z.strictObject({ index: z.number().int(), status: z.literal('failed'), problem: ItemProblem }),
  ])
  .openapi('RecordBatchItem');

const BatchResponse = z
  .strictObject({
    results: z.array(BatchItem).openapi({ description: 'One result per item, in request order' }),
    summary: z.strictObject({ total: z.number().int(), recorded: z.number().int(), failed: z.number().int() }),
    failed_indexes: z.array(z.number().int()),
  })
  .openapi('RecordBatchResponse');

export function recordRoutes(deps: RouteDeps) {
  const router = createRouter();
  const sealDeps: RecordSealDeps = { sealer: deps.sealer, clock: deps.clock, tenants: deps.store.tenants };

  const single = defineRoute({
    method: 'post',
    path: '/v1/record',
    operationId: 'createRecord',
    tags: ['records'],
    auth: deps.auth.key('records:write'),
    summary: 'Record a duty event that already happened (eu-ai-act, ca-sb942); digests only',
    description:
      'Seals the record with status recorded; no review routing. source_payload holds SHA-256 digests only: raw content answers 422 raw_content_rejected and nothing is stored. ' +
      'A replay of an earlier idempotency_key answers with the original body and the header Idempotent-Replayed: true.',
    request: { body: jsonBody(RecordRequest) },
    responses: { 201: jsonContent(RecordResponse, 'Recorded and sealed'), 402: problem402 },
  });
  router.openapi(
    single,
    async (c) => {
      const body = c.req.valid('json');
      const retain = body.metadata !== undefined && (await metadataRetention(sealDeps, c.var.auth.tenantId));
      return answer(c, await sealRecord(sealDeps, c.var.auth, body, retain));
    },
    (result) => {
      // The body's own explanations (raw content, digest keys); other parts as every route.
      if (!result.success && result.target === 'json') throw recordProblem(result.error);
      validationHook(result);
      return undefined;
    },
  );

  const batch = defineRoute({
    method: 'post',
    path: '/v1/record/batch',
    operationId: 'createRecordBatch',
    tags: ['records'],
    auth: deps.auth.key('records:write'),
    summary: `Record up to ${BATCH_MAX_ITEMS} events: a bare JSON array, one sealed result per item`,
    description:
      'Each item is validated and sealed independently, exactly like POST /v1/record. 201 when every item was recorded; ' +
      '200 when any failed, with each failed item’s problem (code and errors) at its index.',
    request: { body: jsonBody(BatchRequest) },
    responses: {
      201: jsonContent(BatchResponse, 'Every item recorded'),
      200: jsonContent(BatchResponse, 'Some or all items failed; see failed_indexes and each item’s problem'),
    },
  });
  router.openapi(
    batch,
    async (c) => {
      const items = c.req.valid('json');
      const retain = await metadataRetention(sealDeps, c.var.auth.tenantId);
      const results = await Promise.all(items.map((item, index) => recordItem(deps, sealDeps, c, item, index, retain)));
      const failedIndexes = results.filter((r) => r.status === 'failed').map((r) => r.index);
      const body = {
        results,
        summary: { total: items.length, recorded: items.length - failedIndexes.length, failed: failedIndexes.length },
        failed_indexes: failedIndexes,
      };
      return c.json(body as never, failedIndexes.length === 0 ? 201 : 200);
    },
    (result) => {
      if (result.success) return undefined;
      // interface-spec Endpoints: "a bare JSON array of record bodies (no wrapper key)". zod
      // reports a body of the wrong type as one invalid_type issue at the root.
      if (result.error.issues.some((i) => i.path.length === 0 && i.code === 'invalid_type')) {
        throw new ProblemError({
          status: 422,
          code: 'batch_must_be_array',
          detail: `POST /v1/record/batch takes a bare JSON array of 1 to ${BATCH_MAX_ITEMS} record bodies, not an object wrapping one`,
          errors: [{ in: 'body', path: '', message: 'expected a JSON array', code: 'invalid_type' }],
        });
      }
      validationHook(result);
      return undefined;
    },
  );

  return router;
}

type ItemResult = { index: number; status: string } & Record<string, unknown>;

/** Validates and seals one batch item; a failure becomes that item's result, never the batch's. */
async function recordItem(deps: RouteDeps, sealDeps: RecordSealDeps, c: Context, item: unknown, index: number, retainMetadata: boolean): Promise<ItemResult> {
  const parsed = RecordRequest.safeParse(item);
  if (!parsed.success) return failed(index, recordProblem(parsed.error));
  try {
    const outcome = await sealRecord(sealDeps, c.var.auth, parsed.data as RecordBody, retainMetadata);
    return { index, ...(outcome.body as { status: 'recorded' }), idempotent_replayed: outcome.replayed };
  } catch (err) {
    const { problem, internal } = toProblem(err);
    if (internal) {
      deps.log.error('batch item failed', { request_id: c.get('requestId'), index, ...errorFields(err) });
    }
    return failed(index, problem);
  }
}

function failed(index: number, problem: ProblemError): ItemResult {
  return { index, status: 'failed' as const, problem: problemBody(problem) };
}

function answer(c: Context, outcome: SealOutcome) {
  if (outcome.replayed) c.header('idempotent-replayed', 'true');
  return c.json(outcome.body as never, outcome.status as 201);
}
