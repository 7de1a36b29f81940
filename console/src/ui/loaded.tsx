import type { ComponentChildren } from 'preact';
import type { Loaded as LoadState } from './load.ts';
import { ErrorNotice } from './notice.tsx';

/** A loaded value's three states: its error, its content, or "Loading…" until it arrives. */
export function Loaded<T>({ state, children }: { state: LoadState<T>; children: (data: T) => ComponentChildren }) {
  if (state.error) return <ErrorNotice error={state.error} />;
  return state.data === undefined ? <p>Loading…</p> : <>{children(state.data)}</>;
}
