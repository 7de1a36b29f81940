/**
 * The reviewer panel's review context: opens the context sealed to this profile's device (the
 * loader, ../utils/review-device.ts) once the record's verified payload_hash is known, and shows
 * "This is exactly what was gated" with the prompt, action and file descriptions, or a loud
 * refusal or mismatch. The plaintext lives only in this component's state.
 *
 * `onState` tells the panel what it may enable (contextAllowsApproval).
 */
import { useEffect, useState } from 'preact/hooks';
import type { ContextCheck, ReviewContextDocument } from '../../shared/hpke.ts';
import type { ReviewContextState } from '../utils/review-device.ts';

export type ContextLoader = (actionKey: string, sealedPayloadHash: string | null) => Promise<ReviewContextState>;

export interface ReviewContextViewProps {
  actionKey: string;
  /** payload_hash of the record's verified seal; null when it did not verify; undefined while the record loads. */
  sealedPayloadHash: string | null | undefined;
  load: ContextLoader;
  onState: (state: ReviewContextState) => void;
}

export function ReviewContextView({ actionKey, sealedPayloadHash, load, onState }: ReviewContextViewProps) {
  const [state, setState] = useState<ReviewContextState>({ kind: 'loading' });
  useEffect(() => {
    let live = true;
    setState({ kind: 'loading' });
    if (sealedPayloadHash === undefined) return;
    load(actionKey, sealedPayloadHash).then(
      (s) => live && setState(s),
      (e: unknown) => live && setState({ kind: 'error', message: e instanceof Error ? e.message : String(e) }),
    );
    return () => {
      live = false;
    };
  }, [actionKey, sealedPayloadHash]);
  useEffect(() => onState(state), [state]);

  switch (state.kind) {
    case 'loading':
      return (
        <p class="ag-context ag-hint" data-context="loading">
          Opening the review context on this device…
        </p>
      );
    case 'no_device':
      return (
        <p class="ag-context ag-hint" data-context="no_device">
          Context not shared: this key is not a person’s, so no review context is sealed to it.
        </p>
      );
    case 'not_shared':
      return (
        <p class="ag-context ag-hint" data-context="not_shared">
          Context not shared with this device: the employee’s browser did not seal this action’s context to it.
        </p>
      );
    case 'expired':
      return (
        <p class="ag-context ag-hint" data-context="expired">
          Context expired: the review ended, and its context was erased with it.
        </p>
      );
    case 'error':
      return (
        <p class="ag-context ag-problem" data-context="error">
          The review context could not be fetched ({state.message}). Approve stays disabled.
        </p>
      );
    case 'refused':
      return (
        <p class="ag-context ag-problem" role="alert" data-context="refused">
          <strong>Do not approve on this context:</strong> {state.why}. Approve stays disabled.
        </p>
      );
    case 'opened':
      return <OpenedContext doc={state.doc} check={state.check} />;
  }
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v, null, 2);
}

function OpenedContext({ doc, check }: { doc: ReviewContextDocument; check: ContextCheck }) {
  const req = doc.gate_request;
  const contextField = req.law_context ?? req.context;
  return (
    <section class="ag-context" data-context="opened" data-match={String(check.match)} aria-label="What was gated">
      {check.match ? (
        <p class="ag-context-match">This is exactly what was gated: its payload_hash recomputes to the sealed {check.expected.slice(0, 16)}….</p>
      ) : (
        <p class="ag-context-mismatch ag-problem" role="alert">
          <strong>Mismatch: this is not what was gated.</strong> The sealed payload_hash is {check.expected}; this context hashes to {check.computed}
          {check.file_name_mismatches.length > 0 ? `, and ${check.file_name_mismatches.length} file name(s) do not match their hash` : ''}. Approve stays disabled.
        </p>
      )}
      <dl>
        <dt>Proposed action</dt>
        <dd>{text(req.proposed_action)}</dd>
        {req.action_type !== undefined && (
          <>
            <dt>Action type</dt>
            <dd>{text(req.action_type)}</dd>
          </>
        )}
        {req.redacted_text !== undefined && (
          <>
            <dt>Text sent (after redaction)</dt>
            <dd>
              <pre class="ag-context-text">{text(req.redacted_text)}</pre>
            </dd>
          </>
        )}
        {contextField !== undefined && (
          <>
            <dt>Context</dt>
            <dd>
              <pre class="ag-context-fields">{text(contextField)}</pre>
            </dd>
          </>
        )}
        {doc.files && doc.files.length > 0 && (
          <>
            <dt>Files</dt>
            <dd>
              <ul class="ag-context-files">
                {doc.files.map((f) => (
                  <li key={f.sha256}>
                    {f.name ?? '(name not shared)'} · {f.media_type || 'unknown type'} · {f.size} bytes · SHA-256 <code>{f.sha256.slice(0, 16)}…</code>
                  </li>
                ))}
              </ul>
            </dd>
          </>
        )}
      </dl>
    </section>
  );
}
