/** Builds the background's services once per service-worker start. */
import { browser } from '../browser.ts';
import { openExtensionDatabase } from '../db.ts';
import { loadSettings } from '../settings.ts';
import { companionApi } from './companion-api.ts';
import { DecisionLog } from './decision-log.ts';
import type { BackgroundServices } from './handlers.ts';
import { JWKS_PATH, KeyPins } from './key-pins.ts';

export function createBackgroundServices(): BackgroundServices {
  const db = openExtensionDatabase();
  const now = () => new Date();
  const api = (s: { companionUrl: string; apiKey: string }) => companionApi({ baseUrl: s.companionUrl, apiKey: s.apiKey });
  const pins = new KeyPins({ db, now, fetchJwks: async () => api(await loadSettings()).getPublic(JWKS_PATH) });
  return {
    db,
    log: new DecisionLog(db),
    pins,
    loadSettings,
    api,
    now,
    newId: () => crypto.randomUUID(),
    extensionBaseUrl: browser.runtime.getURL('/'),
    extensionId: browser.runtime.id,
    showPendingCount: async (count) => {
      await browser.action.setBadgeText({ text: count > 0 ? String(Math.min(count, 999)) : '' });
      await browser.action.setBadgeBackgroundColor({ color: '#d97706' });
    },
  };
}
