/**
 * The background gate client: builds POST /v1/gate from a held action
 * and the admin's gate profile, checks that the answer is the sealed decision for exactly this
 * request, verifies the seal against pinned keys, logs it, and tells the page what to do.
 *
 * Only a verified allow releases an action. Everything the companion cannot answer, or answers
 * unusably, fails closed unless the admin chose fail-open, and then it is logged as an incident.
 */
import { payloadCommitment } from '../../../shared/attestation.ts';
import { utf8 } from '../../../shared/encoding.ts';
import { sha256Hex } from '../../../shared/hash.ts';
import type { SiteAdapter } from '../adapters/definitions.ts';
import type { GateDecision, IncidentEntry } from '../db.ts';
import type { DecisionReason, FileCommitment, GateOutcome, GateSubmit, Verification } from '../messages.ts';
import type { GateProfile, Settings } from '../settings.ts';
import { isRecord } from '../../../shared/attestation.ts';
import { CompanionError } from './companion-api.ts';
import type { CompanionApi } from './companion-api.ts';
import type { DecisionLog } from './decision-log.ts';
import { verifySealed } from './evidence.ts';
import { shareReviewContext } from './review-context.ts';
import type { KeyPins } from './key-pins.ts';

/** interface-spec "Gate request": redacted_text and proposed_action are bounded by the companion. */
export const REDACTED_TEXT_MAX_CHARS = 32_000;
const DECISIONS: readonly GateDecision[] = ['allow', 'needs_review', 'blocked'];
/** What content/ids.ts newClientNonce makes: 16 random bytes as unpadded base64url. */
export const CLIENT_NONCE = /^[A-Za-z0-9_-]{22}$/;

export interface GateClientDeps {
  api: CompanionApi;
  pins: KeyPins;
  log: DecisionLog;
  settings: Settings;
  now: () => Date;
}

/**
 * The body of POST /v1/gate. proposed_action names the act (where the text goes: an external AI
 * tool or an internal one, which the law engine reads as an external send or not) and commits
 * to the raw text by its SHA-256, so the employee can re-prove what was sent; the raw text
 * itself never leaves the tab. The gate reads the content from redacted_text.
 * The pack's context field is law_context for law and context for the others (interface-spec
 * "Gate request"); tool_id defaults to the adapter's. client_nonce is the attempt's own, so a
 * retry of the attempt (same idempotency_key) sends the same payload.
 */
export function gateRequestBody(submit: GateSubmit, adapter: SiteAdapter, profile: GateProfile, host: string): Record<string, unknown> {
  const contextField = profile.pack === 'law' ? 'law_context' : 'context';
  const tool = `${adapter.external ? 'the external AI tool' : 'the internal tool'} ${adapter.label}`;
  const actionType = submit.files ? (profile.fileActionType ?? profile.actionType) : profile.actionType;
  return {
    pack: profile.pack,
    proposed_action: submit.files
      ? `Attach ${submit.files.length === 1 ? 'a file' : `${submit.files.length} files`} to ${tool}: ${submit.files.map(describeFile).join('; ')}`
      : `Send a prompt to ${tool} (${submit.chars} characters, SHA-256 ${submit.text_sha256})`,
    ...(actionType ? { action_type: actionType } : {}),
    [contextField]: { tool_id: adapter.toolId, ...profile.context },
    surface: adapter.id,
    source_key: sourceKey(adapter, host, submit.conversation),
    redacted_text: submit.redacted_text.slice(0, REDACTED_TEXT_MAX_CHARS),
    // Committed in payload_hash, so the sealed hash cannot be confirmed by hashing a guessed
    // body; never stored by the companion, kept in this browser's decision log.
    client_nonce: submit.client_nonce,
    idempotency_key: `ag-${submit.attempt_id}`,
  };
}

/** Metadata and commitments only: media type, size, SHA-256 of the bytes and of the name. */
function describeFile(f: FileCommitment): string {
  return `${f.media_type || 'unknown type'}, ${f.size} bytes, SHA-256 ${f.sha256}, name SHA-256 ${f.name_sha256}`;
}

/** Stable per conversation, and opaque: the conversation URL is not sent, only its hash. */
export function sourceKey(adapter: SiteAdapter, host: string, conversation: string): string {
  return `${adapter.id}:${sha256Hex(utf8(`${host}|${conversation}`)).slice(0, 32)}`;
}

