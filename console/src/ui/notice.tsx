import type { ComponentChildren } from 'preact';
import { ApiError } from '../api.ts';

type Tone = 'info' | 'success' | 'warning' | 'error';

/** A message in the flow of the page; errors and successes are announced to screen readers. */
export function Notice({ tone = 'info', children }: { tone?: Tone; children: ComponentChildren }) {
  const role = tone === 'error' ? 'alert' : tone === 'success' ? 'status' : undefined;
  return (
    <div class={`notice notice-${tone}`} role={role}>
      {children}
    </div>
  );
}

/** What went wrong with a call, in words: the problem's detail and its stable code. */
export function ErrorNotice({ error }: { error: unknown }) {
  if (error instanceof ApiError) {
    const { problem } = error;
    return (
      <Notice tone="error">
        {problem.detail ?? `The service answered HTTP ${problem.status}.`}
        {problem.code ? <span class="code"> ({problem.code})</span> : null}
      </Notice>
    );
  }
  return <Notice tone="error">{error instanceof Error ? error.message : String(error)}</Notice>;
}

/** Shown where a person lacks the capability an action needs: disabled with the reason, never hidden. */
export function NeedsCapability({ capability, what }: { capability: string; what: string }) {
  return (
    <p class="needs-capability">
      To {what}, you need the <code>{capability}</code> capability. Ask the tenant’s owner to grant it.
    </p>
  );
}
