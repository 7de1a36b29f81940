/**
 * Internal tools an admin maps to an adapter (options page, "Site mappings") get the content
 * scripts at runtime: the manifest covers the AI sites only; a mapped origin is registered here
 * once its host permission is granted (loopback at install, any other through
 * optional_host_permissions). Both halves are registered: the isolated content script and the
 * page-world request observer (entrypoints/page-world.content.ts).
 */
import { CONTENT_SCRIPT_MATCHES } from '../adapters/hosts.ts';
import { originPatternsFor } from '../adapters/match.ts';
import { browser } from '../browser.ts';
import type { Settings } from '../settings.ts';

export const MAPPED_SITES_SCRIPT_ID = 'action-gate-mapped-sites';
/** Where WXT writes the `content` entrypoint (extension/entrypoints/content/). */
export const CONTENT_SCRIPT_FILE = 'content-scripts/content.js';
export const PAGE_WORLD_SCRIPT_ID = 'action-gate-mapped-sites-page-world';
/** Where WXT writes entrypoints/page-world.content.ts. */
export const PAGE_WORLD_SCRIPT_FILE = 'content-scripts/page-world.js';

export async function syncMappedSiteScripts(settings: Settings): Promise<string[]> {
  const wanted = originPatternsFor(settings.siteMappings, CONTENT_SCRIPT_MATCHES);
  const granted: string[] = [];
  for (const origin of wanted) if (await browser.permissions.contains({ origins: [origin] })) granted.push(origin);
  const ids = [MAPPED_SITES_SCRIPT_ID, PAGE_WORLD_SCRIPT_ID];
  const existing = await browser.scripting.getRegisteredContentScripts({ ids });
  if (existing.length > 0) await browser.scripting.unregisterContentScripts({ ids: existing.map((s) => s.id) });
  if (granted.length > 0) {
    await browser.scripting.registerContentScripts([
      { id: PAGE_WORLD_SCRIPT_ID, matches: granted, js: [PAGE_WORLD_SCRIPT_FILE], runAt: 'document_start', world: 'MAIN', persistAcrossSessions: true },
      { id: MAPPED_SITES_SCRIPT_ID, matches: granted, js: [CONTENT_SCRIPT_FILE], runAt: 'document_start', persistAcrossSessions: true },
    ]);
  }
  return granted;
}
