/**
 * Policy versions and their receipts (interface-spec "What the service does" 3: "a history of
 * policy receipts"; "Tenant policy (query policy_pack)": PUT /tenant/policy,
 * GET /tenant/policy/receipts).
 *
 * A PUT appends version n+1 and seals a policy receipt for it through the one sealing pipeline
 * (evidence/sealer.ts): kind policy, decision null, status recorded, payload_hash = the
 * document digest, policy_digest = the same digest, manifest_digest = the pack's, and the
 * version, previous digest and actor committed in the attestation, so the signed receipts
 * chain the versions. The version row is written in the seal's onSealed, inside the seal's
 * transaction: a version never exists without its receipt, nor the reverse. Not metered.
 *
 * A PUT whose normalised document equals the current version's (same digest) is a no-op: it
 * answers the current version, seals nothing and makes no version. PUT is idempotent (RFC 9110
 * §9.2.2), a retried PUT must not grow the history, and the history then lists only changes.
 * Putting back an older document after a change is a change, so it makes a new version.
 *
 * Concurrent PUTs for one tenant and pack: each seal expects the version it read to still be
 * current when its transaction runs; if another committed first, it re-reads and seals again,
 * so versions stay 1, 2, 3, … with each previous_digest naming the version actually replaced.
 */
import { canonicalize } from '../../shared/canonical-json.ts';
import type { EvidencePacket, VerifyRequest } from '../../shared/types.ts';
import type { AuthContext } from '../core/auth.ts';
import { ProblemError } from '../core/errors.ts';
import { viewRecord } from '../evidence/record-view.ts';
import type { SealPipeline } from '../evidence/sealer.ts';
import type { EvidenceStore } from '../evidence/store.ts';
import type { GatePack } from '../packs/registry.ts';
import type { PolicyDocument } from './document.ts';
import { forgetOverlay } from './overlay.ts';
import type { PolicyStore, PolicyVersionRow } from './store.ts';

/** The middle segment of a policy receipt's action_key: <vertical>:policy:<ULID>. */
export const POLICY_RECEIPT_ACTION_TYPE = 'policy';

/** Seal attempts when concurrent PUTs keep landing first; more than this is a 409. */
const MAX_ATTEMPTS = 8;

export interface PolicyVersionDeps {
  sealer: SealPipeline;
  policy: PolicyStore;
  evidence: EvidenceStore;
}

export interface PolicyReceipt {
  action_key: string;
  href: string;
  evidence_packet: EvidencePacket;
  verify_request: VerifyRequest;
}

export interface PolicyVersionView {
  policy_pack: string;
  version: number;
  digest: string;
  previous_digest: string | null;
  actor: string;
  created_at: string;
  document: PolicyDocument;
  receipt: PolicyReceipt;
}

class StalePolicyVersion extends Error {}

/** Appends a version unless the document is the current one; `changed` says which happened. */
export async function putPolicy(
  deps: PolicyVersionDeps,
  auth: AuthContext,
  pack: GatePack,
  document: PolicyDocument,
  digest: string,
): Promise<{ changed: boolean; row: PolicyVersionRow }> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const current = await deps.policy.current(auth.tenantId, pack.manifest.name);
    if (current?.digest === digest) return { changed: false, row: current };
    try {
      return { changed: true, row: await sealVersion(deps, auth, pack, document, digest, current) };
    } catch (err) {
      if (!(err instanceof StalePolicyVersion)) throw err;
    }
  }
  throw ProblemError.conflict('policy_version_conflict', `other changes to the ${pack.manifest.name} policy kept landing first; read GET /tenant/policy/options and retry`);
}

async function sealVersion(
  deps: PolicyVersionDeps,
  auth: AuthContext,
  pack: GatePack,
  document: PolicyDocument,
  digest: string,
  current: PolicyVersionRow | undefined,
): Promise<PolicyVersionRow> {
  const m = pack.manifest;
  const version = (current?.version ?? 0) + 1;
  const previousDigest = current?.digest ?? null;
  // Committed in the attestation and returned with GET /v1/records: ids and digests only.
  const facts = { policy_pack: m.name, version, digest, previous_digest: previousDigest, actor: auth.keyId };
  let row: PolicyVersionRow | undefined;
  await deps.sealer.seal({
    auth,
    vertical: m.vertical,
    actionType: POLICY_RECEIPT_ACTION_TYPE,
    pack: m.name,
    kind: 'policy',
    decision: null,
    status: 'recorded',
    reviewRoute: null,
    payloadHash: digest,
    manifestDigest: pack.digest,
    policyDigest: digest,
    context: facts,
    details: facts,
    // Policy changes are not sealed actions (interface-spec "What the service does" 9).
    metering: { counted: false, credits: 0 },
    async onSealed(record, tx) {
      if (((await tx.policy.current(auth.tenantId, m.name))?.version ?? 0) !== version - 1) throw new StalePolicyVersion();
      row = {
        tenantId: auth.tenantId,
        policyPack: m.name,
        version,
        digest,
        previousDigest,
        document: canonicalize(document),
        actor: auth.keyId,
        createdAt: record.recordedAt,
        actionKey: record.actionKey,
      };
      // Another companion may have appended this version since the check above.
      if (!(await tx.policy.insertVersion(row))) throw new StalePolicyVersion();
      // The cache belongs to the outside store the gate reads through, not to this tx.
      forgetOverlay(deps.policy, auth.tenantId, m.name);
    },
    respond: { template: null },
  });
  return row!;
}

/** A stored version with its receipt, re-derived from the sealed record (evidence/record-view.ts). */
export async function versionView(evidence: EvidenceStore, row: PolicyVersionRow): Promise<PolicyVersionView> {
  const record = await evidence.findRecord(row.tenantId, row.actionKey);
  // The row and its receipt commit in one transaction (onSealed above); one without the other is corruption.
  if (!record) throw new Error(`policy version ${row.policyPack}/${row.version} has no sealed receipt ${row.actionKey}`);
  const v = viewRecord(record);
  return {
    policy_pack: row.policyPack,
    version: row.version,
    digest: row.digest,
    previous_digest: row.previousDigest,
    actor: row.actor,
    created_at: row.createdAt,
    document: JSON.parse(row.document) as PolicyDocument,
    receipt: { action_key: row.actionKey, href: v.fields.href, evidence_packet: v.packet, verify_request: v.verifyRequest },
  };
}
