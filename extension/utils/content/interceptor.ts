/**
 * Holds the page's send actions: Enter in the composer (not Shift+Enter, not
 * while an IME is composing), pointerdown and click on the send control, and form submits,
 * caught in the capture phase on `window` from a document_start content script. Registered
 * before any page script runs, these listeners run first, and a held event is stopped with
 * preventDefault and stopImmediatePropagation, so nothing reaches the page's own handlers until
 * the gate answers (shared/notes/extension-testing.md, "Intercepting AI-tool actions").
 *
 * Same-origin iframes get the same listeners as they load (a composer may live in one), and a
 * send with nothing in the composer is let through: there is nothing to gate, and holding it
 * would swallow the click.
 *
 * Files are actions too: a file picked, dropped or pasted into a gated page is held before the
 * page's handlers see it and handed over only once the gate lets it in.
 */
import { BUILT_IN_ADAPTERS } from '../adapters/definitions.ts';
import type { SiteAdapter } from '../adapters/definitions.ts';
import { ComposerTracker } from './composers.ts';
import { closestInPath, composerText, isDisabled, isElement, matches, sameOriginDocument } from './dom.ts';

export type Trigger = 'enter' | 'click' | 'pointer' | 'submit';

export interface InterceptorHooks {
  /** The page's adapter; undefined while the background has not answered yet. */
  adapter(): SiteAdapter | null | undefined;
  /** A send was held; `composer` holds the text to gate. */
  held(composer: HTMLElement, trigger: Trigger): void;
  /** Files on their way into the page were held; `redeliver` hands them over, `discard` drops them. */
  heldFiles?(held: HeldFiles): void;
  /** Text is being pasted into `composer`; true when it was held (it had flagged spans). */
  pastedText?(composer: HTMLElement, text: string): boolean;
}

/** Files held before the page received them (file input, drop or paste), and how to let them in. */
export interface HeldFiles {
  files: File[];
  redeliver(): void;
  discard(): void;
}

/**
 * Before the background has said which adapter serves the page, sends that look like any
 * built-in adapter's are held too (fail closed) and handed over once it answers.
 */
const ANY_COMPOSER = Object.values(BUILT_IN_ADAPTERS).map((a) => a.composer).join(', ');
const ANY_SEND = Object.values(BUILT_IN_ADAPTERS).map((a) => a.send).join(', ');

type Listeners = [type: string, listener: (e: never) => void][];

export class Interceptor {
  readonly composers = new ComposerTracker();
  private bypassDepth = 0;
  private early: { target: HTMLElement; trigger: Trigger } | null = null;
  /** A held pointerdown's own click is part of the same press: it is stopped too, never gated again. */
  private pressHeld = false;
  private readonly installed = new Map<Window, () => void>();

  constructor(private readonly hooks: InterceptorHooks) {}

