/**
 * Anchoring's read side (interface-spec "Inclusion proof", Errors 409; DESIGN.md §4): a
 * record's inclusion proof, and for monitors the epochs, their signed headers and RFC 9162
 * consistency proofs between epochs and between two sizes of a tenant log, so anyone holding
 * an old head can check the history was only appended to. Epoch headers carry digests and
 * roots only (no tenant ids), so they are public like the keys that sign them.
 */
import fs from 'node:fs';
import { toBase64, toHex } from '../../shared/encoding.ts';
import { certificatesFromPem } from '../../shared/timestamp.ts';
import { ProblemError } from '../core/errors.ts';
import { createRouter, defineRoute, jsonContent, problemContent, z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import { EPOCH_LOG_ID, signedHeader } from './epochs.ts';
import { InclusionProver } from './inclusion.ts';
import type { RecordLeaf } from './inclusion.ts';
import type { AnchoringStore } from './store.ts';
import { boundaryAfter } from './schedule.ts';
import {
  EpochConsistency,
  EpochConsistencyQuery,
  EpochList,
  EpochListQuery,
  EpochSeqParam,
  InclusionProofSchema,
  SignedEpochHeaderSchema,
  TenantConsistency,
  TenantConsistencyQuery,
  TenantLogHead,
} from './schemas.ts';
import { StoredTrees } from './stored-tree.ts';
import { epochTimestamps } from './timestamps.ts';
import { configuredWitnesses, epochWitnessing } from './witness.ts';

const ActionKeyParam = z.object({
  action_key: z.string().min(1).max(200).openapi({ param: { name: 'action_key', in: 'path' }, example: 'law:proposed-action:01JD3Q8Z5V7N4M2K6H8G0F1E2D' }),
});

/** Slack after a boundary before the scheduler has surely closed it (one worker interval). */
const CLOSE_SLACK_MS = 30_000;

export function cadenceName(seconds: number): string {
  if (seconds === 3600) return 'hourly';
  if (seconds === 86_400) return 'daily';
  return `every ${seconds} seconds`;
}

/**
 * A record's inclusion proof exactly as GET /v1/records/{action_key}/inclusion-proof serves it
 * (with its epoch's RFC 3161 tokens and witness cosignatures as they stand now), or undefined
 * while no closed epoch anchors the record. Seal-bundle packages carry it beside each bundle
 * (evidence/packet-routes.ts, handed in by app.ts), so a package verifies under a timestamp or
 * witness policy with no further fetch.
 */
export function inclusionProofs(store: AnchoringStore, prover = new InclusionProver(store)) {
  /**
   * `epochs`: one answer's reads of each epoch's tokens and cosignatures, so a package of many
   * records of one epoch reads them once and shows every record the same ones.
   */
  return async (record: RecordLeaf, epochs = new Map<number, Promise<object>>()) => {
    const proof = await prover.prove(record);
    if (!proof) return undefined;
    const seq = proof.epoch.epoch_seq;
    let late = epochs.get(seq);
    if (!late) {
      // The proof's epoch half is cached frozen; timestamps arrive later, so they are read per answer.
      late = (async () => ({
        ...(await epochTimestamps(store, seq)),
        // Witness cosignatures arrive after the close too (./witness.ts).
        ...(await epochWitnessing(store, { epochSeq: seq, checkpoint: proof.epoch_header.checkpoint })),
      }))();
      epochs.set(seq, late);
    }
    return { ...proof, epoch_header: { ...proof.epoch_header, ...(await late) } };
  };
}

/** For app.ts: the seal-bundle packages' source of inclusion proofs. */
export const recordInclusionProofs = (deps: Pick<RouteDeps, 'store'>) => inclusionProofs(deps.store.anchoring);

export function anchoringRoutes(deps: RouteDeps) {
  const router = createRouter();
  const store = deps.store.anchoring;
  const prover = new InclusionProver(store);
  const served = inclusionProofs(store, prover);
  const trees = new StoredTrees(store);
  const cadence = deps.config.epochSeconds;

  const inclusion = defineRoute({
    method: 'get',
    path: '/v1/records/{action_key}/inclusion-proof',
    operationId: 'getInclusionProof',
    tags: ['anchoring'],
    auth: deps.auth.keyOrSession('records:read'),
    summary: 'Roll-up inclusion proof: record → tenant log root → epoch canonical root, with the signed epoch header',
    description:
      'Both hops are RFC 9162 §2.1.3 audit paths. Verify: leaf_hash = SHA-256(0x00 ‖ attestation hash bytes) reaches tenant_log.root; ' +
      'SHA-256(0x00 ‖ JCS(epoch.leaf)) reaches epoch.canonical_root; the header signature verifies under key_id from the JWKS. ' +
      'Before the record’s epoch closes the answer is 409 with epoch_cadence, next_epoch_hint and estimated_next_epoch_at.',
    request: { params: ActionKeyParam },
    responses: {
      200: jsonContent(InclusionProofSchema, 'The proof'),
      404: problemContent("Unknown record (another tenant's record answers the same)"),
      409: problemContent('Not anchored yet (code not_yet_anchored): the problem also carries epoch_cadence, epoch_cadence_seconds, next_epoch_hint and estimated_next_epoch_at'),
    },
  });
  router.openapi(inclusion, async (c) => {
    const { action_key } = c.req.valid('param');
    const row = await deps.store.evidence.findRecord(c.var.auth.tenantId, action_key);
    if (!row) throw ProblemError.notFound(`no sealed record ${action_key} for this tenant`);
    const proof = await served(row);
    if (!proof) throw notYetAnchored(row.recordedAt, deps.clock.now(), cadence);
    return c.json(proof as never, 200);
  });

  const list = defineRoute({
    method: 'get',
    path: '/epochs',
    operationId: 'listEpochs',
    tags: ['anchoring'],
    auth: 'public',
    summary: 'Closed epochs with their signed headers, oldest first',
    request: { query: EpochListQuery },
    responses: { 200: jsonContent(EpochList, 'A page of epochs; pass next_after as after for the next page') },
  });
  router.openapi(list, async (c) => {
    const q = c.req.valid('query');
    const limit = q.limit === undefined ? 50 : Number(q.limit);
    const rows = await store.epochs(q.after === undefined ? -1 : Number(q.after), limit);
    const epochs = [];
    for (const e of rows) epochs.push({ ...signedHeader(e), ...(await epochTimestamps(store, e.epochSeq)), ...(await epochWitnessing(store, e)) });
    return c.json({ epochs, next_after: rows.length === limit ? rows[rows.length - 1]!.epochSeq : null } as never, 200);
  });

  // Declared before /epochs/{epoch_seq}, which would otherwise take "consistency" as a seq.
  const epochConsistency = defineRoute({
    method: 'get',
    path: '/epochs/consistency',
    operationId: 'getEpochConsistency',
    tags: ['anchoring'],
    auth: 'public',
    summary: 'RFC 9162 consistency proof between two epochs (the log of epoch digests at sizes from+1 and to+1)',
    request: { query: EpochConsistencyQuery },
    responses: { 200: jsonContent(EpochConsistency, 'Both heads and the proof'), 404: problemContent('No such closed epoch') },
  });
  router.openapi(epochConsistency, async (c) => {
    const q = c.req.valid('query');
    const from = await store.epoch(Number(q.from));
    const to = q.to === undefined ? await store.lastEpoch() : await store.epoch(Number(q.to));
    if (!from || !to) throw ProblemError.notFound(`no closed epoch ${!from ? q.from : q.to ?? '(none yet)'}`);
    if (to.epochSeq < from.epochSeq) {
      throw ProblemError.validation([{ in: 'query', path: '/to', message: `expected to >= from (${from.epochSeq}), got ${to.epochSeq}` }]);
    }
    return c.json({ log: 'epoch digests' as const, ...(await prover.epochConsistency(EPOCH_LOG_ID, from, to)) }, 200);
  });

  // Declared before /epochs/{epoch_seq} too. Public, like the keys: what a browser needs to check
  // an epoch's RFC 3161 tokens and cosignatures itself (the console's record detail).
  const verifiers = defineRoute({
    method: 'get',
    path: '/epochs/verifiers',
    operationId: 'getEpochVerifiers',
    tags: ['anchoring'],
    auth: 'public',
    summary: 'The time-stamp authorities’ root certificates (PEM) and the witnesses’ verifier keys this service is configured with',
    description:
      'What the service itself checks tokens and cosignatures against (SVC_TSA_ROOTS_FILE, SVC_WITNESSES). A verifier who wants independence ' +
      'from the operator takes these from the authorities and witnesses themselves, as svc-verify --tsa-roots and --witness-key do.',
    responses: { 200: jsonContent(EpochVerifiers, 'The roots and keys (either list may be empty)') },
  });
  const trustAnchors = verifierLists(deps.config);
  router.openapi(verifiers, (c) => c.json(trustAnchors, 200));

  const one = defineRoute({
    method: 'get',
    path: '/epochs/{epoch_seq}',
    operationId: 'getEpoch',
    tags: ['anchoring'],
    auth: 'public',
    summary: 'One epoch’s signed header and tlog-checkpoint, with its RFC 3161 timestamps (timestamp_status, timestamps)',
    request: { params: EpochSeqParam },
    responses: { 200: jsonContent(SignedEpochHeaderSchema, 'The signed header'), 404: problemContent('No such closed epoch') },
  });
  router.openapi(one, async (c) => {
    const { epoch_seq } = c.req.valid('param');
    const epoch = await store.epoch(Number(epoch_seq));
    if (!epoch) throw ProblemError.notFound(`no closed epoch ${epoch_seq}`);
    return c.json({ ...signedHeader(epoch), ...(await epochTimestamps(store, epoch.epochSeq)), ...(await epochWitnessing(store, epoch)) } as never, 200);
  });

  // c2sp.org/tlog-witness and tlog-tiles monitors read the log's latest checkpoint as text.
  const checkpoint = defineRoute({
    method: 'get',
    path: '/checkpoint',
    operationId: 'getCheckpoint',
    tags: ['anchoring'],
    auth: 'public',
    summary: 'The latest epoch’s C2SP tlog-checkpoint, cosigned: the log’s signature line followed by the witnesses’ cosignature/v1 lines',
    description:
      'text/plain; charset=utf-8. The checkpoint’s origin is svc/epochs/<key_id>; its tree is the log of epoch digests, size epoch_seq + 1. ' +
      'Consistency between two checkpoints: GET /epochs/consistency?from=<size-1>&to=<size-1>.',
    responses: {
      200: { description: 'The cosigned checkpoint note', content: { 'text/plain': { schema: z.string() } } },
      404: problemContent('No epoch has closed yet'),
    },
  });
  router.openapi(checkpoint, async (c) => {
    const epoch = await store.lastEpoch();
    if (!epoch) throw ProblemError.notFound('no epoch has closed yet');
    const { cosigned_checkpoint } = await epochWitnessing(store, epoch);
    return c.body(cosigned_checkpoint, 200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }) as never;
  });

  const head = defineRoute({
    method: 'get',
    path: '/tenant/log',
    operationId: 'getTenantLog',
    tags: ['anchoring'],
    auth: deps.auth.keyOrSession('records:read'),
    summary: 'The tenant log’s current head (size and RFC 9162 root) and how much of it epochs have anchored',
    responses: { 200: jsonContent(TenantLogHead, 'The head') },
  });
  router.openapi(head, async (c) => {
    const tenantId = c.var.auth.tenantId;
    const log = (await store.tenantLog(tenantId)) ?? { size: 0, anchoredSize: 0 };
    return c.json({ tenant_id: tenantId, size: log.size, root: toHex(await trees.rootAt(tenantId, log.size)), anchored_size: log.anchoredSize }, 200);
  });

  const tenantConsistency = defineRoute({
    method: 'get',
    path: '/tenant/log/consistency',
    operationId: 'getTenantLogConsistency',
    tags: ['anchoring'],
    auth: deps.auth.keyOrSession('records:read'),
    summary: 'RFC 9162 consistency proof between two sizes of the tenant log',
    request: { query: TenantConsistencyQuery },
    responses: { 200: jsonContent(TenantConsistency, 'Both heads and the proof') },
  });
  router.openapi(tenantConsistency, async (c) => {
    const tenantId = c.var.auth.tenantId;
    const q = c.req.valid('query');
    const size = await store.tenantLogSize(tenantId);
    const from = Number(q.from_size);
    const to = q.to_size === undefined ? size : Number(q.to_size);
    const errors = [
      ...(from < 1 || from > to ? [{ in: 'query' as const, path: '/from_size', message: `expected 1 <= from_size <= ${to}, got ${from}` }] : []),
      ...(to > size ? [{ in: 'query' as const, path: '/to_size', message: `expected at most the log size ${size}, got ${to}` }] : []),
    ];
    if (errors.length > 0) throw ProblemError.validation(errors);
    return c.json({ tenant_id: tenantId, ...(await prover.tenantConsistency(tenantId, from, to)) }, 200);
  });

  return router;
}

