/**
 * Review board: the paused actions of GET /active-manifest, newest first, with age and route.
 * A decision (approve, reject, escalate) is posted with a reason and, for law, the five grades
 * of the grading mirror; it shows as done only once its sealed receipt has verified in this
 * browser against the pinned keys (console/src/evidence.ts).
 */
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, api } from '../api.ts';
import { verifyReceipt } from '../evidence.ts';
import type { Verification } from '../evidence.ts';
import { duration, shortKey } from '../format.ts';
import { Badge } from '../ui/badge.tsx';
import { Field } from '../ui/field.tsx';
import { useLoad } from '../ui/load.ts';
import { ErrorNotice, NeedsCapability, Notice } from '../ui/notice.tsx';
import { Columns, TableWrap } from '../ui/table.tsx';
import type { PageProps } from './types.ts';

interface BoardItem {
  action_key: string;
  pack: string;
  action_type: string;
  status: 'pending' | 'escalated';
  review_route: string | null;
  created_at: string;
  age_seconds: number;
  expires_in_seconds: number;
  approvals: number;
  approvals_required: number;
  escalation_level: number;
}

interface Board {
  items: BoardItem[];
  truncated: boolean;
}

interface Mirror {
  mirror_version: string;
  mirror_digest: string;
  keys: string[];
  grade_values: string[];
}

interface ReviewAnswer {
  action_key: string;
  decision: string;
  review_status: string;
  approvals: number;
  approvals_required: number;
  verify_request: unknown;
}

interface Outcome {
  actionKey: string;
  answer: ReviewAnswer;
  verification: Verification;
}

export default function Reviews({ me }: PageProps) {
  const board = useLoad(() => api<Board>('/active-manifest?limit=200'));
  const [open, setOpen] = useState<string | null>(null);
  const [outcomes, setOutcomes] = useState<Outcome[]>([]);
  const canDecide = me.capabilities.includes('reviews:decide');
  const items = [...(board.data?.items ?? [])].sort((a, b) => b.created_at.localeCompare(a.created_at));
  const done = (o: Outcome) => {
    setOutcomes((list) => [o, ...list]);
    setOpen(null);
    board.reload();
  };
  return (
    <div>
      {!canDecide ? <NeedsCapability capability="reviews:decide" what="approve, reject or escalate" /> : null}
      <div class="toolbar">
        <button type="button" class="secondary" onClick={board.reload} disabled={board.loading}>
          Refresh
        </button>
        <span class="muted" aria-live="polite">
          {board.loading ? 'Loading…' : `${items.length} paused${board.data?.truncated ? ' (more than shown)' : ''}`}
        </span>
      </div>
      {outcomes.map((o) => (
        <OutcomeNotice key={o.answer.action_key} outcome={o} />
      ))}
      {board.error ? <ErrorNotice error={board.error} /> : null}
      {board.data && items.length === 0 ? <p>Nothing is waiting for a review.</p> : null}
      {items.length > 0 ? (
        <TableWrap label="Paused actions">
          <table>
            <caption class="visually-hidden">Paused actions, newest first</caption>
            <Columns names={['Action', 'Pack', 'Age', 'Route', 'Status', 'Approvals', 'Expires in', { hidden: 'Decide' }]} />
            <tbody>
              {items.map((item) => (
                <Fragment key={item.action_key}>
                  <tr>
                    <td>
                      <span class="strong">{item.action_type}</span>
                      <br />
                      <code title={item.action_key}>{shortKey(item.action_key)}</code>
                    </td>
                    <td>{item.pack}</td>
                    <td>{duration(item.age_seconds)}</td>
                    <td>{item.review_route ?? '—'}</td>
                    <td>
                      <Badge tone="wait">{item.status}</Badge>
                      {item.escalation_level > 0 ? <span class="muted"> level {item.escalation_level}</span> : null}
                    </td>
                    <td>
                      {item.approvals} of {item.approvals_required}
                    </td>
                    <td>{duration(item.expires_in_seconds)}</td>
                    <td>
                      <button
                        type="button"
                        aria-expanded={open === item.action_key}
                        aria-controls={`decide-${item.action_key}`}
                        disabled={!canDecide}
                        title={canDecide ? undefined : 'Needs the reviews:decide capability'}
                        onClick={() => setOpen(open === item.action_key ? null : item.action_key)}
                      >
                        Decide<span class="visually-hidden"> on {item.action_type} {shortKey(item.action_key)}</span>
                      </button>
                    </td>
                  </tr>
                  {open === item.action_key ? (
                    <tr class="decide-row">
                      <td colSpan={8} id={`decide-${item.action_key}`}>
                        <DecideForm item={item} reviewer={me.person?.id} onDone={done} />
                      </td>
                    </tr>
                  ) : null}
                </Fragment>
              ))}
            </tbody>
          </table>
        </TableWrap>
      ) : null}
    </div>
  );
}

