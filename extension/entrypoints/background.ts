/**
 * The background service worker: wiring only (STYLE.md, "Extensions"). Every message it
 * understands is in utils/messages.ts; the handlers are in utils/background/handlers.ts.
 */
import { defineBackground } from 'wxt/utils/define-background';
import { browser } from '../utils/browser.ts';
import { createHandlers, createMessageListener, refreshPendingBadge } from '../utils/background/handlers.ts';
import { syncMappedSiteScripts } from '../utils/background/mapped-sites.ts';
import { createBackgroundServices } from '../utils/background/services.ts';
import { loadSettings, settingsItem } from '../utils/settings.ts';

export default defineBackground(() => {
  const services = createBackgroundServices();
  // Settings (the API key among them) are for the extension's own pages and this worker only;
  // content scripts get what they need by message. Chromium lets storage.local be closed to
  // content scripts; Firefox only offers this for storage.session, hence the catch.
  void (browser.storage.local as { setAccessLevel?: (o: { accessLevel: string }) => Promise<void> })
    .setAccessLevel?.({ accessLevel: 'TRUSTED_CONTEXTS' })
    ?.catch(() => undefined);
  // Registered synchronously at start-up, so a message that wakes a stopped worker is answered.
  browser.runtime.onMessage.addListener(createMessageListener(createHandlers(services), services));

  // A reviewer sees waiting reviews on the toolbar badge without opening the popup: the
  // count is refreshed each minute (the popup refreshes it too while open).
  const PENDING_ALARM = 'pending-reviews';
  void browser.alarms.create(PENDING_ALARM, { periodInMinutes: 1 });
  browser.alarms.onAlarm.addListener((alarm) => {
    if (alarm.name !== PENDING_ALARM) return;
    void refreshPendingBadge(services).catch((e: unknown) => console.warn('[action-gate] pending reviews:', e));
  });

  const syncSites = () => loadSettings().then(syncMappedSiteScripts).catch((e: unknown) => console.warn('[action-gate] mapped sites:', e));
  browser.runtime.onInstalled.addListener(syncSites);
  // Also at every start: a managed policy may arrive or change while the browser is closed.
  syncSites();
  settingsItem.watch(syncSites);
  browser.storage.onChanged.addListener((_changes, area) => {
    if (area === 'managed') syncSites(); // the organisation's policy changed
  });
  browser.permissions.onAdded.addListener(syncSites);
});
