/**
 * The in-page dialog: checking, paused until review, approved, rejected,
 * blocked, gate unavailable. Presentational: it renders a Dialog value and reports clicks.
 */
import type { DecisionReason, ReleaseReport, Verification } from '../utils/messages.ts';
import { VerificationBadge } from './verification-badge.tsx';

export type Dialog =
  | { kind: 'checking'; site: string }
  | {
      kind: 'review';
      site: string;
      /** What is held: a prompt in the composer, or files on their way into the page. */
      held: 'prompt' | 'files';
      action_key: string;
      review_route: string | null;
      next_step: string;
      reasons: DecisionReason[];
      status: 'pending' | 'escalated' | 'unknown';
      verification: Verification;
      paused_at: number;
      problem: string | null;
    }
  | { kind: 'approved'; action_key: string; reviewer: string | null; verification: Verification | null; evidence: NonNullable<ReleaseReport['evidence']> }
  | { kind: 'rejected'; action_key: string; reviewer: string | null; status: string; verification: Verification | null; problem: string | null }
  | { kind: 'blocked'; action_key: string; next_step: string; reasons: DecisionReason[]; verification: Verification; held: 'prompt' | 'files' }
  /** A paste with flagged spans, shown in place; what may be pasted follows the admin's rule. */
  | { kind: 'paste'; segments: { text: string; kind: string | null; reason: string | null }[]; mode: 'warn' | 'redact' | 'block'; reasons: string[] }
  /** A release was made (or was due) but the page did not take it: nothing was sent. */
  | { kind: 'not-sent'; site: string; message: string; retry: boolean }
  | { kind: 'failed'; message: string }
  | { kind: 'fail-open'; message: string }
  | { kind: 'notice'; title: string; message: string };

export interface DialogActions {
  onClose(): void;
  onWithdraw(): void;
  onRetry(): void;
  /** Paste the held text as it is (`redacted` false) or in its redacted form. */
  onPaste(redacted: boolean): void;
}

export function GateDialog({ dialog, actions, now }: { dialog: Dialog; actions: DialogActions; now: number }) {
  return (
    <div class="ag-backdrop">
      <div class={`ag-dialog ag-${dialog.kind}`} role="dialog" aria-modal="true" aria-labelledby="ag-title" data-kind={dialog.kind}>
        <Body dialog={dialog} actions={actions} now={now} />
      </div>
    </div>
  );
}

