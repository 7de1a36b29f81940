/**
 * Holds the page's send actions (issue 5, item 1): Enter in the composer (not Shift+Enter, not
 * while an IME is composing), clicks on the send control and form submits, caught in the
 * capture phase on `window` from a document_start content script. Registered before any page
 * script runs, these listeners run first, and a held event is stopped with preventDefault and
 * stopImmediatePropagation, so nothing reaches the page's own handlers until the gate answers
 * (shared/notes/extension-testing.md, "Intercepting AI-tool actions").
 */
import { BUILT_IN_ADAPTERS } from '../adapters/definitions.ts';
import type { SiteAdapter } from '../adapters/definitions.ts';
import { closestInPath, findComposer, isDisabled, matches } from './dom.ts';

export type Trigger = 'enter' | 'click' | 'submit';

export interface InterceptorHooks {
  /** The page's adapter; undefined while the background has not answered yet. */
  adapter(): SiteAdapter | null | undefined;
  /** A send was held; `composer` holds the text to gate. */
  held(composer: HTMLElement, trigger: Trigger): void;
}

/**
 * Before the background has said which adapter serves the page, sends that look like any
 * built-in adapter's are held too (fail closed) and handed over once it answers.
 */
const ANY_COMPOSER = Object.values(BUILT_IN_ADAPTERS).map((a) => a.composer).join(', ');
const ANY_SEND = Object.values(BUILT_IN_ADAPTERS).map((a) => a.send).join(', ');

export class Interceptor {
  private bypassDepth = 0;
  private early: { target: HTMLElement; trigger: Trigger } | null = null;

  constructor(private readonly hooks: InterceptorHooks) {}

  /** Adds the capture listeners; returns their removal (for when the extension is reloaded). */
  install(target: Window): () => void {
    target.addEventListener('keydown', this.onKeydown, { capture: true });
    target.addEventListener('click', this.onClick, { capture: true });
    target.addEventListener('submit', this.onSubmit, { capture: true });
    return () => {
      target.removeEventListener('keydown', this.onKeydown, { capture: true });
      target.removeEventListener('click', this.onClick, { capture: true });
      target.removeEventListener('submit', this.onSubmit, { capture: true });
    };
  }

  /** Runs `dispatch` (our own release of a held action) without holding what it dispatches. */
  bypass(dispatch: () => void): void {
    this.bypassDepth++;
    try {
      dispatch();
    } finally {
      this.bypassDepth--;
    }
  }

  /** Called once the adapter is known: a send held before then is gated now, if it was one. */
  adapterKnown(adapter: SiteAdapter | null): void {
    const early = this.early;
    this.early = null;
    if (!early || !adapter) return;
    const composer = matches(early.target, adapter.composer) ? early.target : findComposer(adapter, early.target);
    if (composer) this.hooks.held(composer, early.trigger);
  }

  private readonly onKeydown = (e: KeyboardEvent): void => {
    if (this.bypassDepth > 0) return;
    // keyCode 229: the key belongs to an IME composition (older engines lack isComposing).
    if (e.key !== 'Enter' || e.shiftKey || e.isComposing || e.keyCode === 229) return;
    const adapter = this.hooks.adapter();
    if (adapter === null || (adapter && !adapter.enterSends)) return;
    const composer = closestInPath(e, adapter ? adapter.composer : ANY_COMPOSER);
    if (!composer) return;
    this.hold(e, composer, 'enter', adapter === undefined);
  };

  private readonly onClick = (e: MouseEvent): void => {
    if (this.bypassDepth > 0) return;
    const adapter = this.hooks.adapter();
    if (adapter === null) return;
    const send = closestInPath(e, adapter ? adapter.send : ANY_SEND);
    if (!send || isDisabled(send)) return;
    if (adapter === undefined) return this.hold(e, send, 'click', true);
    const composer = findComposer(adapter, send);
    if (composer) this.hold(e, composer, 'click', false);
  };

  private readonly onSubmit = (e: SubmitEvent): void => {
    if (this.bypassDepth > 0) return;
    const adapter = this.hooks.adapter();
    if (adapter === null || !(e.target instanceof HTMLFormElement)) return;
    let composer: HTMLElement | null = null;
    try {
      composer = e.target.querySelector<HTMLElement>(adapter ? adapter.composer : ANY_COMPOSER);
    } catch {
      return;
    }
    if (composer) this.hold(e, composer, 'submit', adapter === undefined);
  };

  private hold(e: Event, target: HTMLElement, trigger: Trigger, early: boolean): void {
    e.preventDefault();
    e.stopImmediatePropagation();
    if (early) this.early ??= { target, trigger };
    else this.hooks.held(target, trigger);
  }
}
