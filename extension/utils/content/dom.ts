/**
 * Reading a site through its adapter: where the composer and the send control are, what text
 * is about to be sent, and how to let a held action through (issue 5, item 1).
 */
import type { SiteAdapter } from '../adapters/definitions.ts';

/** Element.matches that treats an invalid (admin-typed) selector as "no match". */
export function matches(el: Element, selector: string): boolean {
  try {
    return el.matches(selector);
  } catch {
    return false;
  }
}

/** The innermost element on the event's path (open shadow roots included) matching `selector`. */
export function closestInPath(event: Event, selector: string): HTMLElement | null {
  for (const node of event.composedPath()) {
    if (node instanceof HTMLElement && matches(node, selector)) return node;
  }
  return null;
}

function query(root: ParentNode, selector: string): HTMLElement | null {
  try {
    return root.querySelector<HTMLElement>(selector);
  } catch {
    return null;
  }
}

/** The composer nearest to `from` (the send button or form), else the page's first composer. */
export function findComposer(adapter: SiteAdapter, from?: Element | null): HTMLElement | null {
  for (let el = from?.parentElement ?? null; el !== null; el = el.parentElement) {
    const found = query(el, adapter.composer);
    if (found) return found;
  }
  return query(document, adapter.composer);
}

/** The send control that belongs to `composer`: the nearest one up its ancestors. */
export function findSend(adapter: SiteAdapter, composer: Element): HTMLElement | null {
  for (let el = composer.parentElement; el !== null; el = el.parentElement) {
    const found = query(el, adapter.send);
    if (found) return found;
  }
  return query(document, adapter.send);
}

export function isDisabled(el: Element): boolean {
  return (el as HTMLButtonElement).disabled === true || el.getAttribute('aria-disabled') === 'true';
}

/** What the composer holds: a textarea's value, or a contenteditable editor's text. */
export function composerText(composer: HTMLElement): string {
  if (composer instanceof HTMLTextAreaElement || composer instanceof HTMLInputElement) return composer.value;
  const text = composer.innerText;
  // innerText is empty for an element not being rendered (e.g. before layout); fall back.
  return text === '' || text === undefined ? (composer.textContent ?? '') : text;
}

/**
 * Lets a held action through, once, with the first release strategy that applies; `bypass` runs
 * the dispatch while the interceptor stands aside. Returns the strategy used, or null when none
 * applied (no send control, no form).
 */
export function releaseHeldAction(adapter: SiteAdapter, composer: HTMLElement, bypass: (dispatch: () => void) => void): string | null {
  for (const strategy of adapter.release) {
    if (strategy === 'click-send') {
      const send = findSend(adapter, composer);
      if (send && !isDisabled(send)) {
        bypass(() => send.click());
        return strategy;
      }
    } else if (strategy === 'request-submit') {
      const form = composer.closest('form');
      if (form) {
        const send = findSend(adapter, composer);
        const submitter = send && send.closest('form') === form && isSubmitButton(send) ? send : null;
        bypass(() => form.requestSubmit(submitter));
        return strategy;
      }
    } else {
      // A synthetic Enter is untrusted: textareas with a keydown handler accept it, most
      // rich-text editors do not, which is why it is never the first choice.
      bypass(() => {
        composer.focus();
        composer.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', code: 'Enter', keyCode: 13, which: 13, bubbles: true, cancelable: true, composed: true }));
      });
      return strategy;
    }
  }
  return null;
}

function isSubmitButton(el: Element): el is HTMLButtonElement | HTMLInputElement {
  return (el instanceof HTMLButtonElement && el.type === 'submit') || (el instanceof HTMLInputElement && el.type === 'submit');
}

/** The conversation id from the URL (adapter.conversation), else the path: hashed into source_key. */
export function conversationOf(adapter: SiteAdapter, location: Location): string {
  if (adapter.conversation) {
    const m = new RegExp(adapter.conversation).exec(location.pathname);
    if (m?.[1]) return m[1];
  }
  return location.pathname;
}
