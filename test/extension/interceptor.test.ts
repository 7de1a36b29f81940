// @vitest-environment happy-dom
/**
 * The interceptor: Enter (not Shift+Enter, not while composing), send clicks
 * and form submits are held in the capture phase on window, before the page's own handlers;
 * our own release passes through.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BUILT_IN_ADAPTERS, DEFAULT_GENERIC_ADAPTER, genericAdapter } from '../../extension/utils/adapters/definitions.ts';
import type { SiteAdapter } from '../../extension/utils/adapters/definitions.ts';
import { Interceptor } from '../../extension/utils/content/interceptor.ts';
import type { Trigger } from '../../extension/utils/content/interceptor.ts';
import { loadFixtureMarkup } from './fixture-dom.ts';

let adapter: SiteAdapter | null | undefined;
let held: { composer: HTMLElement; trigger: Trigger }[];
let pageSaw: string[];
let interceptor: Interceptor;
let uninstall: () => void;

function pageListens(target: EventTarget, type: string) {
  const fn = (e: Event) => pageSaw.push(`${type}${(e as KeyboardEvent).shiftKey ? '+shift' : ''}`);
  target.addEventListener(type, fn);
}

beforeEach(() => {
  held = [];
  pageSaw = [];
  interceptor = new Interceptor({ adapter: () => adapter, held: (composer, trigger) => held.push({ composer, trigger }) });
  uninstall = interceptor.install(window);
});

afterEach(() => {
  uninstall();
  document.body.innerHTML = '';
});

const enter = (init: KeyboardEventInit = {}) => new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true, composed: true, ...init });

describe('on a chat site (ChatGPT fixture)', () => {
  beforeEach(() => {
    adapter = BUILT_IN_ADAPTERS.chatgpt;
    loadFixtureMarkup('chatgpt');
    document.querySelector('#prompt-textarea')!.innerHTML = '<p>What is the capital of France?</p>';
  });

  it('holds Enter in the composer before the page sees it', () => {
    const composer = document.querySelector<HTMLElement>('#prompt-textarea')!;
    pageListens(composer, 'keydown');
    const e = enter();
    composer.dispatchEvent(e);
    expect(e.defaultPrevented).toBe(true);
    expect(pageSaw).toEqual([]);
    expect(held).toEqual([{ composer, trigger: 'enter' }]);
  });

  it('lets Shift+Enter, IME composition and other keys through', () => {
    const composer = document.querySelector<HTMLElement>('#prompt-textarea')!;
    pageListens(composer, 'keydown');
    composer.dispatchEvent(enter({ shiftKey: true }));
    composer.dispatchEvent(enter({ isComposing: true }));
    composer.dispatchEvent(new KeyboardEvent('keydown', { key: 'a', bubbles: true, cancelable: true }));
    expect(pageSaw).toHaveLength(3);
    expect(held).toEqual([]);
  });

  it('holds a click on the send button and the form submit', () => {
    const send = document.querySelector<HTMLElement>('button[data-testid="send-button"]')!;
    const form = document.querySelector('form')!;
    pageListens(send, 'click');
    pageListens(form, 'submit');
    send.click();
    form.requestSubmit();
    expect(pageSaw).toEqual([]);
    expect(held.map((h) => h.trigger)).toEqual(['click', 'submit']);
    expect(held[0]!.composer.id).toBe('prompt-textarea');
  });

  it('lets its own release through, once, untouched', () => {
    const send = document.querySelector<HTMLElement>('button[data-testid="send-button"]')!;
    pageListens(send, 'click');
    interceptor.bypass(() => send.click());
    expect(pageSaw).toEqual(['click']);
    expect(held).toEqual([]);
  });

  it('lets a send with an empty composer through: nothing to gate, nothing swallowed', () => {
    document.querySelector('#prompt-textarea')!.innerHTML = '<p><br></p>';
    const send = document.querySelector<HTMLElement>('button[data-testid="send-button"]')!;
    pageListens(send, 'click');
    send.click();
    expect(pageSaw).toEqual(['click']);
    expect(held).toEqual([]);
  });

  it('holds a pointerdown on the send control, and stops the click of the same press', () => {
    const send = document.querySelector<HTMLElement>('button[data-testid="send-button"]')!;
    pageListens(send, 'pointerdown');
    pageListens(send, 'click');
    send.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true, cancelable: true, composed: true, button: 0 }));
    send.click();
    expect(pageSaw).toEqual([]);
    expect(held.map((h) => h.trigger)).toEqual(['pointer']);
  });

  it('ignores Enter outside the composer and clicks elsewhere', () => {
    document.body.insertAdjacentHTML('beforeend', '<input id="search"><button id="other">Other</button>');
    document.querySelector('#search')!.dispatchEvent(enter());
    document.querySelector<HTMLElement>('#other')!.click();
    expect(held).toEqual([]);
  });
});

describe('before the background has named the adapter', () => {
  it('holds sends that look like a built-in site and hands them over once it is known', () => {
    adapter = undefined;
    loadFixtureMarkup('claude');
    const composer = document.querySelector<HTMLElement>('div.ProseMirror')!;
    pageListens(composer, 'keydown');
    composer.dispatchEvent(enter());
    expect(pageSaw).toEqual([]);
    expect(held).toEqual([]);
    adapter = BUILT_IN_ADAPTERS.claude;
    interceptor.adapterKnown(adapter);
    expect(held).toEqual([{ composer, trigger: 'enter' }]);
  });

  it('drops nothing on a page no adapter serves', () => {
    adapter = null;
    loadFixtureMarkup('claude');
    const composer = document.querySelector<HTMLElement>('div.ProseMirror')!;
    pageListens(composer, 'keydown');
    composer.dispatchEvent(enter());
    expect(pageSaw).toEqual(['keydown']);
  });
});

describe('a generic internal tool (a plain form)', () => {
  beforeEach(() => {
    adapter = genericAdapter({ ...DEFAULT_GENERIC_ADAPTER, composer: 'textarea.ask-box', send: 'button.ask-submit' });
    loadFixtureMarkup('generic');
  });

  it('keeps Enter a line break, and holds the submit', () => {
    const box = document.querySelector<HTMLTextAreaElement>('textarea.ask-box')!;
    box.value = 'Quarterly numbers, please.';
    box.dispatchEvent(enter());
    expect(held).toEqual([]);
    document.querySelector<HTMLElement>('button.ask-submit')!.click();
    expect(held.map((h) => h.trigger)).toEqual(['click']);
  });
});
