/**
 * Which composer a send is about: the one the person typed into, never merely the first match
 * in document order. Sites keep hidden fallbacks (a `display: none` textarea before the rich
 * editor), several editors (an edit box per earlier message) and re-create the editor on a
 * re-render, so the tracker remembers the composer that last had focus or input and the lookup
 * prefers, in order: the focused composer, the last edited one (a click on send moves focus to
 * the button), the one nearest the send control, any visible one.
 */
import type { SiteAdapter } from '../adapters/definitions.ts';
import { closestInPath, deepQueryAll, isVisible, nearestVisible } from './dom.ts';

export class ComposerTracker {
  private last: HTMLElement | null = null;

  /** Called for focusin and input events seen on the page (capture phase). */
  note(adapter: SiteAdapter, event: Event): void {
    const composer = closestInPath(event, adapter.composer);
    if (composer) this.last = composer;
  }

  /** The composer a send from `from` (the send control, a form, the composer itself) is about. */
  find(adapter: SiteAdapter, from?: Element | null): HTMLElement | null {
    const focused = focusedComposer(adapter);
    if (focused) return focused;
    if (this.last && isVisible(this.last)) return this.last;
    return (from ? nearestVisible(adapter.composer, from) : null) ?? deepQueryAll(document, adapter.composer).find(isVisible) ?? null;
  }
}

/** The deepest focused element (through open shadow roots and same-origin iframes), if it is a composer. */
function focusedComposer(adapter: SiteAdapter): HTMLElement | null {
  let active: Element | null = document.activeElement;
  for (;;) {
    const inner = active?.shadowRoot?.activeElement ?? (active?.tagName === 'IFRAME' ? frameActive(active as HTMLIFrameElement) : null);
    if (!inner || inner === active) break;
    active = inner;
  }
  if (!active) return null;
  for (let el: Element | null = active; el !== null; el = el.parentElement) {
    try {
      if (el.matches(adapter.composer)) return isVisible(el) ? (el as HTMLElement) : null;
    } catch {
      return null;
    }
  }
  return null;
}

function frameActive(frame: HTMLIFrameElement): Element | null {
  try {
    return frame.contentDocument?.activeElement ?? null;
  } catch {
    return null;
  }
}
