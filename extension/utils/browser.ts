/**
 * The extension API, through webextension-polyfill: one promise-based `browser.*`
 * on Chrome and Firefox, including promise-returning runtime.onMessage listeners, which
 * Chrome's own `chrome.runtime.onMessage` does not honour. In unit tests WXT's fake browser
 * stands behind the same object (the polyfill hands back an existing `browser` global as is).
 */
import browser from 'webextension-polyfill';

export { browser };
