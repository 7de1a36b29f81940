/**
 * What a reviewer decides on besides the context itself: the gate's reasons, the rule that
 * paused the action and the policy version its seal commits, the pack's claim boundary, who has approved so far, and a link to the sealed
 * record. All of it comes from GET /v1/records/{action_key} (the rule and the policy digest from
 * the signed attestation, which this browser verifies before opening the context), the pack list
 * (GET /v1/packs, whose claim_boundary says what the service's evidence does and does not
 * claim) and the pack's policy history (GET /tenant/policy/receipts), where the digest names its
 * version. Shown on the review page and beside the board's decide form.
 */
import { api, query, seg } from '../api.ts';
import { shortKey, when } from '../format.ts';
import type { Me } from '../session.ts';
import { useLoad } from '../ui/load.ts';
import { nameOf, useDirectory } from '../ui/names.tsx';
import type { Directory } from '../ui/names.tsx';
import { ErrorNotice } from '../ui/notice.tsx';

export interface ReviewApproval {
  principal_id?: string | null;
  display_name?: string | null;
  reviewer?: string | null;
  asserted_by?: { principal_id: string | null; display_name?: string | null; route?: string | null } | null;
  at?: string | null;
  receipt_action_key?: string;
}

/** The parts of GET /v1/records/{action_key} the review page reads. */
export interface ReviewRecord {
  action_key: string;
  pack: string;
  kind: string;
  decision: string | null;
  action_type?: string;
  review_route: string | null;
  recorded_at: string;
  reasons?: { explanation: string; rule: string }[];
  review?: {
    status: string;
    decided_at: string | null;
    receipt_action_key: string | null;
    expires_at: string | null;
    approvals: number;
    approvals_required: number;
    escalation_level: number;
    receipts: { action_key: string; decision: string; reviewer: string | null; recorded_at: string }[];
    approved_by?: ReviewApproval[];
  };
  review_context?: { status: string };
  verify_request: {
    payload_hash: string;
    seal: {
      attestation: {
        policy_digest?: string | null;
        context?: { findings?: { effect: string; rule: string; source?: string }[]; pack_version?: string; engine?: string };
      };
    };
  };
}

interface PolicyReceipts {
  receipts: { version: number; digest: string; created_at: string }[];
  next_before_version: number | null;
}

/** The console's link to an action's review page; ':' stays readable in a fragment (RFC 3986 §3.5). */
export function reviewHref(actionKey: string): string {
  return `#/reviews/${encodeURIComponent(actionKey).replaceAll('%3A', ':')}`;
}

/** The console's link to one sealed record on the records page. */
export function recordHref(actionKey: string): string {
  return `#/records/${encodeURIComponent(actionKey).replaceAll('%3A', ':')}`;
}

export function loadReviewRecord(actionKey: string): Promise<ReviewRecord> {
  return api<ReviewRecord>(`/v1/records/${seg(actionKey)}`);
}

/** Versions read before giving up on naming a digest (newest first, 50 a page). */
const POLICY_PAGES = 10;

/** The version of the pack's tenant policy whose digest the seal commits, or null if none is listed. */
async function policyVersion(pack: string, digest: string): Promise<number | null> {
  let before: number | undefined;
  for (let page = 0; page < POLICY_PAGES; page++) {
    const res = await api<PolicyReceipts>(`/tenant/policy/receipts${query({ policy_pack: pack, limit: 50, before_version: before })}`);
    const hit = res.receipts.find((r) => r.digest === digest);
    if (hit) return hit.version;
    if (res.next_before_version === null) return null;
    before = res.next_before_version;
  }
  return null;
}

/** Who approved, by name, and who named them when someone else did (delegation, a route's callback). */
export function approverLabel(a: ReviewApproval, dir: Directory | undefined): string {
  const who = a.principal_id ? nameOf(a.principal_id, dir, a.display_name) : a.reviewer ? nameOf(a.reviewer, dir) : 'someone';
  const by = a.asserted_by;
  return by ? `${who} (asserted by ${by.principal_id ? nameOf(by.principal_id, dir, by.display_name) : (by.display_name ?? by.route ?? 'a route')})` : who;
}

