/**
 * One gate request, from validated body to sealed decision (interface-spec "Gate response",
 * States and transitions; DESIGN.md §3).
 *
 * Raw-safe by construction: the body goes only into payloadHash and the byte count for metering.
 * Nothing read from proposed_action, redacted_text, source_key or the context values reaches
 * `details` or `context`; those carry the decision's ids and the pack's fixed texts only.
 */
import { payloadCommitment } from '../../shared/attestation.ts';
import type { AuthContext } from '../core/auth.ts';
import { SEALED } from '../evidence/sealed-response.ts';
import type { SealOutcome, SealPipeline, SealRequest } from '../evidence/sealer.ts';
import { estimateCredits } from '../metering/credits.ts';
import type { GatePack } from '../packs/registry.ts';
import { decide, gateInput } from './decide.ts';
import type { PolicyOverlay } from '../policy/policy-overlay.ts';

/** One scope for /v1/gate and its /{vertical}/proposed-action aliases: a retry may use either. */
export const GATE_IDEMPOTENCY_SCOPE = 'POST /v1/gate';

/** A validated gate body (gate/schema.ts); the context sits under law_context or context. */
export type GateBody = { action_type?: string | undefined; idempotency_key?: string | undefined } & Record<string, unknown>;

/** What sealing a gate decision needs: the pipeline, and how long a paused action waits for review. */
export interface GateSealDeps {
  sealer: SealPipeline;
  config: { reviewTimeoutSeconds: number };
  /** Ask for the answer as JSON text (evidence/sealer.ts SealRequest answerAsText): the hot path writes it as is. */
  answerAsText?: boolean;
}

export function sealGate(deps: GateSealDeps, auth: AuthContext, pack: GatePack, body: GateBody, overlay: PolicyOverlay): Promise<SealOutcome> {
  const m = pack.manifest;
  const { hash, bytes } = payloadCommitment(body);
  const idempotencyKey = body.idempotency_key;
  // interface-spec Limits "Credit basis": tokens estimated from the size of the payload, the
  // same JCS bytes payload_hash commits to (metering/credits.ts states the rule).
  const credits = estimateCredits(bytes.length, m.rate).credits;
  const d = decide(pack, gateInput(pack, body), overlay);

  const request: SealRequest = {
    auth,
    vertical: m.vertical,
    actionType: d.actionType,
    pack: m.name,
    kind: 'gate',
    decision: d.decision,
    status: 'sealed',
    reviewRoute: d.reviewRoute,
    payloadHash: hash,
    manifestDigest: d.manifestDigest,
    policyDigest: d.policyDigest,
    context: d.context,
    details: { action_type: d.actionType, next_step: d.nextStep, reasons: d.reasons, catalog_refs: d.catalogRefs },
    metering: { counted: true, credits },
    // interface-spec "Gate response": these fields, and `reasons` (the deciding rule ids with
    // their employee-safe explanations).
    respond: {
      template: {
        decision: d.decision,
        action_key: SEALED.actionKey,
        evidence_packet: SEALED.packet,
        payload_hash: hash,
        review_route: d.reviewRoute,
        verify_request: SEALED.verifyRequest,
        next_step: d.nextStep,
        reasons: d.reasons,
        catalog_refs: d.catalogRefs,
      },
    },
  };
  if (idempotencyKey !== undefined) request.idempotency = { scope: GATE_IDEMPOTENCY_SCOPE, key: idempotencyKey, requestHash: hash };
  // interface-spec States and transitions: a needs_review action pauses (its review item is
  // written by the reviews participant in the seal's transaction).
  if (d.decision === 'needs_review') {
    request.pauseForReview = {
      actionType: d.actionType,
      nextStep: d.nextStep,
      windowSeconds: deps.config.reviewTimeoutSeconds,
      // The rule of the policy version this seal commits as policy_digest (reviews/rules.ts).
      rule: overlay.review_rules[d.actionType] ?? null,
    };
  }
  if (deps.answerAsText) request.answerAsText = true;
  return deps.sealer.seal(request);
}