const EpochVerifiers = z
  .object({
    tsa_roots: z.array(z.string()).openapi({ description: 'Each trusted TSA root certificate, PEM' }),
    witnesses: z.array(z.object({ name: z.string(), key: z.string().openapi({ description: 'c2sp.org/signed-note verifier key, type 0x04 (cosignature/v1)' }) })),
  })
  .openapi('EpochVerifiers');

/** Read once: both settings are checked at start (core/settings-check.ts) and fixed for the process. */
function verifierLists(config: RouteDeps['config']): z.infer<typeof EpochVerifiers> {
  let roots: Uint8Array[] = [];
  try {
    roots = config.tsaRootsFile === undefined ? [] : certificatesFromPem(fs.readFileSync(config.tsaRootsFile, 'utf8'));
  } catch {
    // An unreadable roots file already keeps every token from being stored (./timestamps.ts): nothing to publish.
  }
  let witnesses: z.infer<typeof EpochVerifiers>['witnesses'] = [];
  try {
    witnesses = configuredWitnesses(config).map((w) => ({ name: w.name, key: w.key.vkey }));
  } catch {
    // Likewise refused at start; nothing usable to publish.
  }
  const pem = (der: Uint8Array) => `-----BEGIN CERTIFICATE-----\n${(toBase64(der).match(/.{1,64}/g) ?? []).join('\n')}\n-----END CERTIFICATE-----\n`;
  return { tsa_roots: roots.map(pem), witnesses };
}

