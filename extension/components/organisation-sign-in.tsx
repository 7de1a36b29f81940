/**
 * The reviewer role's "Sign in with your organisation" (utils/device-sign-in.ts): shows the code
 * to approve in the console, opens the console's approval page, and reports the outcome.
 * Presentational: the container starts and cancels the sign-in.
 */
export type OrganisationSignInState =
  | { kind: 'idle' }
  | { kind: 'waiting'; userCode: string; verificationUri: string }
  | { kind: 'signed-in'; scope: string }
  | { kind: 'failed'; detail: string };

export function OrganisationSignIn({ state, disabled, onStart, onCancel }: { state: OrganisationSignInState; disabled: boolean; onStart: () => void; onCancel: () => void }) {
  return (
    <section class="ag-card" aria-labelledby="org-sign-in">
      <h2 id="org-sign-in">Sign in with your organisation</h2>
      <p>Instead of pasting an API key, approve this browser in the Action Gate console, where you sign in with your organisation’s account.</p>
      {state.kind === 'waiting' ? (
        <div role="status">
          <p>
            In the console, approve the code <strong class="ag-user-code">{state.userCode}</strong>. A tab with the approval page has been opened; if not, go to{' '}
            <a href={state.verificationUri} target="_blank" rel="noreferrer">
              {state.verificationUri}
            </a>
            .
          </p>
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      ) : (
        <button type="button" disabled={disabled} onClick={onStart}>
          Sign in with your organisation
        </button>
      )}
      {state.kind === 'signed-in' ? (
        <p class="ag-status ag-status-saved" role="status">
          Signed in. This browser now acts for you with: {state.scope}. Revoke it any time from the console.
        </p>
      ) : null}
      {state.kind === 'failed' ? (
        <p class="ag-problem" role="alert">
          {state.detail}
        </p>
      ) : null}
    </section>
  );
}
