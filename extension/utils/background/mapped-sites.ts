/**
 * Internal tools an admin maps to an adapter (options page, "Site mappings") get the content
 * script at runtime: the manifest covers the AI sites and loopback; any other origin is
 * registered here once the admin granted it (optional_host_permissions).
 */
import { CONTENT_SCRIPT_MATCHES } from '../adapters/hosts.ts';
import { originPatternsFor } from '../adapters/match.ts';
import { browser } from '../browser.ts';
import type { Settings } from '../settings.ts';

export const MAPPED_SITES_SCRIPT_ID = 'action-gate-mapped-sites';
/** Where WXT writes the `content` entrypoint (extension/entrypoints/content/). */
export const CONTENT_SCRIPT_FILE = 'content-scripts/content.js';

export async function syncMappedSiteScripts(settings: Settings): Promise<string[]> {
  const wanted = originPatternsFor(settings.siteMappings, CONTENT_SCRIPT_MATCHES);
  const granted: string[] = [];
  for (const origin of wanted) if (await browser.permissions.contains({ origins: [origin] })) granted.push(origin);
  const existing = await browser.scripting.getRegisteredContentScripts({ ids: [MAPPED_SITES_SCRIPT_ID] });
  if (existing.length > 0) await browser.scripting.unregisterContentScripts({ ids: [MAPPED_SITES_SCRIPT_ID] });
  if (granted.length > 0) {
    await browser.scripting.registerContentScripts([
      { id: MAPPED_SITES_SCRIPT_ID, matches: granted, js: [CONTENT_SCRIPT_FILE], runAt: 'document_start', persistAcrossSessions: true },
    ]);
  }
  return granted;
}
