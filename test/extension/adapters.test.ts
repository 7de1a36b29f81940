// @vitest-environment happy-dom
/**
 * Site adapters as data: which adapter serves a URL, and each adapter's
 * selectors and release path against its fixture page's composer DOM.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BUILT_IN_ADAPTERS, DEFAULT_GENERIC_ADAPTER, genericAdapter } from '../../extension/utils/adapters/definitions.ts';
import type { SiteAdapter } from '../../extension/utils/adapters/definitions.ts';
import { CONTENT_SCRIPT_MATCHES } from '../../extension/utils/adapters/hosts.ts';
import { adapterForUrl, globToRegExp, originPatternsFor } from '../../extension/utils/adapters/match.ts';
import { ComposerTracker } from '../../extension/utils/content/composers.ts';
import { composerText, conversationOf, findSend, releaseHeldAction } from '../../extension/utils/content/dom.ts';
import { DEFAULT_SETTINGS, normalizeSettings } from '../../extension/utils/settings.ts';
import { loadFixtureMarkup } from './fixture-dom.ts';

const GENERIC = genericAdapter({ ...DEFAULT_GENERIC_ADAPTER, composer: 'textarea.ask-box', send: 'button.ask-submit' });
const ADAPTERS: Record<string, SiteAdapter> = { ...BUILT_IN_ADAPTERS, generic: GENERIC };
const findComposer = (adapter: SiteAdapter, from?: Element) => new ComposerTracker().find(adapter, from);

afterEach(() => {
  document.body.innerHTML = '';
});

describe('adapterForUrl', () => {
  it('serves the AI sites by hostname, with no mapping', () => {
    const s = DEFAULT_SETTINGS;
    expect(adapterForUrl('https://chatgpt.com/c/abc-123', s)?.id).toBe('chatgpt');
    expect(adapterForUrl('https://chat.openai.com/', s)?.id).toBe('chatgpt');
    expect(adapterForUrl('https://claude.ai/new', s)?.id).toBe('claude');
    expect(adapterForUrl('https://gemini.google.com/app', s)?.id).toBe('gemini');
    expect(adapterForUrl('https://copilot.microsoft.com/', s)?.id).toBe('copilot');
    expect(adapterForUrl('https://example.com/', s)).toBeNull();
    expect(adapterForUrl('http://127.0.0.1:3000/', s)).toBeNull();
  });

  it('applies admin mappings first, and none for a disabled site', () => {
    const s = normalizeSettings({
      siteMappings: [
        { pattern: 'http://127.0.0.1:*/claude.html*', adapter: 'claude' },
        { pattern: 'https://ai.intranet.example/*', adapter: 'generic' },
      ],
      enabledSites: { ...DEFAULT_SETTINGS.enabledSites, gemini: false },
    });
    expect(adapterForUrl('http://127.0.0.1:41234/claude.html', s)?.id).toBe('claude');
    expect(adapterForUrl('http://127.0.0.1:41234/gemini.html', s)).toBeNull();
    expect(adapterForUrl('https://ai.intranet.example/ask?q=1', s)).toMatchObject({ id: 'generic', external: false });
    expect(adapterForUrl('https://gemini.google.com/app', s)).toBeNull();
  });

  it('globs match whole URLs, with * as the only wildcard', () => {
    expect(globToRegExp('https://a.example/*').test('https://a.example/x/y')).toBe(true);
    expect(globToRegExp('https://a.example/*').test('https://a.example.evil/x')).toBe(false);
    expect(globToRegExp('https://a.example/x?y').test('https://a.example/xzy')).toBe(false);
  });

  it('registers the content scripts at runtime for every mapped origin that is not an AI site, loopback included', () => {
    const mappings = [
      { pattern: 'https://ai.intranet.example:8443/chat/*', adapter: 'generic' as const },
      { pattern: 'http://127.0.0.1:*/x', adapter: 'generic' as const },
      { pattern: 'https://*.tools.example/*', adapter: 'generic' as const },
    ];
    expect(originPatternsFor(mappings, CONTENT_SCRIPT_MATCHES)).toEqual(['http://127.0.0.1/*', 'https://*.tools.example/*', 'https://ai.intranet.example/*']);
    expect(originPatternsFor([{ pattern: 'https://chatgpt.com/g/*', adapter: 'chatgpt' }], CONTENT_SCRIPT_MATCHES)).toEqual([]);
  });
});

