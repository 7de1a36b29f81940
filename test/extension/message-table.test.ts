/**
 * The one typed message table (STYLE.md, "Extensions"): every message has a handler, the
 * listener answers only its own messages from this extension, keeps reviewer, options and log
 * messages to extension pages, and sendMessage unwraps answers and errors. Runs through WXT's
 * fake browser.
 */
import { fakeBrowser } from 'wxt/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXTENSION_PAGE_ONLY, MessageError, sendMessage } from '../../extension/utils/messages.ts';
import type { MessageTable } from '../../extension/utils/messages.ts';
import { CONTENT, POPUP, startBackground } from './background-harness.ts';
import type { Background } from './background-harness.ts';

let bg: Background;

beforeEach(async () => {
  fakeBrowser.reset();
  bg = await startBackground();
});

afterEach(async () => {
  await bg.close();
});

/** Every name of the MessageTable interface, kept in step with it by the compiler. */
const ALL: { [K in keyof MessageTable]: true } = {
  'site.config': true,
  'gate.submit': true,
  'review.status': true,
  'release.report': true,
  'review.withdraw': true,
  'popup.state': true,
  'connection.test': true,
  'packs.list': true,
  'reviews.pending': true,
  'reviews.reasons': true,
  'reviews.mirror': true,
  'reviews.decide': true,
  'reviews.record': true,
  'reviews.keys': true,
  'reviews.registerKey': true,
  'reviews.context': true,
  'decisions.independent': true,
  'log.export': true,
};

describe('the message table', () => {
  it('has one handler per message and nothing else', () => {
    expect(Object.keys(bg.handlers).sort()).toEqual(Object.keys(ALL).sort());
  });

  it('leaves messages that are not ours to other listeners', () => {
    expect(bg.raw({ hello: 'world' }, POPUP)).toBeUndefined();
    expect(bg.raw({ type: 'not.a.message' }, POPUP)).toBeUndefined();
    expect(bg.raw('site.config', POPUP)).toBeUndefined();
  });

  it('refuses another extension', async () => {
    expect(await bg.raw({ type: 'site.config', payload: {} }, { ...CONTENT, id: 'someone-else' })).toEqual({ ok: false, error: 'not from this extension' });
  });

  it('keeps reviewer, options and log messages to the extension pages', async () => {
    for (const type of EXTENSION_PAGE_ONLY) {
      const reply = await bg.raw({ type, payload: {} }, CONTENT);
      expect(reply).toEqual({ ok: false, error: `${type} is only for the extension's own pages` });
    }
    const fromPage = await bg.raw({ type: 'popup.state', payload: {} }, POPUP);
    expect(fromPage?.ok).toBe(true);
  });

  it('tells a content script its adapter and paste rules, never the companion or its key', async () => {
    const config = await bg.send('site.config', {}, CONTENT);
    expect(config?.adapter.id).toBe('chatgpt');
    expect(JSON.stringify(config)).not.toContain(bg.apiKey);
    expect(Object.keys(config!).sort()).toEqual(['adapter', 'pasteRules']);
    expect(await bg.send('site.config', {}, { ...CONTENT, url: 'https://example.org/' })).toBeNull();
  });

  it('sendMessage goes through runtime messaging and unwraps answers and errors', async () => {
    fakeBrowser.runtime.onMessage.addListener((message: unknown) => bg.listener(message, POPUP));
    const state = await sendMessage('popup.state', {});
    expect(state.connection.ok).toBe(true);
    expect(state.usage?.tenant_kind).toBe('sandbox');
    await expect(sendMessage('reviews.pending', {})).rejects.toThrow(MessageError);
    await expect(sendMessage('reviews.pending', {})).rejects.toThrow('Reviewer mode is off');
  });
});
