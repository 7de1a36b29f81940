import type { ComponentChildren } from 'preact';

/**
 * A table that scrolls sideways when the window is narrow. The scrolling region is focusable
 * and named so keyboard users can scroll it too (WCAG 2.1.1; axe "scrollable-region-focusable").
 */
export function TableWrap({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={label}>
      {children}
    </div>
  );
}

/** A table's header row; a column named `{ hidden }` has a name only screen readers read. */
export function Columns({ names }: { names: (string | { hidden: string })[] }) {
  return (
    <thead>
      <tr>
        {names.map((n) => (
          <th scope="col" key={typeof n === 'string' ? n : n.hidden}>
            {typeof n === 'string' ? n : <span class="visually-hidden">{n.hidden}</span>}
          </th>
        ))}
      </tr>
    </thead>
  );
}