/** Who has approved: the record's approved_by, or (from services that only list receipts) the approving receipts. */
export function approvalsOf(record: ReviewRecord): ReviewApproval[] {
  const review = record.review;
  if (!review) return [];
  if (review.approved_by) return review.approved_by;
  return review.receipts.filter((r) => r.decision === 'approved').map((r) => ({ reviewer: r.reviewer, at: r.recorded_at, receipt_action_key: r.action_key }));
}

export function ReviewFacts({ record, me }: { record: ReviewRecord; me: Me }) {
  const dir = useDirectory(me);
  const packs = useLoad(() => api<{ packs: { name: string; claim_boundary: string }[]; claim_boundary: string }>('/v1/packs'));
  const attestation = record.verify_request.seal.attestation;
  const digest = attestation.policy_digest ?? null;
  const version = useLoad(() => (digest === null ? Promise.resolve(null) : policyVersion(record.pack, digest)), [record.pack, digest]);
  const findings = (attestation.context?.findings ?? []).filter((f) => f.effect === 'needs_review');
  const approvals = approvalsOf(record);
  const boundary = packs.data?.packs.find((p) => p.name === record.pack)?.claim_boundary ?? packs.data?.claim_boundary;
  return (
    <section class="review-facts" aria-label="Why it paused">
      <h2>Why it paused</h2>
      <dl>
        <dt>The gate’s reasons</dt>
        <dd>
          {record.reasons && record.reasons.length > 0 ? (
            <ul>
              {record.reasons.map((r) => (
                <li key={r.rule + r.explanation}>
                  {r.explanation} <code>{r.rule}</code>
                </li>
              ))}
            </ul>
          ) : (
            'None given.'
          )}
        </dd>
        <dt>Rule</dt>
        <dd>
          {findings.length > 0
            ? findings.map((f, i) => (
                <span key={f.rule}>
                  {i > 0 ? ', ' : ''}
                  <code>{f.rule}</code>
                  {f.source ? <span class="muted"> (from the {f.source === 'pack' ? 'pack' : f.source})</span> : null}
                </span>
              ))
            : '—'}
        </dd>
        <dt>Policy version</dt>
        <dd>
          {digest === null ? (
            'None: the pack’s defaults, no tenant policy'
          ) : version.data ? (
            <>
              Version {version.data} of the {record.pack} policy <span class="muted">(digest <code title={digest}>{digest.slice(0, 12)}…</code>)</span>
            </>
          ) : (
            <>
              Digest <code title={digest}>{digest.slice(0, 12)}…</code>
              {version.loading ? '' : version.error ? <span class="muted"> (its version number could not be read)</span> : <span class="muted"> (not in this tenant’s policy history)</span>}
            </>
          )}
          {attestation.context?.pack_version ? (
            <span class="muted">
              ; pack {record.pack} {attestation.context.pack_version}
              {attestation.context.engine ? `, engine ${attestation.context.engine}` : ''}
            </span>
          ) : null}
        </dd>
        <dt>Approvals</dt>
        <dd>
          {record.review ? `${record.review.approvals} of ${record.review.approvals_required}` : '—'}
          {approvals.length > 0 ? (
            <ul class="approvals">
              {approvals.map((a, i) => (
                <li key={a.receipt_action_key ?? i}>
                  {approverLabel(a, dir)}
                  {a.at ? <span class="muted">, {when(a.at)}</span> : null}
                </li>
              ))}
            </ul>
          ) : (
            <span class="muted">: nobody has approved yet</span>
          )}
        </dd>
        <dt>Claim boundary</dt>
        <dd class="boundary">{boundary ?? (packs.error ? <ErrorNotice error={packs.error} /> : 'Loading…')}</dd>
        <dt>Record</dt>
        <dd>
          <a href={recordHref(record.action_key)}>
            Open the sealed record <code>{shortKey(record.action_key)}</code>
          </a>
        </dd>
      </dl>
    </section>
  );
}

/** ReviewFacts for an action known by its key (the board's decide form). */
export function LoadedReviewFacts({ actionKey, me }: { actionKey: string; me: Me }) {
  const record = useLoad(() => loadReviewRecord(actionKey), [actionKey]);
  if (record.error) return <ErrorNotice error={record.error} />;
  if (!record.data) return <p class="muted">Loading why it paused…</p>;
  return <ReviewFacts record={record.data} me={me} />;
}
