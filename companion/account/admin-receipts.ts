/**
 * Admin receipts: every change to people, service accounts and API keys is sealed like a policy
 * receipt (policy/versions.ts) through the one sealing pipeline: kind policy, status recorded,
 * decision null, not metered, action_key account:admin:<ULID>. The attestation commits the
 * actor principal, the subject (person, service account or key id), the action, and the
 * before/after capability digests: SHA-256 of the JCS (RFC 8785) bytes of the sorted capability
 * list, so a later reader can prove which set was in force without the receipt listing it. The
 * receipt's payload_hash is the SHA-256 of the JCS of those facts. The change itself is applied
 * in the seal's transaction (onSealed), with the index row GET /account/audit lists: a change
 * never commits without its receipt, nor the reverse. Verifiable with POST /v1/verify or the
 * offline verifier like every sealed record.
 */
import { createHash } from 'node:crypto';
import { canonicalize } from '../../shared/canonical-json.ts';
import type { AuthContext, Principal } from '../core/auth.ts';
import type { SealPipeline } from '../evidence/sealer.ts';
import type { Tx } from '../core/stores.ts';

/** The first two segments of an admin receipt's action_key. */
export const ADMIN_RECEIPT_VERTICAL = 'account';
export const ADMIN_RECEIPT_ACTION_TYPE = 'admin';

export const ADMIN_ACTIONS = [
  'person.added',
  'person.changed',
  'person.deactivated',
  'person.reactivated',
  'service_account.created',
  'service_account.changed',
  'service_account.deactivated',
  'service_account.reactivated',
  'key.created',
  'key.rotated',
  'key.revoked',
  'identity.linked',
  'identity.unlinked',
  // Who may sign in to the console: the tenant's OpenID Connect provider (companion/sign-in/).
  'identity_provider.set',
  'identity_provider.removed',
] as const;
export type AdminAction = (typeof ADMIN_ACTIONS)[number];

export type SubjectKind = 'person' | 'service_account' | 'key' | 'identity_provider';

export interface AdminChange {
  action: AdminAction;
  subjectId: string;
  subjectKind: SubjectKind;
  /** The subject's capabilities before the change; null when it did not exist. */
  before: readonly string[] | null;
  /** After the change; null when it no longer acts (revoked key). */
  after: readonly string[] | null;
  /** Ids only (a rotated key's successor, a key's principal); never secrets. */
  related?: Record<string, string>;
}

/** SHA-256 hex of the JCS of the sorted, de-duplicated capability list; null for none. */
export function capabilityDigest(capabilities: readonly string[] | null): string | null {
  if (capabilities === null) return null;
  const sorted = [...new Set(capabilities)].sort();
  return createHash('sha256').update(canonicalize(sorted), 'utf8').digest('hex');
}

export interface AdminReceiptDeps {
  sealer: SealPipeline;
}

/**
 * Seals the change and runs `apply` in the seal's transaction; whatever `apply` throws (a
 * conflict found under the lock) refuses the change and seals nothing. Returns the action key.
 */
export async function sealAdminChange<T>(
  deps: AdminReceiptDeps,
  auth: AuthContext & { principal: Principal },
  change: AdminChange,
  apply: (tx: Tx, at: string) => Promise<T>,
): Promise<{ actionKey: string; result: T; recordedAt: string }> {
  const facts = {
    action: change.action,
    actor: { id: auth.principal.id, kind: auth.principal.kind, display_name: auth.principal.displayName },
    credential_id: auth.credentialId ?? auth.keyId,
    subject: { id: change.subjectId, kind: change.subjectKind },
    capabilities_before_sha256: capabilityDigest(change.before),
    capabilities_after_sha256: capabilityDigest(change.after),
    ...(change.related ? { related: change.related } : {}),
  };
  const payloadHash = createHash('sha256').update(canonicalize(facts), 'utf8').digest('hex');
  let outcome: { actionKey: string; result: T; recordedAt: string } | undefined;
  await deps.sealer.seal({
    auth,
    vertical: ADMIN_RECEIPT_VERTICAL,
    actionType: ADMIN_RECEIPT_ACTION_TYPE,
    pack: ADMIN_RECEIPT_VERTICAL,
    kind: 'policy',
    decision: null,
    status: 'recorded',
    reviewRoute: null,
    payloadHash,
    manifestDigest: null,
    policyDigest: null,
    context: facts,
    details: facts,
    // Account changes are not sealed actions (interface-spec "What the service does" 9).
    metering: { counted: false, credits: 0 },
    async onSealed(record, tx) {
      const result = await apply(tx, record.recordedAt);
      await tx.account.insertAdminReceipt({
        actionKey: record.actionKey,
        tenantId: auth.tenantId,
        action: change.action,
        actorId: auth.principal.id,
        subjectId: change.subjectId,
        createdAt: record.recordedAt,
      });
      outcome = { actionKey: record.actionKey, result, recordedAt: record.recordedAt };
    },
    respond: { template: null },
  });
  return outcome!;
}
