/**
 * Review board: the paused actions of GET /active-manifest, longest waiting first, filtered on
 * the service by pack, action type, route and age, 200 to a page (its next_cursor), and read
 * again every few seconds while the page is visible, so items that arrive or are decided
 * elsewhere show without a refresh. Each row says who has approved so far, by name; a person
 * who already approved cannot decide again (the rule wants another person), and the row says
 * why. A decision (approve, reject, escalate) is posted with a reason and, for law, the five
 * grades of the grading mirror; it shows as done only once its sealed receipt has verified in
 * this browser against the pinned keys (console/src/evidence.ts). A person deciding sees the
 * action's encrypted review context opened on their device (../review-context.tsx), and cannot
 * send a decision on context that does not recompute to the sealed payload_hash. Beside the form
 * are the facts a reviewer decides on (./review-facts.tsx); each row links to the action's own
 * review page (./review-item.tsx, #/reviews/<action_key>). Below the board, a reviewer sees and
 * revokes their review devices (./review-devices.tsx).
 */
import { Fragment } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, query, seg } from '../api.ts';
import { verifyReceipt } from '../evidence.ts';
import { ReviewContext } from '../review-context.tsx';
import { LoadedReviewFacts, approverLabel, reviewHref } from './review-facts.tsx';
import { ReviewDevices } from './review-devices.tsx';
import type { Verification } from '../evidence.ts';
import { count, duration, shortKey, when } from '../format.ts';
import type { Me } from '../session.ts';
import { Badge } from '../ui/badge.tsx';
import { Field } from '../ui/field.tsx';
import { useLoad } from '../ui/load.ts';
import { useDirectory } from '../ui/names.tsx';
import { ErrorNotice, NeedsCapability, Notice } from '../ui/notice.tsx';
import { usePolled } from '../ui/poll.ts';
import { Columns, TableWrap } from '../ui/table.tsx';
import type { PageProps } from './types.ts';

/** One approval as the service names it: the principal behind the credential, and who asserted a delegated one. */
export interface Approval {
  principal_id?: string | null;
  display_name?: string | null;
  /** The reviewer the receipt names (the spec's field): the principal itself, or a delegated identity. */
  reviewer?: string | null;
  /** Who named the reviewer when someone else did: a principal (delegation), or a route's callback. */
  asserted_by?: { principal_id: string | null; display_name?: string | null; route?: string | null } | null;
  at?: string | null;
}

export interface BoardItem {
  action_key: string;
  pack: string;
  action_type: string;
  status: 'pending' | 'escalated';
  review_route: string | null;
  created_at: string;
  age_seconds: number;
  expires_in_seconds: number;
  /** A count (the spec's field), or the approvals themselves. */
  approvals: number | Approval[];
  /** Who has approved so far, as principals (absent from services that only count). */
  approved_by?: Approval[];
  approvals_required: number;
  escalation_level: number;
  /** Whether the submitter shared the encrypted review context (absent from older services). */
  review_context?: 'available' | 'not_shared';
}