export async function submitGate(deps: GateClientDeps, submit: GateSubmit, adapter: SiteAdapter, host: string): Promise<GateOutcome> {
  const body = gateRequestBody(submit, adapter, deps.settings.gateProfile, host);
  let answer: unknown;
  try {
    answer = await deps.api.post('/v1/gate', body);
  } catch (e) {
    if (!(e instanceof CompanionError)) throw e;
    return failure(deps, adapter, host, e.kind, describeFailure(e), mayFailOpen(e));
  }

  const checked = readGateAnswer(answer, payloadCommitment(body).hash);
  if (!checked.ok) return failure(deps, adapter, host, 'invalid-answer', `The gate's answer could not be used: ${checked.problem}. Nothing was sent.`, true);
  const a = checked.value;

  const { verification, attestation } = await verifySealed(deps.pins, a.verify_request);
  const kindOk = attestation === null || attestation.kind === 'gate';
  if (!kindOk) verification.failed_checks.push('kind');
  const verified = verification.verified && kindOk;

  // Only a verified allow is released; its release is claimed for this attempt as it is logged.
  const releaseTo = a.decision === 'allow' && verified ? submit.attempt_id : null;
  const logged = deps.log.recordDecision({
    action_key: a.action_key,
    decision: a.decision,
    site: adapter.id,
    host,
    time: deps.now().toISOString(),
    recorded_at: typeof attestation?.recorded_at === 'string' ? attestation.recorded_at : '',
    verified,
    key_status: verification.key_status,
    dev_key: verification.dev_key,
    failed_checks: verification.failed_checks,
    review_route: a.review_route,
    redactions: submit.redactions,
    review_status: a.decision === 'needs_review' ? 'pending' : null,
    reviewer: null,
    review_receipt_key: null,
    review_verified: null,
    review_time: null,
    released_attempt: null,
    client_nonce: submit.client_nonce,
  }, releaseTo);
  const v: Verification = { ...verification, verified };
  const reasons = sealedReasons(a.reasons, attestation);

  switch (a.decision) {
    case 'allow':
      if (!verified) {
        await logged;
        const why = `The gate allowed this, but its seal did not verify (${v.failed_checks.join(', ')}${v.key_alarm ? '; a pinned signing key changed' : ''}). Nothing was sent.`;
        return failure(deps, adapter, host, 'unverified', why, !v.key_alarm);
      }
      // The release goes first; the log write follows it (the page is not kept waiting for
      // IndexedDB). No other attempt can hold this release: the answer's payload_hash binds it
      // to this attempt's idempotency_key, so the claim can only ever go to this attempt.
      void logged.catch((e: unknown) => console.warn('[action-gate] decision log:', e));
      return { action: 'release', decision: 'allow', action_key: a.action_key, next_step: a.next_step, reasons, verification: v };
    case 'needs_review':
      await logged;
      // Sealed to the reviewers' devices when the tenant policy asks (./review-context.ts); best effort, never awaited by the page.
      if (verified) void shareReviewContext(deps.api, a, body, submit.files, submit.file_names).catch((e: unknown) => console.warn('[action-gate] review context:', e));
      return { action: 'review', decision: 'needs_review', action_key: a.action_key, review_route: a.review_route, next_step: a.next_step, reasons, verification: v };
    case 'blocked':
      await logged;
      return { action: 'block', decision: 'blocked', action_key: a.action_key, next_step: a.next_step, reasons, verification: v };
  }
}

interface GateAnswer {
  decision: GateDecision;
  action_key: string;
  review_route: string | null;
  next_step: string;
  reasons: DecisionReason[];
  payload_hash: string;
  verify_request: Record<string, unknown>;
}

/**
 * The answer's reasons whose rule the verified seal commits (attestation context.findings):
 * the explanations are not signed, the rule ids are, so a reason for a rule the seal does not
 * name is dropped rather than shown.
 */
export function sealedReasons(reasons: readonly DecisionReason[], attestation: Record<string, unknown> | null): DecisionReason[] {
  const context = attestation && isRecord(attestation.context) ? attestation.context : null;
  const findings = context && Array.isArray(context.findings) ? context.findings : [];
  const sealed = new Set(findings.filter(isRecord).map((f) => f.rule));
  return reasons.filter((r) => sealed.has(r.rule));
}

