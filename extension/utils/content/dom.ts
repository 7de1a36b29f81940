/**
 * Reading a site through its adapter: where the composer and the send control are, what text
 * is about to be sent, and how to let a held action through.
 *
 * Real composer pages are messier than one element per selector: a hidden fallback textarea
 * precedes the rich editor, the editor sits in an open shadow root or a same-origin iframe, and
 * React re-creates it while an action waits. So every lookup searches across open shadow roots
 * and same-origin iframes, skips what is not rendered, and prefers the composer the person is
 * using (ComposerTracker in composers.ts) over document order.
 *
 * Elements may come from an iframe's realm, where `instanceof HTMLElement` is false: checks
 * here go by nodeType and tagName instead.
 */
import type { SiteAdapter } from '../adapters/definitions.ts';

export function isElement(node: unknown): node is HTMLElement {
  return typeof node === 'object' && node !== null && (node as Node).nodeType === 1 && typeof (node as Element).matches === 'function';
}

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
    if (isElement(node) && matches(node, selector)) return node;
  }
  return null;
}

/**
 * Every element matching `selector` under `root`, in document order, then inside open shadow
 * roots and same-origin iframes (a cross-origin frame's contentDocument is null).
 */
export function deepQueryAll(root: Document | ShadowRoot | Element, selector: string): HTMLElement[] {
  const out: HTMLElement[] = [];
  try {
    out.push(...Array.from(root.querySelectorAll<HTMLElement>(selector)));
  } catch {
    return out; // an invalid selector matches nothing
  }
  for (const el of Array.from(root.querySelectorAll<HTMLElement>('*'))) {
    if (el.shadowRoot) out.push(...deepQueryAll(el.shadowRoot, selector));
    if (el.tagName === 'IFRAME') {
      const doc = sameOriginDocument(el as HTMLIFrameElement);
      if (doc) out.push(...deepQueryAll(doc, selector));
    }
  }
  return out;
}

export function sameOriginDocument(frame: HTMLIFrameElement): Document | null {
  try {
    return frame.contentDocument;
  } catch {
    return null;
  }
}

/** The parent across shadow boundaries and out of a same-origin iframe into its host element. */
function parentAcross(el: Element): Element | null {
  if (el.parentElement) return el.parentElement;
  const root = el.getRootNode();
  if ((root as ShadowRoot).host) return (root as ShadowRoot).host;
  return (el.ownerDocument.defaultView?.frameElement as Element | null | undefined) ?? null;
}

/** Rendered and not hidden: a `display: none` fallback, `visibility: hidden` or a detached node is not a composer. */
export function isVisible(el: Element): boolean {
  if (!el.isConnected) return false;
  if (typeof el.checkVisibility === 'function' && !el.checkVisibility({ visibilityProperty: true })) return false;
  const frame = el.ownerDocument.defaultView?.frameElement;
  return frame ? isVisible(frame) : true;
}

/**
 * The nearest visible match of `selector` to `from`: searched under each of its ancestors in
 * turn (across shadow and frame boundaries), so a composer's own send control wins over another's.
 */
export function nearestVisible(selector: string, from: Element): HTMLElement | null {
  for (let el: Element | null = from; el !== null; el = parentAcross(el)) {
    try {
      const found = Array.from(el.querySelectorAll<HTMLElement>(selector)).find(isVisible);
      if (found) return found;
    } catch {
      return null;
    }
  }
  return null;
}

/** The send control that belongs to `composer`: the nearest visible one, else any visible one. */
export function findSend(adapter: SiteAdapter, composer: Element): HTMLElement | null {
  return nearestVisible(adapter.send, composer) ?? deepQueryAll(document, adapter.send).find(isVisible) ?? null;
}

export function isDisabled(el: Element): boolean {
  return (el as HTMLButtonElement).disabled === true || el.getAttribute('aria-disabled') === 'true';
}

function isTextField(el: Element): el is HTMLTextAreaElement | HTMLInputElement {
  return el.tagName === 'TEXTAREA' || el.tagName === 'INPUT';
}

/** What the composer holds: a textarea's value, or a contenteditable editor's text. */
export function composerText(composer: HTMLElement): string {
  if (isTextField(composer)) return composer.value;
  const text = composer.innerText;
  // innerText is empty for an element not being rendered (e.g. before layout); fall back.
  return text === '' || text === undefined ? (composer.textContent ?? '') : text;
}

/**
 * A person's click, as the page sees it: pointer and mouse down and up, then click. Some
 * composers send on pointerdown or mousedown, so `element.click()` alone would not send there.
 */
export function pressLikeAPerson(el: HTMLElement): void {
  const view = el.ownerDocument.defaultView ?? window;
  const init = { bubbles: true, cancelable: true, composed: true, button: 0, view };
  const PointerCtor = (view as typeof window).PointerEvent ?? (view as typeof window).MouseEvent;
  el.dispatchEvent(new PointerCtor('pointerdown', { ...init, pointerType: 'mouse', isPrimary: true }));
  el.dispatchEvent(new (view as typeof window).MouseEvent('mousedown', init));
  el.dispatchEvent(new PointerCtor('pointerup', { ...init, pointerType: 'mouse', isPrimary: true }));
  el.dispatchEvent(new (view as typeof window).MouseEvent('mouseup', init));
  el.click();
}

/**
 * Lets a held action through, once, with the first release strategy that applies, on the live
 * composer and its live send control; `bypass` runs the dispatch while the interceptor stands
 * aside. Returns the strategy used, or null when none applied (no send control, no form).
 */
export function releaseHeldAction(adapter: SiteAdapter, composer: HTMLElement, bypass: (dispatch: () => void) => void): string | null {
  for (const strategy of adapter.release) {
    if (strategy === 'click-send') {
      const send = findSend(adapter, composer);
      if (send && !isDisabled(send)) {
        bypass(() => pressLikeAPerson(send));
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
      const view = composer.ownerDocument.defaultView ?? window;
      bypass(() => {
        composer.focus();
        composer.dispatchEvent(new view.KeyboardEvent('keydown', { key: 'Enter', code: 'Enter', keyCode: 13, which: 13, bubbles: true, cancelable: true, composed: true }));
      });
      return strategy;
    }
  }
  return null;
}

function isSubmitButton(el: Element): el is HTMLButtonElement | HTMLInputElement {
  return (el.tagName === 'BUTTON' || el.tagName === 'INPUT') && (el as HTMLButtonElement).type === 'submit';
}

/** The conversation id from the URL (adapter.conversation), else the path: hashed into source_key. */
export function conversationOf(adapter: SiteAdapter, location: Location): string {
  if (adapter.conversation) {
    const m = new RegExp(adapter.conversation).exec(location.pathname);
    if (m?.[1]) return m[1];
  }
  return location.pathname;
}