function OutcomeNotice({ outcome }: { outcome: Outcome }) {
  const { answer, verification } = outcome;
  if (!verification.verified) {
    return (
      <Notice tone="error">
        The receipt for <code>{shortKey(outcome.actionKey)}</code> did not verify in this browser ({verification.failed.join(', ')}). The decision was sent; do not rely
        on it until its receipt verifies.
      </Notice>
    );
  }
  return (
    <Notice tone="success">
      <Badge tone="ok">verified</Badge> Done: {answer.decision} on <code>{shortKey(outcome.actionKey)}</code>, now {answer.review_status}
      {answer.review_status === 'pending' ? ` (${answer.approvals} of ${answer.approvals_required} approvals)` : ''}. Receipt <code>{shortKey(answer.action_key)}</code> verified in
      this browser{verification.devKey ? ' (sandbox dev key)' : ''}.
    </Notice>
  );
}

function DecideForm({ item, reviewer, onDone }: { item: BoardItem; reviewer: string | undefined; onDone: (o: Outcome) => void }) {
  const [decision, setDecision] = useState<'approved' | 'rejected' | 'escalated'>('approved');
  const [reason, setReason] = useState('');
  const [reviewerName, setReviewerName] = useState(reviewer ?? '');
  const [grades, setGrades] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>(undefined);
  const [stage, setStage] = useState<'idle' | 'sending' | 'verifying'>('idle');
  const mirror = useLoad(() => (item.pack === 'law' ? api<Mirror>('/law/grading-mirror') : Promise.resolve(undefined)), [item.pack]);
  const graded = Object.values(grades).filter(Boolean).length;

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setStage('sending');
    try {
      const body: Record<string, unknown> = { pack: item.pack, action_key: item.action_key, reviewer: reviewerName.trim(), decision };
      if (reason.trim()) body.reason = reason.trim();
      if (mirror.data && graded > 0) {
        body.mirror_grades = Object.fromEntries(mirror.data.keys.map((k) => [k, grades[k]]).filter(([, v]) => v));
        body.mirror_version = mirror.data.mirror_version;
        body.mirror_digest = mirror.data.mirror_digest;
      }
      const answer = await api<ReviewAnswer>('/v1/reviews', { json: body });
      setStage('verifying');
      const verification = await verifyReceipt(answer.verify_request);
      onDone({ actionKey: item.action_key, answer, verification });
    } catch (err) {
      setError(err);
      setStage('idle');
    }
  };
  const fieldError = (pointer: string) => (error instanceof ApiError ? error.fieldError(pointer) : undefined);
  return (
    <form class="decide" onSubmit={submit} aria-label={`Decide on ${item.action_type}`}>
      <fieldset>
        <legend>Decision</legend>
        {(['approved', 'rejected', 'escalated'] as const).map((d) => (
          <label key={d} class="radio">
            <input type="radio" name={`decision-${item.action_key}`} value={d} checked={decision === d} onChange={() => setDecision(d)} />
            {d === 'approved' ? 'Approve' : d === 'rejected' ? 'Reject' : 'Escalate'}
          </label>
        ))}
      </fieldset>
      {reviewer === undefined ? (
        <Field label="Reviewer" hint="Who decides; recorded in the receipt" error={fieldError('/reviewer')}>
          {(a11y) => <input {...a11y} required maxLength={200} value={reviewerName} onInput={(e) => setReviewerName(e.currentTarget.value)} />}
        </Field>
      ) : null}
      <Field label="Reason" hint="Never stored: only its hash is sealed in the receipt" error={fieldError('/reason')}>
        {(a11y) => <textarea {...a11y} rows={2} maxLength={2000} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />}
      </Field>
      {mirror.data ? (
        <fieldset class="grades">
          <legend>Grading mirror ({mirror.data.mirror_version}): grade all five, or none</legend>
          {mirror.data.keys.map((k) => (
            <Field key={k} label={k.replaceAll('_', ' ')} error={fieldError(`/mirror_grades/${k}`) ?? fieldError('/mirror_grades')}>
              {(a11y) => (
                <select {...a11y} value={grades[k] ?? ''} onChange={(e) => setGrades({ ...grades, [k]: e.currentTarget.value })}>
                  <option value="">not graded</option>
                  {mirror.data!.grade_values.map((v) => (
                    <option key={v} value={v}>
                      {v}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          ))}
        </fieldset>
      ) : null}
      <div class="actions">
        <button type="submit" disabled={stage !== 'idle'}>
          {stage === 'sending' ? 'Sealing…' : stage === 'verifying' ? 'Verifying the receipt…' : `Submit: ${decision === 'approved' ? 'approve' : decision === 'rejected' ? 'reject' : 'escalate'}`}
        </button>
      </div>
      {error ? <ErrorNotice error={error} /> : null}
    </form>
  );
}