describe.each(Object.keys(ADAPTERS))('%s adapter on its fixture page', (site) => {
  const adapter = ADAPTERS[site]!;

  it('finds the composer and the send control, and reads the text', () => {
    loadFixtureMarkup(site);
    const composer = findComposer(adapter)!;
    expect(composer).not.toBeNull();
    const send = findSend(adapter, composer)!;
    expect(send).not.toBeNull();
    expect(findComposer(adapter, send)).toBe(composer);
    if (composer instanceof HTMLTextAreaElement) composer.value = 'hello\nworld';
    else composer.innerHTML = '<p>hello</p><p>world</p>';
    expect(composerText(composer)).toMatch(/^\s*hello\s+world\s*$/);
  });

  it('releases through its first strategy, and the page sees exactly one send', () => {
    loadFixtureMarkup(site);
    const composer = findComposer(adapter)!;
    const send = findSend(adapter, composer)!;
    const seen: string[] = [];
    send.addEventListener('click', () => seen.push('click'));
    composer.closest('form')?.addEventListener('submit', (e) => (e.preventDefault(), seen.push('submit')));
    let bypassed = 0;
    const how = releaseHeldAction(adapter, composer, (dispatch) => {
      bypassed++;
      dispatch();
    });
    expect(how).toBe(adapter.release[0]);
    expect(bypassed).toBe(1);
    const expected: Record<string, string[]> = {
      chatgpt: ['click', 'submit'],
      claude: ['click'],
      gemini: ['click'],
      copilot: ['click'],
      generic: ['submit'],
    };
    expect(seen).toEqual(expected[site]);
  });
});

it('a disabled send control is not clicked: the next strategy applies', () => {
  loadFixtureMarkup('copilot');
  const adapter = BUILT_IN_ADAPTERS.copilot;
  const composer = findComposer(adapter)!;
  (findSend(adapter, composer) as HTMLButtonElement).disabled = true;
  const keys: string[] = [];
  composer.addEventListener('keydown', (e) => keys.push(e.key));
  expect(releaseHeldAction(adapter, composer, (d) => d())).toBe('enter-key');
  expect(keys).toEqual(['Enter']);
});

describe('the composer the person uses, not the first match', () => {
  const chatgpt = BUILT_IN_ADAPTERS.chatgpt;
  const markup = `
    <form>
      <textarea name="prompt-textarea" style="display:none"></textarea>
      <div id="prompt-textarea" contenteditable="true"><p>typed here</p></div>
      <button type="submit" data-testid="send-button">Send</button>
    </form>`;

  it('skips a hidden fallback textarea before the rich editor', () => {
    document.body.innerHTML = markup;
    const send = document.querySelector<HTMLElement>('[data-testid="send-button"]')!;
    expect(findComposer(chatgpt, send)?.id).toBe('prompt-textarea');
  });

  it('prefers the focused composer, then the last one edited, over document order', () => {
    document.body.innerHTML = '<textarea id="userInput" class="a"></textarea><textarea id="userInput" class="b"></textarea>';
    const copilot = BUILT_IN_ADAPTERS.copilot;
    const [a, b] = Array.from(document.querySelectorAll<HTMLTextAreaElement>('textarea'));
    const tracker = new ComposerTracker();
    expect(tracker.find(copilot)).toBe(a);
    b!.focus();
    expect(tracker.find(copilot)).toBe(b);
    b!.blur(); // a click on send moves the focus away from the composer
    expect(tracker.find(copilot)).toBe(a);
    b!.addEventListener('input', (e) => tracker.note(copilot, e), { once: true });
    b!.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    expect(tracker.find(copilot)).toBe(b);
  });

  it('finds a composer and its send control inside an open shadow root', () => {
    document.body.innerHTML = '<chat-box></chat-box>';
    const root = document.querySelector('chat-box')!.attachShadow({ mode: 'open' });
    root.innerHTML = '<div id="prompt-textarea" contenteditable="true">hi</div><button data-testid="send-button">Send</button>';
    const composer = findComposer(chatgpt)!;
    expect(composer?.getRootNode()).toBe(root);
    expect(findSend(chatgpt, composer)).toBe(root.querySelector('button'));
  });
});

it('takes the conversation id from the URL path for source_key', () => {
  const at = (href: string) => new URL(href) as unknown as Location;
  expect(conversationOf(BUILT_IN_ADAPTERS.chatgpt, at('https://chatgpt.com/c/6789-abcd'))).toBe('6789-abcd');
  expect(conversationOf(BUILT_IN_ADAPTERS.chatgpt, at('https://chatgpt.com/g/g-123/c/77'))).toBe('77');
  expect(conversationOf(BUILT_IN_ADAPTERS.claude, at('https://claude.ai/chat/1f2e'))).toBe('1f2e');
  expect(conversationOf(BUILT_IN_ADAPTERS.claude, at('https://claude.ai/new'))).toBe('/new');
  expect(conversationOf(GENERIC, at('https://ai.intranet.example/ask'))).toBe('/ask');
});
