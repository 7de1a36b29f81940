/**
 * Verifying a law mirror seal (interface-spec "Review request": "A client can verify the law
 * mirror seal"), as named steps, each always reported:
 *
 *   mirror_rubric      mirror_version is published and mirror_digest = SHA-256(JCS(rubric))
 *   mirror_grades      exactly the five keys, each PASS, PARTIAL, FAIL or NA
 *   mirror_commitment  the signed review attestation commits this exact tuple (context.mirror),
 *                      the reviewed action_key, and is the law review receipt it claims to be;
 *                      a seal that names who decided (principal, asserted_by) names exactly
 *                      what the attestation commits (context.principal, context.asserted_by)
 *   + the evidence checks of shared/verify.ts on the receipt (signature, hashes, key)
 *
 * Everything here is recomputed from the posted object, the published rubric and the trusted
 * keys; nothing is looked up in the database, so an offline verifier with the rubric and the
 * JWKS reaches the same answer.
 *
 * The endpoint is public, so a detail names keys and expectations and quotes only the bounded
 * tuple fields (core/strict-json.ts and the request schema cap them), never a value read from
 * the posted seal or grades: an answer is never larger than the question's bounded parts.
 */
import { isRecord } from '../../shared/attestation.ts';
import { canonicalize } from '../../shared/canonical-json.ts';
import type { TrustedKeySet } from '../../shared/trusted-keys.ts';
import { failedChecks, verifyEvidence } from '../../shared/verify.ts';
import type { VerifyResult } from '../../shared/types.ts';
import { MIRROR_GRADES, MIRROR_KEYS, publishedRubric } from './mirror.ts';

export type MirrorCheckName = 'mirror_rubric' | 'mirror_grades' | 'mirror_commitment';

export interface MirrorCheck {
  name: MirrorCheckName;
  ok: boolean;
  detail: string;
}

export interface MirrorSealInput {
  mirror_version: string;
  mirror_digest: string;
  mirror_grades: Record<string, unknown>;
  reviewed_action_key: string;
  review_action_key: string;
  /** Who decided, as the seal says; when posted, each must equal the signed context's. */
  principal?: Record<string, unknown> | null;
  asserted_by?: Record<string, unknown> | null;
  verify_request: { action_key: string; seal: Record<string, unknown> } & Record<string, unknown>;
}

export interface MirrorVerifyResult {
  verified: boolean;
  mirror_version: string;
  mirror_digest: string;
  review_action_key: string;
  reviewed_action_key: string;
  mirror_checks: MirrorCheck[];
  evidence: VerifyResult;
  failed_checks: string[];
}

export async function verifyMirrorSeal(input: MirrorSealInput, keys: TrustedKeySet): Promise<MirrorVerifyResult> {
  const mirrorChecks = [checkRubric(input), checkGrades(input.mirror_grades), checkCommitment(input)];
  const evidence = await verifyEvidence(input.verify_request, keys);
  const failed = [...mirrorChecks.filter((c) => !c.ok).map((c) => c.name), ...failedChecks(evidence)];
  return {
    verified: failed.length === 0,
    mirror_version: input.mirror_version,
    mirror_digest: input.mirror_digest,
    review_action_key: input.review_action_key,
    reviewed_action_key: input.reviewed_action_key,
    mirror_checks: mirrorChecks,
    evidence,
    failed_checks: failed,
  };
}

function checkRubric(input: MirrorSealInput): MirrorCheck {
  const published = publishedRubric(input.mirror_version);
  if (!published) return fail('mirror_rubric', `mirror_version ${JSON.stringify(input.mirror_version)} is not a published rubric (GET /law/grading-mirror)`);
  if (published.digest !== input.mirror_digest) {
    return fail('mirror_rubric', `SHA-256 of the JCS rubric ${input.mirror_version} is ${published.digest}, the seal says ${input.mirror_digest}`);
  }
  return pass('mirror_rubric', `mirror_digest is SHA-256 of the JCS bytes of published rubric ${input.mirror_version}`);
}

function checkGrades(grades: Record<string, unknown>): MirrorCheck {
  const problems: string[] = [];
  for (const k of MIRROR_KEYS) {
    if (!(k in grades)) problems.push(`${k} is missing`);
    else if (!(MIRROR_GRADES as readonly unknown[]).includes(grades[k])) problems.push(`${k} is not a grade: expected ${MIRROR_GRADES.join(', ')}`);
  }
  for (const k of Object.keys(grades)) if (!(MIRROR_KEYS as readonly string[]).includes(k)) problems.push(`${k} is not a mirror key`);
  return problems.length > 0 ? fail('mirror_grades', problems.join('; ')) : pass('mirror_grades', 'exactly the five mirror keys, each a valid grade');
}

function checkCommitment(input: MirrorSealInput): MirrorCheck {
  const att = input.verify_request.seal.attestation;
  if (!isRecord(att)) return fail('mirror_commitment', 'not checked: the seal carries no attestation object');
  const problems: string[] = [];
  if (att.kind !== 'review') problems.push('attestation kind is not "review"');
  if (att.pack !== 'law') problems.push('attestation pack is not "law"');
  if (att.action_key !== input.review_action_key || input.verify_request.action_key !== input.review_action_key) {
    problems.push(`the receipt is not ${JSON.stringify(input.review_action_key)}, the review_action_key`);
  }
  const context = isRecord(att.context) ? att.context : {};
  if (context.reviewed_action_key !== input.reviewed_action_key) {
    problems.push(`the receipt did not review ${JSON.stringify(input.reviewed_action_key)}, the reviewed_action_key`);
  }
  const claimed = { mirror_version: input.mirror_version, mirror_digest: input.mirror_digest, mirror_grades: input.mirror_grades };
  if (!sameJson(context.mirror, claimed)) problems.push('the signed context.mirror differs from the posted mirror_version, mirror_digest and mirror_grades');
  // A receipt decided as itself has no asserted_by in its context: null on the seal.
  if (input.principal !== undefined && !sameJson(context.principal ?? null, input.principal)) problems.push('the signed context.principal differs from the posted principal');
  if (input.asserted_by !== undefined && !sameJson(context.asserted_by ?? null, input.asserted_by)) problems.push('the signed context.asserted_by differs from the posted asserted_by');
  return problems.length > 0
    ? fail('mirror_commitment', problems.join('; '))
    : pass('mirror_commitment', 'the law review attestation commits exactly this tuple for the reviewed action');
}

/** Equal as JSON values: same JCS text (RFC 8785), so member order never matters. */
function sameJson(a: unknown, b: unknown): boolean {
  try {
    return a !== undefined && canonicalize(a) === canonicalize(b);
  } catch {
    return false;
  }
}

const pass = (name: MirrorCheckName, detail: string): MirrorCheck => ({ name, ok: true, detail });
const fail = (name: MirrorCheckName, detail: string): MirrorCheck => ({ name, ok: false, detail });