  /** Adds the capture listeners; returns their removal (for when the extension is reloaded). */
  install(target: Window): () => void {
    this.listenOn(target);
    return () => {
      for (const remove of this.installed.values()) remove();
      this.installed.clear();
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
    const composer = matches(early.target, adapter.composer) ? early.target : this.composers.find(adapter, early.target);
    if (composer) this.hooks.held(composer, early.trigger);
  }

  private listenOn(target: Window): void {
    if (this.installed.has(target)) return;
    const listeners: Listeners = [
      ['keydown', this.onKeydown],
      ['pointerdown', this.onPress],
      ['click', this.onPress],
      ['submit', this.onSubmit],
      ['focusin', this.onUse],
      ['input', this.onUse],
      ['input', this.onFileInput],
      ['change', this.onFileInput],
      ['drop', this.onDrop],
      ['paste', this.onPaste],
    ];
    for (const [type, fn] of listeners) target.addEventListener(type, fn as EventListener, { capture: true });
    // An element's `load` never reaches Window (HTML "get the parent" of a Document is null for
    // load events), so iframes are watched from the document.
    const doc = target.document;
    doc.addEventListener('load', this.onLoad, { capture: true });
    this.installed.set(target, () => {
      for (const [type, fn] of listeners) target.removeEventListener(type, fn as EventListener, { capture: true });
      doc.removeEventListener('load', this.onLoad, { capture: true });
    });
    for (const frame of Array.from(doc.querySelectorAll('iframe'))) this.listenInFrame(frame);
  }

  /** A same-origin iframe's window gets our listeners once its document is there (load fires on each navigation). */
  private listenInFrame(frame: HTMLIFrameElement): void {
    const doc = sameOriginDocument(frame);
    if (doc?.defaultView) this.listenOn(doc.defaultView);
  }

  private readonly onLoad = (e: Event): void => {
    // `load` does not bubble, but the capture phase on the document sees every iframe's.
    if (isElement(e.target) && e.target.tagName === 'IFRAME') this.listenInFrame(e.target as HTMLIFrameElement);
  };

  private readonly onUse = (e: Event): void => {
    const adapter = this.hooks.adapter();
    if (adapter) this.composers.note(adapter, e);
  };

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

  private readonly onPress = (e: MouseEvent): void => {
    if (this.bypassDepth > 0 || e.button !== 0) return;
    if (e.type === 'pointerdown') this.pressHeld = false;
    else if (this.pressHeld) {
      this.pressHeld = false;
      e.preventDefault();
      e.stopImmediatePropagation();
      return;
    }
    const adapter = this.hooks.adapter();
    if (adapter === null) return;
    const send = closestInPath(e, adapter ? adapter.send : ANY_SEND);
    if (!send || isDisabled(send)) return;
    const trigger = e.type === 'click' ? 'click' : 'pointer';
    if (adapter === undefined) return this.hold(e, send, trigger, true);
    const composer = this.composers.find(adapter, send);
    if (composer) this.hold(e, composer, trigger, false);
  };

  private readonly onSubmit = (e: SubmitEvent): void => {
    if (this.bypassDepth > 0) return;
    const adapter = this.hooks.adapter();
    if (adapter === null || !isElement(e.target) || e.target.tagName !== 'FORM') return;
    const composer = adapter ? this.composers.find(adapter, e.target) : closestComposerIn(e.target, ANY_COMPOSER);
    if (composer && (adapter === undefined || e.target.contains(composer))) this.hold(e, composer, 'submit', adapter === undefined);
  };

  /**
   * A file picked through an <input type=file>: its input and change events are held, so the
   * page's handlers (which read input.files and upload) run only once the gate let it in.
   */
  private readonly onFileInput = (e: Event): void => {
    if (this.bypassDepth > 0 || !this.hooks.adapter() || !this.hooks.heldFiles) return;
    const input = e.target;
    if (!isElement(input) || input.tagName !== 'INPUT' || (input as HTMLInputElement).type !== 'file') return;
    const files = Array.from((input as HTMLInputElement).files ?? []);
    if (files.length === 0) return;
    e.stopImmediatePropagation();
    if (e.type === 'change') return; // the same pick as its input event, held already
    const view = input.ownerDocument.defaultView ?? window;
    this.hooks.heldFiles({
      files,
      redeliver: () =>
        this.bypass(() => {
          input.dispatchEvent(new view.Event('input', { bubbles: true, composed: true }));
          input.dispatchEvent(new view.Event('change', { bubbles: true }));
        }),
      discard: () => void ((input as HTMLInputElement).value = ''),
    });
  };

  private readonly onDrop = (e: DragEvent): void => {
    const files = Array.from(e.dataTransfer?.files ?? []);
    if (this.bypassDepth > 0 || files.length === 0 || !this.hooks.adapter() || !this.hooks.heldFiles) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    const target = e.target as EventTarget;
    const { clientX, clientY } = e;
    this.hooks.heldFiles({
      files,
      redeliver: () => this.bypass(() => target.dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, composed: true, clientX, clientY, dataTransfer: carrying(files) }))),
      discard: () => undefined,
    });
  };

  private readonly onPaste = (e: ClipboardEvent): void => {
    const files = Array.from(e.clipboardData?.files ?? []);
    const adapter = this.hooks.adapter();
    if (this.bypassDepth > 0 || !adapter) return;
    if (files.length === 0) {
      const composer = closestInPath(e, adapter.composer);
      const text = e.clipboardData?.getData('text/plain') ?? '';
      if (composer && text !== '' && this.hooks.pastedText?.(composer, text)) {
        e.preventDefault();
        e.stopImmediatePropagation();
      }
      return;
    }
    if (!this.hooks.heldFiles) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    const target = e.target as EventTarget;
    this.hooks.heldFiles({
      files,
      redeliver: () => this.bypass(() => target.dispatchEvent(new ClipboardEvent('paste', { bubbles: true, cancelable: true, composed: true, clipboardData: carrying(files) }))),
      discard: () => undefined,
    });
  };

  private hold(e: Event, target: HTMLElement, trigger: Trigger, early: boolean): void {
    // Nothing typed: nothing to gate, and the page sends nothing from an empty composer.
    if (!early && composerText(target).trim() === '') return;
    e.preventDefault();
    e.stopImmediatePropagation();
    if (trigger === 'pointer') this.pressHeld = true;
    if (early) this.early ??= { target, trigger };
    else this.hooks.held(target, trigger);
  }
}

/** A DataTransfer holding `files`, for re-delivering a held drop or paste. */
function carrying(files: readonly File[]): DataTransfer {
  const dt = new DataTransfer();
  for (const f of files) dt.items.add(f);
  return dt;
}

function closestComposerIn(form: HTMLElement, selector: string): HTMLElement | null {
  try {
    return form.querySelector<HTMLElement>(selector);
  } catch {
    return null;
  }
}
