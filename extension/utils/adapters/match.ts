/**
 * Which adapter, if any, serves a page: an admin's site mappings first (internal tools, or the
 * test fixture pages on loopback), then the built-in adapters by hostname. Disabled sites get
 * none, so the content script stays inert there.
 */
import type { Settings, SiteMapping } from '../settings.ts';
import { BUILT_IN_ADAPTERS, genericAdapter } from './definitions.ts';
import type { AdapterId, SiteAdapter } from './definitions.ts';

export function adapterForUrl(url: string, settings: Settings): SiteAdapter | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const id = mappedAdapter(parsed.href, settings.siteMappings) ?? builtInForHost(parsed.hostname);
  if (id === null || !settings.enabledSites[id]) return null;
  return id === 'generic' ? genericAdapter(settings.generic) : BUILT_IN_ADAPTERS[id];
}

function mappedAdapter(href: string, mappings: readonly SiteMapping[]): AdapterId | null {
  for (const m of mappings) if (globToRegExp(m.pattern).test(href)) return m.adapter;
  return null;
}

function builtInForHost(hostname: string): AdapterId | null {
  for (const adapter of Object.values(BUILT_IN_ADAPTERS)) if (adapter.hosts.includes(hostname)) return adapter.id;
  return null;
}

/** `*` matches any run of characters (including none); everything else is literal. */
export function globToRegExp(glob: string): RegExp {
  const body = glob
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`);
}

/**
 * The match patterns (chrome "match patterns": scheme://host/path, any port) a set of mappings
 * needs the content script on, minus what the manifest already covers. Used to register the
 * content script on admin-configured internal tools at runtime.
 */
export function originPatternsFor(mappings: readonly SiteMapping[], alreadyCovered: readonly string[]): string[] {
  const out = new Set<string>();
  for (const m of mappings) {
    const match = /^(https?):\/\/((?:\*\.)?[^/:*]+)(?::[^/]*)?/.exec(m.pattern);
    if (!match) continue;
    const pattern = `${match[1]}://${match[2]}/*`;
    if (!alreadyCovered.includes(pattern)) out.add(pattern);
  }
  return [...out].sort();
}
