/**
 * The popup: connection state, usage, key alarms, recent decisions with their
 * verification badge, and for reviewers the pending reviews. Presentational.
 */
import type { GradingMirror, PendingReview, PopupState, ReviewDecisionRequest, ReviewDecisionResult, ReviewRecordView } from '../utils/messages.ts';
import type { ContextLoader } from './review-context-view.tsx';
import { DecisionList } from './decision-list.tsx';
import { PendingList } from './pending-list.tsx';
import { ReviewPanel } from './review-panel.tsx';
import { VerificationBadge } from './verification-badge.tsx';

export interface ReviewerView {
  pending: PendingReview[];
  error: string | null;
  open: PendingReview | null;
  /** The open item's sealed record as the panel shows it; null while loading. */
  record: ReviewRecordView | null;
  mirror: GradingMirror | null;
  busy: boolean;
  decideError: string | null;
  result: ReviewDecisionResult | null;
}

export interface PopupViewProps {
  state: PopupState | null;
  error: string | null;
  reviewer: ReviewerView | null;
  onOpenOptions: () => void;
  onExport: () => void;
  onRefresh: () => void;
  onOpenReview: (item: PendingReview) => void;
  onCloseReview: () => void;
  onDecide: (req: ReviewDecisionRequest) => void;
  /** Opens the open item's review context in this page. */
  loadContext: ContextLoader;
}

export function PopupView(props: PopupViewProps) {
  const { state, error, reviewer } = props;
  return (
    <main class="ag-popup">
      <header class="ag-header">
        <h1>Action Gate</h1>
        <button type="button" class="ag-link" onClick={props.onRefresh}>
          Refresh
        </button>
        <button type="button" class="ag-link" onClick={props.onOpenOptions}>
          Options
        </button>
      </header>
      {error && <p class="ag-problem">{error}</p>}
      {state && (
        <>
          <section class="ag-connection" data-ok={String(state.connection.ok)}>
            <span class={`ag-dot ${state.connection.ok ? 'ag-dot-ok' : 'ag-dot-bad'}`} />
            <span class="ag-connection-detail">{state.connection.detail}</span>
            {state.usage && (
              <p class="ag-usage">
                Tenant <code>{state.usage.tenant_id}</code> ({state.usage.tenant_kind}):{' '}
                {state.usage.cap === null ? `${state.usage.actions_used} sealed actions` : `${state.usage.actions_used} of ${state.usage.cap} sealed actions used`}
                {state.usage.warning && <span class="ag-warning"> {state.usage.warning}</span>}
              </p>
            )}
          </section>
          {state.alarms.length > 0 && (
            <section class="ag-alarms" role="alert">
              <h2>Signing key alarm</h2>
              {state.alarms.map((a) => (
                <p key={a.id}>{a.detail}</p>
              ))}
            </section>
          )}
          {reviewer && (
            <section class="ag-reviewer">
              <h2>Pending reviews</h2>
              {reviewer.error && <p class="ag-problem">{reviewer.error}</p>}
              <PendingList items={reviewer.pending} onOpen={props.onOpenReview} />
              {state.reviews.length > 0 && (
                <>
                  <h2>Your recent reviews</h2>
                  <ul class="ag-decisions">
                    {state.reviews.map((r) => (
                      <li key={r.action_key} class="ag-decision" data-action-key={r.reviewed_action_key}>
                        <div class="ag-row">
                          <strong>{r.decision}</strong>
                          <time dateTime={r.time}>{new Date(r.time).toLocaleTimeString()}</time>
                          <VerificationBadge
                            verification={{ verified: r.verified, key_status: r.key_status, dev_key: r.key_status === 'sandbox', failed_checks: [], key_alarm: false }}
                            label="Receipt"
                          />
                        </div>
                        <code class="ag-key">{r.reviewed_action_key}</code>
                      </li>
                    ))}
                  </ul>
                </>
              )}
            </section>
          )}
          {state.incidents.length > 0 && (
            <section class="ag-incidents">
              <h2>Gate unavailable</h2>
              <ul>
                {state.incidents.map((i) => (
                  <li key={i.id}>
                    {new Date(i.time).toLocaleTimeString()}: {i.kind} ({i.fail_mode === 'open' && i.released ? 'sent: fail-open' : 'nothing sent'})
                  </li>
                ))}
              </ul>
            </section>
          )}
          <section>
            <h2>Recent decisions</h2>
            <DecisionList entries={state.recent} />
          </section>
          <footer class="ag-footer">
            <button type="button" class="ag-export" onClick={props.onExport}>
              Export log (JSON)
            </button>
          </footer>
        </>
      )}
      {reviewer?.open && (
        <div class="ag-overlay">
          <ReviewPanel
            item={reviewer.open}
            record={reviewer.record}
            loadContext={props.loadContext}
            mirror={reviewer.mirror}
            busy={reviewer.busy}
            error={reviewer.decideError}
            result={reviewer.result}
            onDecide={props.onDecide}
            onClose={props.onCloseReview}
          />
        </div>
      )}
    </main>
  );
}
