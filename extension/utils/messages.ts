/**
 * The one typed message table (STYLE.md, "Extensions", after refined-github): every message
 * the background understands, its request and its answer. Content scripts, the popup and the
 * options page call `sendMessage(type, payload)`; background/handlers.ts implements the table
 * and the compiler checks both sides against this interface.
 */
import type { AdapterId, SiteAdapter } from './adapters/definitions.ts';
import { browser } from './browser.ts';
import type { DecisionEntry, IncidentEntry, KeyAlarm, PinnedKey, ReviewReceiptEntry, ReviewStatus } from './db.ts';
import type { RedactionKind } from './redact.ts';
import type { IndependentEvidence } from '../../shared/independent-evidence.ts';
import type { PasteRule, Role } from './settings.ts';

export interface MessageTable {
  /** Content script: which adapter (if any) serves the sender's page, and the paste rules. Never the companion or key. */
  'site.config': (req: Record<string, never>) => SiteConfig | null;
  /** Content script: gate one held action. Retried with the same attempt_id. */
  'gate.submit': (req: GateSubmit) => GateOutcome;
  /** Content script: poll the review of a paused action (REVIEW-CONTRACT: GET /v1/records/{action_key}). */
  'review.status': (req: { action_key: string; attempt_id: string }) => ReviewState;
  /** Content script: what became of a release (sent, with its evidence, or not), for the log; sent after the release. */
  'release.report': (req: ReleaseReport) => { recorded: boolean };
  /** Content script: the employee withdrew a paused action; it is never released. */
  'review.withdraw': (req: { action_key: string }) => { withdrawn: true };
  /** Extension pages: connection state, usage and recent decisions. */
  'popup.state': (req: Record<string, never>) => PopupState;
  /** Options page: test a companion URL and key, saved or not. */
  'connection.test': (req: { companionUrl?: string; apiKey?: string }) => ConnectionReport;
  /** Options page: the gate packs and their action types, for the gate profile form. */
  'packs.list': (req: Record<string, never>) => PackSummary[];
  /** Reviewer: the tenant's pending items (GET /active-manifest). */
  'reviews.pending': (req: Record<string, never>) => PendingReview[];
  /** Reviewer: why a pending action needs review, from its sealed record (GET /v1/records/{action_key}). */
  'reviews.reasons': (req: { action_key: string }) => { reasons: DecisionReason[]; verified: boolean };
  /** Reviewer: the public law grading mirror (GET /law/grading-mirror), when offered. */
  'reviews.mirror': (req: Record<string, never>) => GradingMirror | null;
  /** Reviewer: post a decision (POST /v1/reviews) and verify its sealed receipt. */
  'reviews.decide': (req: ReviewDecisionRequest) => ReviewDecisionResult;
  /**
   * Reviewer: what the panel shows of a paused action from its sealed record (GET
   * /v1/records/{action_key}), with the payload_hash its verified seal commits.
   */
  'reviews.record': (req: { action_key: string }) => ReviewRecordView;
  /** Reviewer: the signed-in person's review keys (GET /account/me/review-keys); null for a credential that is not a person's. */
  'reviews.keys': (req: Record<string, never>) => ReviewKeyView[] | null;
  /** Reviewer: register this profile's public review key (POST /account/me/review-keys). Only the public key crosses. */
  'reviews.registerKey': (req: { public_key: string; label: string }) => ReviewKeyView;
  /** Reviewer: the ciphertext sealed to one of the person's device keys (GET /v1/reviews/{action_key}/context); opened in the popup. */
  'reviews.context': (req: { action_key: string; key_id: string }) => ReviewContextCiphertext;
  /** Extension pages: the independent evidence (timestamps, cosignatures) of recent records, checked here; null while a record's epoch is open. */
  'decisions.independent': (req: { action_keys: string[] }) => Record<string, IndependentEvidence | null>;
  /** Extension pages: the local log as JSON. */
  'log.export': (req: Record<string, never>) => LogExport;
}

export type MessageType = keyof MessageTable;
export type RequestOf<K extends MessageType> = Parameters<MessageTable[K]>[0];
export type ResponseOf<K extends MessageType> = ReturnType<MessageTable[K]>;

