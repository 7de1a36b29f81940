/**
 * The reviewer's review modal: the action's key, decision, route and age, what its sealed
 * record says (the gate's reasons, the policy version and the rule that paused it, the pack's
 * claim boundary, who has approved so far, a link to the record), the review context opened on
 * this device (./review-context-view.tsx), for law the five-grade mirror (interface-spec
 * "Review request"), a reason, and approve, reject or escalate. The result is shown as done only
 * with its receipt's verification.
 *
 * Approve waits until the context has opened and recomputes to the sealed payload_hash, or is
 * known to be absent (not shared, expired, no device): a reviewer never approves blind to
 * context that exists, nor on context that is not what was gated.
 */
import { useState } from 'preact/hooks';
import { MIRROR_GRADE_KEYS, MIRROR_GRADES } from '../utils/messages.ts';
import type { GradingMirror, MirrorGrade, MirrorGradeKey, PendingReview, ReviewDecisionRequest, ReviewDecisionResult, ReviewRecordView } from '../utils/messages.ts';
import { contextAllowsApproval } from '../utils/review-device.ts';
import type { ReviewContextState } from '../utils/review-device.ts';
import { formatAge, Reasons } from './gate-dialog.tsx';
import { ReviewContextView } from './review-context-view.tsx';
import type { ContextLoader } from './review-context-view.tsx';
import { VerificationBadge } from './verification-badge.tsx';

export interface ReviewPanelProps {
  item: PendingReview;
  /** What the panel shows from the action's sealed record; null while loading. */
  record: ReviewRecordView | null;
  /** Opens the review context sealed to this device (in this page: the plaintext stays here). */
  loadContext: ContextLoader;
  mirror: GradingMirror | null;
  busy: boolean;
  error: string | null;
  result: ReviewDecisionResult | null;
  onDecide: (req: ReviewDecisionRequest) => void;
  onClose: () => void;
}

const GRADE_LABEL: Record<MirrorGradeKey, string> = {
  citation_support: 'Citation support',
  privilege_boundary: 'Privilege boundary',
  supervision_route: 'Supervision route',
  client_confidentiality: 'Client confidentiality',
  filing_readiness: 'Filing readiness',
};

