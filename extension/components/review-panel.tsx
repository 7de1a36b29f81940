/**
 * The reviewer's review modal: the action's key, decision, route and age,
 * for law the five-grade mirror (interface-spec "Review request"), a reason, and approve,
 * reject or escalate. The result is shown as done only with its receipt's verification.
 * Presentational: the popup container posts the decision.
 */
import { useState } from 'preact/hooks';
import { MIRROR_GRADE_KEYS, MIRROR_GRADES } from '../utils/messages.ts';
import type { DecisionReason, GradingMirror, MirrorGrade, MirrorGradeKey, PendingReview, ReviewDecisionRequest, ReviewDecisionResult } from '../utils/messages.ts';
import { formatAge, Reasons } from './gate-dialog.tsx';
import { VerificationBadge } from './verification-badge.tsx';

export interface ReviewPanelProps {
  item: PendingReview;
  /** Why the action needs review, from its sealed record; null while loading. */
  reasons: DecisionReason[] | null;
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

export function ReviewPanel({ item, reasons, mirror, busy, error, result, onDecide, onClose }: ReviewPanelProps) {
  const [reason, setReason] = useState('');
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
      {reasons === null ? <p class="ag-hint">Loading why it needs review…</p> : <Reasons reasons={reasons} />}
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
          <button type="button" class="ag-approve" disabled={busy} onClick={() => decide('approved')}>
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