export function readReasons(value: unknown): DecisionReason[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter(isRecord)
    .filter((r) => typeof r.rule === 'string' && typeof r.explanation === 'string')
    .map((r) => ({ rule: r.rule as string, explanation: (r.explanation as string).slice(0, 500) }));
}

/**
 * The answer must be the sealed decision for this request: the fields the page acts on equal
 * the ones the seal covers (verify_request), and payload_hash equals the hash of the body we
 * sent (DESIGN.md §3), so an answer for another request cannot be replayed here.
 */
export function readGateAnswer(answer: unknown, expectedPayloadHash: string): { ok: true; value: GateAnswer } | { ok: false; problem: string } {
  if (!isRecord(answer)) return { ok: false, problem: 'expected a JSON object' };
  const problems: string[] = [];
  const { decision, action_key, review_route, next_step, payload_hash, verify_request } = answer;
  if (!DECISIONS.includes(decision as GateDecision)) problems.push(`decision: expected allow, needs_review or blocked, got ${JSON.stringify(decision)}`);
  if (typeof action_key !== 'string' || action_key === '') problems.push('action_key: expected a string');
  if (review_route !== null && typeof review_route !== 'string') problems.push('review_route: expected a string or null');
  if (typeof next_step !== 'string') problems.push('next_step: expected a string');
  if (payload_hash !== expectedPayloadHash) problems.push(`payload_hash: expected ${expectedPayloadHash} (this request), got ${JSON.stringify(payload_hash)}`);
  if (!isRecord(verify_request)) {
    problems.push('verify_request: expected an object');
  } else {
    for (const [k, v] of [['action_key', action_key], ['decision', decision], ['review_route', review_route], ['payload_hash', payload_hash]] as const) {
      if (verify_request[k] !== v) problems.push(`verify_request.${k} differs from the answer's ${k}`);
    }
  }
  if (problems.length > 0) return { ok: false, problem: problems.join('; ') };
  return {
    ok: true,
    value: {
      decision: decision as GateDecision,
      action_key: action_key as string,
      review_route: review_route as string | null,
      next_step: next_step as string,
      // Older companions answer without reasons; the dialog then shows next_step alone.
      reasons: readReasons(answer.reasons),
      payload_hash: payload_hash as string,
      verify_request: verify_request as Record<string, unknown>,
    },
  };
}

async function failure(
  deps: GateClientDeps,
  adapter: SiteAdapter,
  host: string,
  kind: IncidentEntry['kind'],
  message: string,
  mayFailOpen: boolean,
): Promise<GateOutcome> {
  const open = mayFailOpen && deps.settings.failMode === 'open';
  await deps.log.recordIncident({ time: deps.now().toISOString(), site: adapter.id, host, kind, detail: message, fail_mode: deps.settings.failMode, released: open });
  if (open) return { action: 'fail-open', reason: kind, message: `${message.replace(/ Nothing was sent\.$/, '')} Sent without a gate decision: your administrator allows this (fail-open), and it was logged.` };
  return { action: 'fail-closed', reason: kind, message };
}

/**
 * Fail-open covers "companion unreachable or an invalid answer", and a
 * companion error (5xx). A missing setup, a refused key or a refused request is an answer about
 * this extension, not an outage: it always fails closed.
 */
function mayFailOpen(e: CompanionError): boolean {
  return e.kind === 'unreachable' || e.kind === 'invalid-answer' || (e.kind === 'http-error' && (e.status ?? 0) >= 500);
}

function describeFailure(e: CompanionError): string {
  switch (e.kind) {
    case 'not-configured':
      return `${e.message} Nothing was sent.`;
    case 'unreachable':
      return `Action Gate could not reach your organisation's gate. ${e.message} Nothing was sent; your text is still in the composer.`;
    case 'invalid-answer':
      return `The gate's answer could not be used: ${e.message} Nothing was sent.`;
    case 'http-error':
      if (e.status === 401 || e.status === 403) return `The gate refused this extension's API key (${e.status}). Nothing was sent; ask your administrator to check the extension's options.`;
      if (e.status === 503) return `The gate is unavailable for the moment. ${e.message} Nothing was sent; your text is still in the composer: try again shortly.`;
      return `The gate refused the request. ${e.message} Nothing was sent.`;
  }
}
