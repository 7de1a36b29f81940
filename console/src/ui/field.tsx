import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';

/**
 * A labelled control with its hint and its error, wired for assistive technology: the label
 * names the control, aria-describedby reads the hint and the error, aria-invalid marks it.
 * `children` receives the ids to put on the control.
 */
export function Field({
  label,
  hint,
  error,
  children,
}: {
  label: string;
  hint?: string | undefined;
  error?: string | undefined;
  children: (a11y: { id: string; 'aria-describedby'?: string; 'aria-invalid'?: 'true' }) => ComponentChildren;
}) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ');
  return (
    <div class={`field${error ? ' field-invalid' : ''}`}>
      <label for={id}>{label}</label>
      {children({ id, ...(describedBy ? { 'aria-describedby': describedBy } : {}), ...(error ? { 'aria-invalid': 'true' as const } : {}) })}
      {hint ? (
        <p class="hint" id={hintId}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p class="field-error" id={errorId}>
          {error}
        </p>
      ) : null}
    </div>
  );
}
