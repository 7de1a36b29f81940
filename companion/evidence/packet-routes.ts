/**
 * /evidence-packets/* (interface-spec Endpoints "Evidence packets", "Batch seal request";
 * DESIGN.md §3): the public proof kit, seal verification, and seal bundles for one posted
 * packet or many stored records, as JSON or, by Accept, a tar or zip archive, each record's
 * inclusion proof beside its bundle once its epoch has closed. Nothing here stores or meters
 * anything.
 */
import { buildBundle, verifyBundle } from '../../shared/bundle.ts';
import { fromBase64Url } from '../../shared/encoding.ts';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import type { VerifyRequest as SealedPacket, VerifyResult } from '../../shared/types.ts';
import { failedChecks, verifyEvidence } from '../../shared/verify.ts';
import { ProblemError } from '../core/errors.ts';
import { createRouter, defineRoute, jsonBody, jsonContent, problemContent, z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import { archiveKindFor, archiveResponse, bundlePackage } from './bundle-package.ts';
import type { PackageRecord } from './bundle-package.ts';
import { proofKit } from './proof-kit.ts';
import { viewRecord } from './record-view.ts';
import type { SealedRecordRow } from './store.ts';
import { VerifyRequest, VerifyResponse } from './schemas.ts';

/** Records per batch package: bounded so one request's work and answer stay bounded. */
export const BATCH_BUNDLE_MAX = 1000;

const Base64 = z.string().max(1_000_000).regex(/^[A-Za-z0-9+/_-]*={0,2}$/, { error: 'expected base64' });
const BundleFiles = z
  .strictObject({
    files: z.strictObject({
      'payload.json': Base64,
      'attestation.json': Base64,
      'attestation.sig': Base64,
      'verify.json': Base64,
    }),
  })
  .openapi('SealBundleFiles');

const BatchRequest = z
  .strictObject({
    action_keys: z.array(z.string().min(1).max(200)).min(1).max(BATCH_BUNDLE_MAX),
  })
  .openapi('SealBundleBatchRequest');

const BundleFile = z.object({ name: z.string(), path: z.string(), sha256: z.string(), content_base64: z.string() });
const PackageSchema = z
  .object({
    format: z.string(),
    records: z.array(
      z.object({
        action_key: z.string(),
        path: z.string(),
        files: z.array(BundleFile),
        inclusion_proof: BundleFile.optional().openapi({ description: 'inclusion-proof.json: the record’s inclusion proof with its epoch’s timestamps and cosignatures; absent while the epoch is open' }),
      }),
    ),
    manifest_path: z.literal('MANIFEST.json'),
    manifest: z.record(z.string(), z.unknown()),
    sha256sums: z.string(),
  })
  .openapi('SealBundlePackage');

const archiveContent = {
  'application/x-tar': { schema: { type: 'string' as const, format: 'binary' } },
  'application/zip': { schema: { type: 'string' as const, format: 'binary' } },
};

const decodeFiles = (files: Record<string, string>) =>
  Object.fromEntries(Object.entries(files).map(([name, b64]) => [name, fromBase64Url(b64.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_'))]));

/**
 * A record's inclusion proof as GET /v1/records/{action_key}/inclusion-proof serves it, or
 * undefined while its epoch is open. Anchoring owns it and app.ts hands it in, since anchoring
 * already depends on this capability.
 */
export type InclusionProofs = (deps: RouteDeps) => ProofOf;
/** `epochs` is kept for one answer: each epoch's timestamps and cosignatures are read once. */
type ProofOf = (row: SealedRecordRow, epochs?: Map<number, Promise<object>>) => Promise<object | undefined>;

export function evidencePacketRoutes(inclusionProofs?: InclusionProofs) {
  return (deps: RouteDeps) => packetRoutes(deps, inclusionProofs?.(deps));
}

function packetRoutes(deps: RouteDeps, proofOf: ProofOf | undefined) {
  const router = createRouter();
  // The proof file's bytes are the inclusion-proof answer's, so it equals what svc-verify bundle fetches.
  const proofFile = async (row: SealedRecordRow | undefined, epochs?: Map<number, Promise<object>>): Promise<Uint8Array | undefined> => {
    const proof = row && (await proofOf?.(row, epochs));
    return proof ? new TextEncoder().encode(JSON.stringify(proof)) : undefined;
  };
  const trusted = trustedKeySet(deps.keyring.jwks());
  const publicKeyOf = (keyId: string) => deps.keyring.find(keyId)!.publicKey;
  // interface-spec Events: an authenticated verify call that does not pass.
  const verifyFailed = async (tenantId: string, packet: { action_key: string; href: string }, result: VerifyResult) => {
    if (!result.verified) await deps.webhooks.verifyFailed(tenantId, packet, failedChecks(result));
  };

  const kit = defineRoute({
    method: 'get',
    path: '/evidence-packets/proof-kit',
    operationId: 'getProofKit',
    tags: ['evidence'],
    auth: 'public',
    summary: 'The proof kit: how to check seals, bundles, inclusion and consistency proofs with stock tools',
    responses: { 200: jsonContent(z.record(z.string(), z.unknown()).openapi('ProofKit'), 'The recipe') },
  });
  router.openapi(kit, (c) => c.json(proofKit(deps.config.epochSeconds), 200));

  const verifySeal = defineRoute({
    method: 'post',
    path: '/evidence-packets/verify-seal',
    operationId: 'verifySeal',
    tags: ['evidence'],
    auth: deps.auth.keyOrSession('records:read'),
    summary: 'Verify a seal: an evidence packet (as for /v1/verify) or a 4-file seal bundle (files in base64)',
    request: { body: jsonBody(z.union([BundleFiles, VerifyRequest])) },
    responses: { 200: jsonContent(VerifyResponse.omit({ action_key: true }).extend({ action_key: z.string().nullable() }), 'Itemized checks') },
  });
  router.openapi(verifySeal, async (c) => {
    const body = c.req.valid('json');
    if ('files' in body) {
      let files: Record<string, Uint8Array>;
      try {
        files = decodeFiles(body.files);
      } catch {
        throw ProblemError.validation([{ in: 'body', path: '/files', message: 'expected every file as base64' }]);
      }
      const result = await verifyBundle(files, trusted);
      const payload = tryJson(files['payload.json']);
      const packet = typeof payload?.action_key === 'string' && typeof payload.href === 'string' ? { action_key: payload.action_key, href: payload.href } : undefined;
      if (packet) await verifyFailed(c.var.auth.tenantId, packet, result);
      return c.json({ ...result, action_key: packet?.action_key ?? null, failed_checks: failedChecks(result) }, 200);
    }
    const result = await verifyEvidence(body, trusted);
    await verifyFailed(c.var.auth.tenantId, body, result);
    return c.json({ ...result, action_key: body.action_key, failed_checks: failedChecks(result) }, 200);
  });

  const single = defineRoute({
    method: 'post',
    path: '/evidence-packets/seal-bundle',
    operationId: 'createSealBundle',
    tags: ['evidence'],
    auth: deps.auth.keyOrSession('records:read'),
    summary: 'The 4-file seal bundle for a posted evidence packet (stateless: nothing stored, nothing metered)',
    description:
      'Post an evidence packet as /v1/verify takes it. It must verify under the published keys and belong to this tenant; it is then canonicalized ' +
      'into payload.json, attestation.json, attestation.sig and verify.json, with inclusion-proof.json beside them when the packet is a stored record of this tenant ' +
      'whose epoch has closed. Only hashes travel, so the call is raw-safe. JSON by default; ' +
      'Accept: application/x-tar or application/zip for an archive.',
    request: { body: jsonBody(VerifyRequest) },
    responses: { 200: { description: 'The bundle', content: { ...jsonContent(PackageSchema, '').content, ...archiveContent } } },
  });
  router.openapi(single, async (c) => {
    // The schema checked the shape; verifyEvidence checks every field of the seal itself.
    const body = c.req.valid('json') as unknown as SealedPacket;
    const result = await verifyEvidence(body, trusted);
    const failed = failedChecks(result);
    if (failed.length > 0 || body.seal.attestation.tenant_id !== c.var.auth.tenantId) {
      throw new ProblemError({
        status: 422,
        code: 'seal_not_verified',
        detail: failed.length > 0 ? `the packet does not verify: ${failed.join(', ')}` : 'the packet was sealed for another tenant',
        errors: [{ in: 'body', path: failed.length > 0 ? '/seal' : '/seal/attestation/tenant_id', message: failed.length > 0 ? `failed checks: ${failed.join(', ')}` : 'not this tenant' }],
        extra: { failed_checks: failed },
      });
    }
    // The stored record's proof only when it is this very attestation, never another record's.
    const row = await deps.store.evidence.findRecord(c.var.auth.tenantId, body.action_key);
    const inclusionProof = row?.attestationHash === body.seal.attestation_hash ? await proofFile(row) : undefined;
    const record: PackageRecord = {
      actionKey: body.action_key,
      bundle: buildBundle(body, body.seal, publicKeyOf(body.seal.key_id)),
      ...(inclusionProof ? { inclusionProof } : {}),
    };
    return packageAnswer(c.req.header('accept'), [record], 'seal-bundle');
  });

  const batch = defineRoute({
    method: 'post',
    path: '/evidence-packets/seal-bundle/batch',
    operationId: 'createSealBundleBatch',
    tags: ['evidence'],
    auth: deps.auth.key('records:read'),
    summary: 'Seal bundles for many stored records, all or nothing, with MANIFEST.json (nothing stored, nothing metered)',
    description:
      `A wrapped {"action_keys": [...]} (1 to ${BATCH_BUNDLE_MAX}; a bare array is refused with 422). Any unknown action_key fails the whole call ` +
      'with 404 listing every missing key. Per record a folder <vertical>/<action-type>/<id> with its 4 files, and inclusion-proof.json (with the epoch’s ' +
      'timestamps and witness cosignatures) once the record’s epoch has closed; MANIFEST.json and SHA256SUMS at the root. ' +
      'JSON by default; Accept: application/x-tar or application/zip for an archive.',
    request: { body: jsonBody(BatchRequest) },
    responses: {
      200: { description: 'The package', content: { ...jsonContent(PackageSchema, '').content, ...archiveContent } },
      404: problemContent('Unknown action keys: missing_action_keys lists every one of them; nothing was bundled'),
    },
  });
  router.openapi(batch, async (c) => {
    const keys = [...new Set(c.req.valid('json').action_keys)];
    const tenantId = c.var.auth.tenantId;
    const rows: (SealedRecordRow | undefined)[] = [];
    for (const k of keys) rows.push(await deps.store.evidence.findRecord(tenantId, k));
    const missing = keys.filter((_, i) => !rows[i]);
    if (missing.length > 0) {
      throw new ProblemError({
        status: 404,
        code: 'not_found',
        detail: `${missing.length} of ${keys.length} action_keys are not sealed records of this tenant; nothing was bundled`,
        extra: { missing_action_keys: missing },
      });
    }
    const records: PackageRecord[] = [];
    const epochs = new Map<number, Promise<object>>();
    for (const row of rows) {
      const v = viewRecord(row!);
      const inclusionProof = await proofFile(row, epochs);
      records.push({ actionKey: row!.actionKey, bundle: buildBundle(v.fields, v.packet.seal, publicKeyOf(row!.keyId)), ...(inclusionProof ? { inclusionProof } : {}) });
    }
    return packageAnswer(c.req.header('accept'), records, 'seal-bundles');
  });

  return router;
}

function packageAnswer(accept: string | undefined, records: PackageRecord[], name: string): Response {
  const pkg = bundlePackage(records);
  const kind = archiveKindFor(accept);
  if (kind) return archiveResponse(kind, pkg.entries, name);
  return new Response(JSON.stringify(pkg.json), { status: 200, headers: { 'content-type': 'application/json', vary: 'accept' } });
}

function tryJson(bytes: Uint8Array | undefined): Record<string, unknown> | undefined {
  try {
    const v: unknown = bytes && JSON.parse(new TextDecoder().decode(bytes));
    return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