/** Messages that only the extension's own pages may send, never a content script. */
export const EXTENSION_PAGE_ONLY: ReadonlySet<MessageType> = new Set<MessageType>([
  'popup.state',
  'connection.test',
  'packs.list',
  'reviews.pending',
  'reviews.reasons',
  'reviews.mirror',
  'reviews.decide',
  'reviews.record',
  'reviews.keys',
  'reviews.registerKey',
  'reviews.context',
  'decisions.independent',
  'log.export',
]);

export interface SiteConfig {
  adapter: SiteAdapter;
  /** What a paste of flagged text does, per pattern class (the admin's choice). */
  pasteRules: Record<RedactionKind, PasteRule>;
}

/** A held action as the content script describes it: redacted, with a hash of the raw text. */
export interface GateSubmit {
  /** One per attempt; the gate's idempotency_key, so a retry never meters twice. */
  attempt_id: string;
  /**
   * One per attempt, like attempt_id: the gate request's client_nonce (16 random bytes,
   * unpadded base64url). A retry of the attempt sends the same one, so its payload_hash is the
   * same; it is kept in this browser's decision log only.
   */
  client_nonce: string;
  adapter: AdapterId;
  /** The conversation id from the URL, or the path; hashed into source_key. */
  conversation: string;
  redacted_text: string;
  redactions: Record<string, number>;
  /** SHA-256 hex of the raw composer text, committed in proposed_action. */
  text_sha256: string;
  chars: number;
  /**
   * Files attached to the AI tool (file input, drop, paste): the action is the attachment, and
   * the gate sees only these commitments, never a byte of the files. Absent for a prompt.
   */
  files?: FileCommitment[];
  /**
   * The files' names, in the order of `files`. Only ever sealed to the reviewers' device keys as
   * review context (HPKE, ./background/review-context.ts); never in the gate request, never kept.
   */
  file_names?: string[];
}

/** What the gate learns of an attached file: computed in the page, the bytes stay there. */
export interface FileCommitment {
  /** SHA-256 hex of the UTF-8 file name (the name itself may be confidential). */
  name_sha256: string;
  /** The media type the browser reports, e.g. application/pdf ('' when unknown). */
  media_type: string;
  size: number;
  /** SHA-256 hex of the file's bytes. */
  sha256: string;
}

export interface ReleaseReport {
  action_key: string;
  attempt_id: string;
  sent: boolean;
  /** What showed the page took it: the gated text left the composer, or the page made a request. */
  evidence: 'composer-cleared' | 'page-request' | 'handed-to-page' | null;
}

/** Why the gate decided as it did (Gate response `reasons`): a sealed rule id, explained for the employee. */
export interface DecisionReason {
  rule: string;
  explanation: string;
}

export interface Verification {
  verified: boolean;
  key_status: string;
  dev_key: boolean;
  failed_checks: string[];
  /** Set when a pinned key id was offered with different key material. */
  key_alarm: boolean;
}

export type GateOutcome =
  | { action: 'release'; decision: 'allow'; action_key: string; next_step: string; reasons: DecisionReason[]; verification: Verification }
  | {
      action: 'review';
      decision: 'needs_review';
      action_key: string;
      review_route: string | null;
      next_step: string;
      reasons: DecisionReason[];
      verification: Verification;
    }
  | { action: 'block'; decision: 'blocked'; action_key: string; next_step: string; reasons: DecisionReason[]; verification: Verification }
  | { action: 'fail-closed' | 'fail-open'; reason: IncidentEntry['kind']; message: string };

export interface ReviewState {
  /** 'unknown' while the companion has no review state for the action. */
  status: ReviewStatus | 'unknown';
  reviewer: string | null;
  /** True only for an approval whose sealed receipt verified: the action may be released. */
  release: boolean;
  verification: Verification | null;
  problem: string | null;
}

export interface PopupState {
  configured: boolean;
  role: Role;
  companionUrl: string;
  connection: { ok: boolean; detail: string };
  usage: Usage | null;
  recent: DecisionEntry[];
  /** Reviews this browser posted (reviewer role), newest first. */
  reviews: ReviewReceiptEntry[];
  incidents: IncidentEntry[];
  alarms: KeyAlarm[];
}

export interface Usage {
  tenant_id: string;
  tenant_kind: string;
  actions_used: number;
  cap: number | null;
  remaining: number | null;
  warning: string | null;
}