/** 409 until the record's epoch closes (interface-spec Errors 409, "Inclusion proof"). */
function notYetAnchored(recordedAt: string, now: Date, cadenceSeconds: number): ProblemError {
  const boundary = boundaryAfter(new Date(recordedAt), cadenceSeconds);
  // Past the boundary the scheduler is about to close it (or catching up after downtime).
  const estimate = new Date(Math.max(boundary.getTime(), now.getTime() + 1000) + (boundary.getTime() > now.getTime() ? 0 : CLOSE_SLACK_MS));
  const retryAfter = Math.max(1, Math.ceil((estimate.getTime() - now.getTime()) / 1000));
  return new ProblemError({
    status: 409,
    code: 'not_yet_anchored',
    detail: `this record anchors in the epoch that closes at ${boundary.toISOString()}; retry after estimated_next_epoch_at`,
    extra: {
      epoch_cadence: cadenceName(cadenceSeconds),
      epoch_cadence_seconds: cadenceSeconds,
      next_epoch_hint: `epochs close on UTC boundaries ${cadenceName(cadenceSeconds)}; this record's epoch closes at ${boundary.toISOString()}`,
      estimated_next_epoch_at: estimate.toISOString(),
    },
    headers: { 'retry-after': String(retryAfter) },
  });
}