interface Board {
  items: BoardItem[];
  truncated: boolean;
  next_cursor?: string | null;
  insights?: { pending: number; action_types: { action_type: string }[] };
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

export interface Outcome {
  actionKey: string;
  answer: ReviewAnswer;
  verification: Verification;
}

interface Filters {
  pack: string;
  actionType: string;
  route: string;
  minAge: string;
}

export const PAGE_SIZE = 200;
/** How often the board is read again while visible. */
const POLL_MS = 4000;
const AGES: { seconds: string; label: string }[] = [
  { seconds: '', label: 'Any age' },
  { seconds: '3600', label: 'Waiting over 1 hour' },
  { seconds: '14400', label: 'Waiting over 4 hours' },
  { seconds: '86400', label: 'Waiting over 1 day' },
  { seconds: '259200', label: 'Waiting over 3 days' },
];

function approvalCount(item: BoardItem): number {
  return typeof item.approvals === 'number' ? item.approvals : item.approvals.length;
}

/** The approvals as the board item carries them, or undefined when it only counts them. */
function listedApprovals(item: BoardItem): Approval[] | undefined {
  if (Array.isArray(item.approvals)) return item.approvals;
  return item.approved_by;
}

/**
 * Who approved, from the action's record (GET /v1/records/{key}), for a board that only counts:
 * its approved_by where the service names principals, else its receipts' reviewers.
 */
async function approvalsFromRecord(actionKey: string): Promise<Approval[]> {
  const rec = await api<{ review?: { approved_by?: Approval[]; receipts?: { decision: string; reviewer: string | null; recorded_at: string }[] } }>(
    `/v1/records/${seg(actionKey)}`,
  );
  if (rec.review?.approved_by) return rec.review.approved_by;
  return (rec.review?.receipts ?? []).filter((r) => r.decision === 'approved').map((r) => ({ reviewer: r.reviewer, at: r.recorded_at }));
}

/**
 * Whether the signed-in principal already took part in this approval: as the person it counts
 * for, or as whoever named the reviewer. The service refuses either one a second approval
 * (review_duplicate_approver), so Decide is closed to them.
 */
export function isMine(a: Approval, me: Me): boolean {
  const mine = new Set([me.principal?.id, me.person?.id].filter((x): x is string => Boolean(x)));
  if (a.principal_id && mine.has(a.principal_id)) return true;
  if (a.asserted_by?.principal_id && mine.has(a.asserted_by.principal_id)) return true;
  return a.principal_id === undefined && a.asserted_by === undefined && a.reviewer ? mine.has(a.reviewer) : false;
}

export default function Reviews({ me }: PageProps) {
  const [filters, setFilters] = useState<Filters>({ pack: '', actionType: '', route: '', minAge: '' });
  // What is typed in the route field until it is committed: the board re-renders as it follows
  // the service, and a field bound to the committed filter would lose the typing.
  const [routeDraft, setRouteDraft] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const board = usePolled(
    () =>
      api<Board>(
        `/active-manifest${query({
          limit: PAGE_SIZE,
          pack: filters.pack,
          action_type: filters.actionType,
          route: filters.route.trim(),
          min_age_seconds: filters.minAge,
          cursor,
        })}`,
      ),
    [filters, cursor],
    POLL_MS,
  );
  const packs = useLoad(() => api<{ packs: { name: string }[] }>('/v1/packs'));
  const dir = useDirectory(me);
  const [open, setOpen] = useState<string | null>(null);
  const [outcomes, setOutcomes] = useState<Outcome[]>([]);
  const [gone, setGone] = useState<string | null>(null);
  const approvals = useApprovals(board.data?.items ?? []);
  const canDecide = me.capabilities.includes('reviews:decide');
  const items = board.data?.items ?? [];
  const routes = [...new Set(items.map((i) => i.review_route).filter((r): r is string => r !== null))].sort();
  const actionTypes = (board.data?.insights?.action_types ?? []).map((t) => t.action_type).sort();

  // The open item was decided or ended elsewhere: close its form and say so.
  useEffect(() => {
    if (open && board.data && !board.loading && !items.some((i) => i.action_key === open)) {
      setOpen(null);
      if (!outcomes.some((o) => o.actionKey === open)) setGone(open);
    }
  }, [board.data]);

  const done = (o: Outcome) => {
    setOutcomes((list) => [o, ...list]);
    setOpen(null);
    board.reload();
  };
  const change = (next: Partial<Filters>) => {
    setFilters((current) => ({ ...current, ...next }));
    setCursors([]);
    // A form left open would otherwise read as decided elsewhere when the filter hides its item.
    setOpen(null);
    setGone(null);
  };
  const page = cursors.length + 1;
  const first = cursors.length * PAGE_SIZE + 1;
  return (
    <div>
      {!canDecide ? <NeedsCapability capability="reviews:decide" what="approve, reject or escalate" /> : null}
      <form class="filters" aria-label="Filter the board" onSubmit={(e) => e.preventDefault()}>
        <Field label="Pack">
          {(a11y) => (
            <select {...a11y} value={filters.pack} onChange={(e) => change({ pack: e.currentTarget.value })}>
              <option value="">All packs</option>
              {(packs.data?.packs ?? []).map((p) => (
                <option key={p.name}>{p.name}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Action type">
          {(a11y) => (
            <select {...a11y} value={filters.actionType} onChange={(e) => change({ actionType: e.currentTarget.value })}>
              <option value="">All action types</option>
              {actionTypes.map((t) => (
                <option key={t}>{t}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Route" hint="Exact, e.g. browser:legal-review">
          {(a11y) => (
            <>
              <input
                {...a11y}
                list="board-routes"
                maxLength={200}
                value={routeDraft}
                onInput={(e) => setRouteDraft(e.currentTarget.value)}
                onChange={(e) => change({ route: e.currentTarget.value })}
              />
              <datalist id="board-routes">
                {routes.map((r) => (
                  <option key={r} value={r} />
                ))}
              </datalist>
            </>
          )}
        </Field>
        <Field label="Age">
          {(a11y) => (
            <select {...a11y} value={filters.minAge} onChange={(e) => change({ minAge: e.currentTarget.value })}>
              {AGES.map((a) => (
                <option key={a.seconds} value={a.seconds}>
                  {a.label}
                </option>
              ))}
            </select>
          )}
        </Field>
      </form>
      <div class="toolbar">
        <button type="button" class="secondary" onClick={board.reload} disabled={board.loading}>
          Refresh
        </button>
        <span class="muted" aria-live="polite">
          {board.data === undefined
            ? 'Loading…'
            : items.length === 0
              ? ''
              : `Page ${page}: ${count(first)}–${count(first + items.length - 1)}${board.data.next_cursor ? ', more on the next page' : ''}${board.data.insights ? `; ${count(board.data.insights.pending)} paused in all` : ''}`}
        </span>
      </div>
      {gone ? (
        <Notice tone="info">
          <code>{shortKey(gone)}</code> was decided or ended elsewhere while its form was open.
        </Notice>
      ) : null}
      {outcomes.map((o) => (
        <OutcomeNotice key={o.answer.action_key} outcome={o} />
      ))}
      {board.error ? <ErrorNotice error={board.error} /> : null}
      {board.data && items.length === 0 ? <p>Nothing here is waiting for a review.</p> : null}
      {items.length > 0 ? (
        <TableWrap label="Paused actions">
          <table>
            <caption class="visually-hidden">Paused actions, longest waiting first</caption>
            <Columns names={['Action', 'Pack', 'Age', 'Route', 'Status', 'Approvals', 'Expires in', { hidden: 'Decide' }]} />
            <tbody>
              {items.map((item) => {
                const listed = listedApprovals(item) ?? approvals.get(item.action_key);
                const mine = listed?.find((a) => isMine(a, me));
                const blocked = !canDecide ? 'Needs the reviews:decide capability' : mine ? `You approved this${mine.at ? ` on ${when(mine.at)}` : ''}; the rule needs another person’s approval.` : undefined;
                const reasonId = `why-${item.action_key}`;
                return (
                  <Fragment key={item.action_key}>
                    <tr>
                      <td>
                        <a class="strong" href={reviewHref(item.action_key)}>
                          {item.action_type}
                          <span class="visually-hidden"> {shortKey(item.action_key)}: open its review page</span>
                        </a>
                        <br />
                        <code title={item.action_key}>{shortKey(item.action_key)}</code>
                      </td>
                      <td>{item.pack}</td>
                      <td>{duration(item.age_seconds)}</td>
                      <td>{item.review_route ?? '—'}</td>
                      <td>
                        <Badge tone="wait">{item.status}</Badge>
                        {item.escalation_level > 0 ? <span class="muted"> level {item.escalation_level}</span> : null}
                        {item.review_context ? <span class="muted"><br />{item.review_context === 'available' ? 'context available' : 'context not shared'}</span> : null}
                      </td>
                      <td>
                        {approvalCount(item)} of {item.approvals_required}
                        {listed && listed.length > 0 ? <span class="approvers">: {listed.map((a) => approverLabel(a, dir)).join(', ')}</span> : null}
                      </td>
                      <td>{duration(item.expires_in_seconds)}</td>
                      <td>
                        <button
                          type="button"
                          aria-expanded={open === item.action_key}
                          aria-controls={`decide-${item.action_key}`}
                          aria-describedby={mine ? reasonId : undefined}
                          disabled={blocked !== undefined}
                          title={blocked}
                          onClick={() => {
                            setGone(null);
                            setOpen(open === item.action_key ? null : item.action_key);
                          }}
                        >
                          Decide<span class="visually-hidden"> on {item.action_type} {shortKey(item.action_key)}</span>
                        </button>
                        {mine ? (
                          <p class="hint" id={reasonId}>
                            {blocked}
                          </p>
                        ) : null}
                      </td>
                    </tr>
                    {open === item.action_key && !blocked ? (
                      <tr class="decide-row">
                        <td colSpan={8} id={`decide-${item.action_key}`}>
                          <div class="review-layout">
                            <DecideForm item={item} me={me} onDone={done} />
                            <LoadedReviewFacts actionKey={item.action_key} me={me} />
                          </div>
                        </td>
                      </tr>
                    ) : null}
                  </Fragment>
                );
              })}
            </tbody>
          </table>
        </TableWrap>
      ) : null}
      {cursors.length > 0 || board.data?.next_cursor ? (
        <nav class="toolbar" aria-label="Board pages">
          <button
            type="button"
            class="secondary"
            disabled={cursors.length === 0}
            onClick={() => {
              setOpen(null);
              setCursors(cursors.slice(0, -1));
            }}
          >
            Previous page
          </button>
          <span>Page {page}</span>
          <button
            type="button"
            class="secondary"
            disabled={!board.data?.next_cursor}
            onClick={() => {
              const next = board.data?.next_cursor;
              if (!next) return;
              setOpen(null);
              setCursors([...cursors, next]);
            }}
          >
            Next page
          </button>
        </nav>
      ) : null}
      <ReviewDevices me={me} />
    </div>
  );
}

/**
 * Who approved the items that only count their approvals: read from each action's receipts,
 * once per item and approval count (so a new approval is read again, nothing else is).
 */
function useApprovals(items: BoardItem[]): Map<string, Approval[]> {
  const [known, setKnown] = useState<Map<string, Approval[]>>(new Map());
  const asked = useRef(new Map<string, number>());
  useEffect(() => {
    for (const item of items) {
      const n = approvalCount(item);
      if (n === 0 || listedApprovals(item) !== undefined || asked.current.get(item.action_key) === n) continue;
      asked.current.set(item.action_key, n);
      approvalsFromRecord(item.action_key).then(
        (list) => setKnown((m) => new Map(m).set(item.action_key, list)),
        () => asked.current.delete(item.action_key),
      );
    }
  }, [items]);
  return known;
}

export function OutcomeNotice({ outcome }: { outcome: Outcome }) {
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

/** What the decide form needs of a paused action: the board's item, or the review page's record. */
export type DecideItem = Pick<BoardItem, 'action_key' | 'pack' | 'action_type'>;

export function DecideForm({ item, me, onDone }: { item: DecideItem; me: Me; onDone: (o: Outcome) => void }) {
  // A person decides as themselves; a service account's session decides as itself, or names the
  // reviewer it acts for (delegation, which the service allows only with reviews:delegate).
  const person = me.person?.id;
  const [decision, setDecision] = useState<'approved' | 'rejected' | 'escalated'>('approved');
  const [reason, setReason] = useState('');
  const [reviewerName, setReviewerName] = useState('');
  const [grades, setGrades] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>(undefined);
  const [stage, setStage] = useState<'idle' | 'sending' | 'verifying'>('idle');
  const mirror = useLoad(() => (item.pack === 'law' ? api<Mirror>('/law/grading-mirror') : Promise.resolve(undefined)), [item.pack]);
  // The encrypted review context, opened on this device (a person's only: devices are theirs);
  // context that does not recompute to the sealed payload_hash keeps the decision from being sent.
  const [contextOk, setContextOk] = useState<boolean | undefined>(undefined);
  const contextBlocks = contextOk === false;
  // A person's decision waits until the context has opened (or is known to be absent).
  const contextPending = person !== undefined && contextOk === undefined;
  const graded = Object.values(grades).filter(Boolean).length;

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setStage('sending');
    try {
      // Absent, the reviewer is the credential's principal itself (a person always is).
      const reviewer = person ?? (reviewerName.trim() || undefined);
      const body: Record<string, unknown> = { pack: item.pack, action_key: item.action_key, decision, ...(reviewer ? { reviewer } : {}) };
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
      {person !== undefined ? <ReviewContext actionKey={item.action_key} onCheck={setContextOk} /> : null}
      <fieldset>
        <legend>Decision</legend>
        {(['approved', 'rejected', 'escalated'] as const).map((d) => (
          <label key={d} class="radio">
            <input type="radio" name={`decision-${item.action_key}`} value={d} checked={decision === d} onChange={() => setDecision(d)} />
            {d === 'approved' ? 'Approve' : d === 'rejected' ? 'Reject' : 'Escalate'}
          </label>
        ))}
      </fieldset>
      {person === undefined ? (
        <Field label="Reviewer" hint="Empty: this account decides as itself. Naming someone else (their id or email) needs reviews:delegate and is sealed as asserted by this account" error={fieldError('/reviewer')}>
          {(a11y) => <input {...a11y} maxLength={200} value={reviewerName} onInput={(e) => setReviewerName(e.currentTarget.value)} />}
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
        <button type="submit" disabled={stage !== 'idle' || contextBlocks || contextPending} aria-describedby={contextBlocks ? `context-${item.action_key}` : undefined}>
          {stage === 'sending' ? 'Sealing…' : stage === 'verifying' ? 'Verifying the receipt…' : `Submit: ${decision === 'approved' ? 'approve' : decision === 'rejected' ? 'reject' : 'escalate'}`}
        </button>
      </div>
      {contextBlocks ? (
        <p class="needs-capability" id={`context-${item.action_key}`}>
          Not sent: the context on this device is not what was gated.
        </p>
      ) : null}
      {error ? <ErrorNotice error={error} /> : null}
    </form>
  );
}