export function ReviewPanel({ item, record, loadContext, mirror, busy, error, result, onDecide, onClose }: ReviewPanelProps) {
  const [reason, setReason] = useState('');
  const [context, setContext] = useState<ReviewContextState>({ kind: 'loading' });
  const approvable = contextAllowsApproval(context);
  const [grades, setGrades] = useState<Record<MirrorGradeKey, MirrorGrade>>(
    () => Object.fromEntries(MIRROR_GRADE_KEYS.map((k) => [k, 'NA'])) as Record<MirrorGradeKey, MirrorGrade>,
  );
  const isLaw = item.pack === 'law';
  const decide = (decision: ReviewDecisionRequest['decision']) =>
    onDecide({ pack: item.pack, action_key: item.action_key, decision, ...(reason ? { reason } : {}), ...(isLaw ? { mirror_grades: grades } : {}) });

  return (
    <div class="ag-modal" role="dialog" aria-modal="true" aria-labelledby="ag-review-title">
      <h2 id="ag-review-title">Review</h2>
      <dl>
        <dt>Action</dt>
        <dd class="ag-key">{item.action_key}</dd>
        <dt>Decision</dt>
        <dd>{item.decision}</dd>
        <dt>Route</dt>
        <dd>{item.review_route ?? '-'}</dd>
        <dt>Age</dt>
        <dd>{formatAge(item.age_seconds * 1000)}</dd>
        <dt>Status</dt>
        {/* After a decision the item's status is the receipt's, not the pending list's. */}
        <dd class="ag-review-status">{result ? result.review_status : item.status}</dd>
        {item.approvals_required > 1 && (
          <>
            <dt>Approvals</dt>
            <dd class="ag-approvals">
              {result ? result.approvals : item.approvals} of {item.approvals_required}
            </dd>
          </>
        )}
      </dl>
      {item.next_step && <p class="ag-next-step">{item.next_step}</p>}
      {record === null ? <p class="ag-hint">Loading why it needs review…</p> : <RecordFacts record={record} />}
      <ReviewContextView actionKey={item.action_key} sealedPayloadHash={record === null ? undefined : record.payload_hash} load={loadContext} onState={setContext} />
      {isLaw && (
        <fieldset class="ag-mirror">
          <legend>Grading mirror{mirror ? ` (${mirror.mirror_version})` : ''}</legend>
          {MIRROR_GRADE_KEYS.map((k) => (
            <label key={k}>
              <span>{GRADE_LABEL[k]}</span>
              <select name={k} value={grades[k]} disabled={busy || result !== null} onChange={(e) => setGrades({ ...grades, [k]: (e.target as HTMLSelectElement).value as MirrorGrade })}>
                {MIRROR_GRADES.map((g) => (
                  <option key={g} value={g}>
                    {g}
                  </option>
                ))}
              </select>
            </label>
          ))}
        </fieldset>
      )}
      <label class="ag-reason">
        <span>Reason (optional; no client or prompt text)</span>
        <textarea name="reason" value={reason} disabled={busy || result !== null} onInput={(e) => setReason((e.target as HTMLTextAreaElement).value)} />
      </label>
      {error && <p class="ag-problem">{error}</p>}
      {result ? (
        <div class="ag-review-result" data-decision={result.decision} data-verified={String(result.verification.verified)}>
          <p>
            {result.verification.verified ? 'Done' : 'Posted, but not confirmed'}: {result.decision} ({result.review_status}).
          </p>
          {result.decision === 'approved' && result.review_status !== 'approved' && (
            <p class="ag-hint">
              {result.approvals} of {result.approvals_required} approvals: the action stays paused until another reviewer approves.
            </p>
          )}
          <VerificationBadge verification={result.verification} label="Review receipt" />
          <code class="ag-key">{result.receipt_action_key}</code>
        </div>
      ) : (
        <div class="ag-actions">
          <button type="button" class="ag-approve" disabled={busy || !approvable} title={approvable ? undefined : 'Approve waits for the review context to open and match what was gated'} onClick={() => decide('approved')}>
            Approve
          </button>
          <button type="button" class="ag-reject" disabled={busy} onClick={() => decide('rejected')}>
            Reject
          </button>
          <button type="button" class="ag-escalate" disabled={busy} onClick={() => decide('escalated')}>
            Escalate
          </button>
        </div>
      )}
      <div class="ag-actions">
        <button type="button" class="ag-close" onClick={onClose}>
          Close
        </button>
      </div>
    </div>
  );
}

/** What the sealed record says of the paused action, beside its reasons. */
function RecordFacts({ record }: { record: ReviewRecordView }) {
  return (
    <>
      <Reasons reasons={record.reasons} />
      <dl class="ag-record-facts">
        <dt>Paused by rule</dt>
        <dd class="ag-paused-by">{record.paused_by ?? '-'}</dd>
        <dt>Policy version</dt>
        <dd class="ag-policy">{record.policy_digest ? <code title={record.policy_digest}>{record.policy_digest.slice(0, 16)}…</code> : 'pack defaults'}</dd>
        <dt>Approved so far</dt>
        <dd class="ag-approved-by">{record.approved_by.length > 0 ? record.approved_by.join(', ') : 'no one yet'}</dd>
        <dt>Record</dt>
        <dd>
          {record.record_url !== '' && (
            <a class="ag-record-link" href={record.record_url} target="_blank" rel="noreferrer noopener">
              Open the sealed record
            </a>
          )}
          {record.verified ? '' : ' (its seal did not verify here)'}
        </dd>
      </dl>
      {record.claim_boundary && <p class="ag-claim-boundary">{record.claim_boundary}</p>}
    </>
  );
}