export interface ConnectionReport {
  ok: boolean;
  detail: string;
  tenant_id: string | null;
  usage: Usage | null;
  api_keys: { prefix: string; last_four: string; status: string }[];
  signing_keys: PinnedKey[];
  alarms: KeyAlarm[];
}

export interface PackSummary {
  name: string;
  context_field: string;
  action_types: { id: string; title: string; default_decision: string }[];
  default_action_type: string | null;
  required_fields: string[];
}

/** One item of GET /active-manifest (REVIEW-CONTRACT); raw-safe. */
export interface PendingReview {
  action_key: string;
  pack: string;
  action_type: string;
  decision: string;
  status: 'pending' | 'escalated';
  review_route: string | null;
  next_step: string;
  created_at: string;
  age_seconds: number;
  expires_at: string | null;
  /** Approvals sealed so far, and how many distinct reviewers the review rule needs (N of M). */
  approvals: number;
  approvals_required: number;
}

export const MIRROR_GRADE_KEYS = [
  'citation_support',
  'privilege_boundary',
  'supervision_route',
  'client_confidentiality',
  'filing_readiness',
] as const;
export type MirrorGradeKey = (typeof MIRROR_GRADE_KEYS)[number];
export const MIRROR_GRADES = ['PASS', 'PARTIAL', 'FAIL', 'NA'] as const;
export type MirrorGrade = (typeof MIRROR_GRADES)[number];

export interface GradingMirror {
  mirror_version: string;
  mirror_digest: string;
}

export interface ReviewDecisionRequest {
  pack: string;
  action_key: string;
  decision: 'approved' | 'rejected' | 'escalated';
  reason?: string;
  mirror_grades?: Record<MirrorGradeKey, MirrorGrade>;
}

/** What the reviewer's panel shows of a paused action, read from its sealed record. */
export interface ReviewRecordView {
  /** Reasons kept only for rules the verified seal commits. */
  reasons: DecisionReason[];
  /** The seal verified against pinned keys and names this action. */
  verified: boolean;
  /** payload_hash of the verified seal (null when it did not verify): what review context is bound to. */
  payload_hash: string | null;
  /** policy_digest the verified seal commits: the tenant policy version that decided. */
  policy_digest: string | null;
  /** The rule that paused it: the first sealed reason's rule id. */
  paused_by: string | null;
  /** The pack's claim boundary (GET /v1/packs), when the companion publishes one. */
  claim_boundary: string | null;
  /** Who has approved so far (the record's review.approved_by), by name or principal id. */
  approved_by: string[];
  /** Where the record is read: the console's page of this record on the companion ('' when the record could not be read). */
  record_url: string;
}

/** One of the signed-in person's review keys (public part only). */
export interface ReviewKeyView {
  id: string;
  public_key: string;
  label: string;
  status: 'active' | 'revoked';
}

/** A ciphertext sealed to one device key, or why there is none. */
export type ReviewContextCiphertext =
  | { status: 'sealed'; action_key: string; key_id: string; enc: string; ct: string }
  | { status: 'not_shared' | 'expired' };

export interface ReviewDecisionResult {
  receipt_action_key: string;
  decision: string;
  review_status: string;
  /** After this decision: approvals sealed and approvals needed (an approval may leave it pending). */
  approvals: number;
  approvals_required: number;
  verification: Verification;
}

export interface LogExport {
  format: 'action-gate.extension-log/v1';
  exported_at: string;
  decisions: DecisionEntry[];
  incidents: IncidentEntry[];
  review_receipts: ReviewReceiptEntry[];
  pinned_keys: PinnedKey[];
  key_alarms: KeyAlarm[];
}

/** What crosses the message channel: a value, or an error a person can read. */
export type Envelope<T> = { ok: true; value: T } | { ok: false; error: string };

export interface Message<K extends MessageType = MessageType> {
  type: K;
  payload: RequestOf<K>;
}

export class MessageError extends Error {
  override name = 'MessageError';
}

export async function sendMessage<K extends MessageType>(type: K, payload: RequestOf<K>): Promise<ResponseOf<K>> {
  const reply = (await browser.runtime.sendMessage({ type, payload } satisfies Message<K>)) as Envelope<ResponseOf<K>> | undefined;
  if (reply === undefined || reply === null) throw new MessageError(`no answer to ${type}`);
  if (!reply.ok) throw new MessageError(reply.error);
  return reply.value;
}
