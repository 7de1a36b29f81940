/** Builds the background's services once per service-worker start. */
import { browser } from '../browser.ts';
import { openExtensionDatabase } from '../db.ts';
import { loadSettings, settingsItem } from '../settings.ts';
import type { Settings } from '../settings.ts';
import { companionApi } from './companion-api.ts';
import { DecisionLog } from './decision-log.ts';
import type { BackgroundServices } from './handlers.ts';
import { JWKS_PATH, KeyPins } from './key-pins.ts';

/**
 * Settings read once and kept until they change: every held action needs them before its gate
 * call, and a storage read on that path is latency the person waits through.
 */
function cachedSettings(): () => Promise<Settings> {
  let cached: Promise<Settings> | null = null;
  settingsItem.watch(() => void (cached = null));
  browser.storage.onChanged.addListener((_changes, area) => {
    if (area === 'managed') cached = null; // the organisation's policy changed
  });
  return () =>
    (cached ??= loadSettings().catch((e: unknown) => {
      cached = null;
      throw e;
    }));
}

export function createBackgroundServices(): BackgroundServices {
  const db = openExtensionDatabase();
  const loadSettings = cachedSettings();
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