function Body({ dialog, actions, now }: { dialog: Dialog; actions: DialogActions; now: number }) {
  switch (dialog.kind) {
    case 'checking':
      return (
        <>
          <h2 id="ag-title">Checking with Action Gate…</h2>
          <p>Your {dialog.site} message is held until your organisation’s gate answers.</p>
        </>
      );
    case 'review':
      return (
        <>
          <h2 id="ag-title">Paused until review</h2>
          <p class="ag-next-step">{dialog.next_step}</p>
          <Reasons reasons={dialog.reasons} />
          <dl>
            <dt>Route</dt>
            <dd class="ag-route">{dialog.review_route ?? 'default review route'}</dd>
            <dt>Status</dt>
            <dd class="ag-status">{dialog.status === 'escalated' ? 'escalated: still paused' : 'waiting for a reviewer'}</dd>
            <dt>Waiting</dt>
            <dd>{formatAge(now - dialog.paused_at)}</dd>
            <dt>Action</dt>
            <dd class="ag-key">{dialog.action_key}</dd>
          </dl>
          <VerificationBadge verification={dialog.verification} label="Decision seal" />
          {dialog.problem && <p class="ag-problem">{dialog.problem}</p>}
          <p class="ag-hint">
            {dialog.held === 'files'
              ? `The file is held. It reaches ${dialog.site} once, automatically, if a reviewer approves it.`
              : 'Your text stays in the composer. It is sent once, automatically, if a reviewer approves it.'}
          </p>
          <div class="ag-actions">
            <button type="button" class="ag-withdraw" onClick={actions.onWithdraw}>
              Withdraw
            </button>
          </div>
        </>
      );
    case 'approved':
      return (
        <>
          <h2 id="ag-title">Approved and sent</h2>
          <p>
            {dialog.reviewer ? `${dialog.reviewer} approved it` : 'A reviewer approved it'}; your message was sent once.
          </p>
          <p class="ag-evidence">{dialog.evidence === 'composer-cleared' ? 'The site took the message: it left the composer.' : 'The site sent a request with it.'}</p>
          <VerificationBadge verification={dialog.verification} label="Review receipt" />
          <p class="ag-key">{dialog.action_key}</p>
          <Close actions={actions} />
        </>
      );
    case 'rejected':
      return (
        <>
          <h2 id="ag-title">{dialog.status === 'expired' ? 'Review expired' : 'Rejected'}: not sent</h2>
          <p>
            {dialog.status === 'expired'
              ? 'No reviewer decided in time. Nothing was sent.'
              : `${dialog.reviewer ? dialog.reviewer : 'A reviewer'} rejected it. Nothing was sent; your text is still in the composer.`}
          </p>
          {dialog.problem && <p class="ag-problem">{dialog.problem}</p>}
          <VerificationBadge verification={dialog.verification} label="Review receipt" />
          <p class="ag-key">{dialog.action_key}</p>
          <Close actions={actions} />
        </>
      );
    case 'blocked':
      return (
        <>
          <h2 id="ag-title">Blocked: not sent</h2>
          <p class="ag-next-step">{dialog.next_step}</p>
          <Reasons reasons={dialog.reasons} />
          <p>{dialog.held === 'files' ? 'The file was not attached: nothing of it reached the page.' : 'Nothing was sent. Your text is still in the composer.'}</p>
          <VerificationBadge verification={dialog.verification} label="Decision seal" />
          <p class="ag-key">{dialog.action_key}</p>
          <Close actions={actions} />
        </>
      );
    case 'failed':
      return (
        <>
          <h2 id="ag-title">Not sent: Action Gate could not decide</h2>
          <p class="ag-message">{dialog.message}</p>
          <Close actions={actions} retry="Try again" />
        </>
      );
    case 'fail-open':
      return (
        <>
          <h2 id="ag-title">Sent without a gate decision</h2>
          <p class="ag-message">{dialog.message}</p>
          <Close actions={actions} />
        </>
      );
    case 'paste':
      return (
        <>
          <h2 id="ag-title">{dialog.mode === 'block' ? 'Not pasted: it contains ' : 'Check this paste: it contains '}{dialog.reasons.join(', ')}</h2>
          <pre class="ag-paste-preview">
            {dialog.segments.map((seg, i) =>
              seg.kind ? (
                <mark key={i} class="ag-flag" data-kind={seg.kind} title={seg.reason ?? ''}>
                  {seg.text}
                  <span class="ag-flag-reason"> ({seg.reason})</span>
                </mark>
              ) : (
                <span key={i}>{seg.text}</span>
              ),
            )}
          </pre>
          <p class="ag-hint">
            {dialog.mode === 'block'
              ? 'Your organisation does not allow pasting this into an AI tool.'
              : dialog.mode === 'redact'
                ? 'Your organisation allows this paste only with the flagged parts replaced.'
                : 'The flagged parts can be replaced before they are pasted.'}
          </p>
          <div class="ag-actions">
            {dialog.mode !== 'block' && (
              <button type="button" class="ag-paste-redacted" onClick={() => actions.onPaste(true)}>
                Paste redacted
              </button>
            )}
            {dialog.mode === 'warn' && (
              <button type="button" class="ag-paste-original" onClick={() => actions.onPaste(false)}>
                Paste as it is
              </button>
            )}
            <button type="button" class="ag-close" onClick={actions.onClose}>
              {dialog.mode === 'block' ? 'Close' : 'Cancel'}
            </button>
          </div>
        </>
      );
    case 'not-sent':
      return (
        <>
          <h2 id="ag-title">Not sent</h2>
          <p class="ag-message">{dialog.message}</p>
          {dialog.retry && <p class="ag-hint">The decision still holds for this message: try once more to send it.</p>}
          <Close actions={actions} {...(dialog.retry ? { retry: 'Send again' } : {})} />
        </>
      );
    case 'notice':
      return (
        <>
          <h2 id="ag-title">{dialog.title}</h2>
          <p class="ag-message">{dialog.message}</p>
          <Close actions={actions} />
        </>
      );
  }
}

/** Why the gate decided so: each sealed rule with its explanation (Gate response `reasons`). */
export function Reasons({ reasons }: { reasons: readonly DecisionReason[] }) {
  if (reasons.length === 0) return null;
  return (
    <div class="ag-reasons">
      <h3>Why</h3>
      <ul>
        {reasons.map((r) => (
          <li key={r.rule} data-rule={r.rule}>
            {r.explanation} <span class="ag-rule">({r.rule})</span>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The closing row of a dialog: Close, after a retry button labelled `retry` when one is offered. */
function Close({ actions, retry }: { actions: DialogActions; retry?: string }) {
  return (
    <div class="ag-actions">
      {retry && (
        <button type="button" class="ag-retry" onClick={actions.onRetry}>
          {retry}
        </button>
      )}
      <button type="button" class="ag-close" onClick={actions.onClose}>
        Close
      </button>
    </div>
  );
}

export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}
