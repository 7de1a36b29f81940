import type { ComponentChildren } from 'preact';

export type BadgeTone = 'ok' | 'bad' | 'wait' | 'neutral';

/** A status word with its colour; the word carries the meaning, the colour only repeats it. */
export function Badge({ tone, children, title }: { tone: BadgeTone; children: ComponentChildren; title?: string }) {
  return (
    <span class={`badge badge-${tone}`} title={title}>
      {children}
    </span>
  );
}

export function decisionTone(decision: string | null): BadgeTone {
  if (decision === 'allow' || decision === 'approved') return 'ok';
  if (decision === 'blocked' || decision === 'rejected') return 'bad';
  if (decision === 'needs_review' || decision === 'escalated' || decision === 'pending') return 'wait';
  return 'neutral';
}

/** An integration's readiness state (integrations/ readiness), as a badge. */
export function ReadinessBadge({ state }: { state: string }) {
  return <Badge tone={state === 'ready' ? 'ok' : state === 'disabled' ? 'neutral' : 'bad'}>{state.replaceAll('_', ' ')}</Badge>;
}
