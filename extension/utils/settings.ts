/**
 * The extension's settings (issue 5, item 6): companion URL, API key, role, enabled sites, fail
 * mode and the gate profile. They live in extension storage (storage.local), read by the
 * background and the extension's own pages. Content scripts never ask for them: they get a
 * site's adapter through the `site.config` message, so the API key never reaches a page.
 *
 * The storage schema and its migrations are here, in one place (STYLE.md, "Extensions").
 */
import { storage } from 'wxt/utils/storage';
import { ADAPTER_IDS, DEFAULT_GENERIC_ADAPTER, RELEASE_STRATEGIES } from './adapters/definitions.ts';
import type { AdapterId, GenericAdapterConfig } from './adapters/definitions.ts';

export type Role = 'employee' | 'reviewer';
export type FailMode = 'closed' | 'open';

/** An admin's mapping of URLs to an adapter: internal tools, or test fixture pages. */
export interface SiteMapping {
  /** A URL glob: `*` matches any run of characters, e.g. `https://ai.intranet.example/*`. */
  pattern: string;
  adapter: AdapterId;
}

/** What every gate request carries besides the text (interface-spec "Gate request"). */
export interface GateProfile {
  pack: string;
  /** Required by every pack but law (GET /v1/packs lists each pack's required fields). */
  actionType: string | null;
  /** The pack context (law_context for law); `tool_id` is filled from the adapter when absent. */
  context: Record<string, unknown>;
}

export interface Settings {
  companionUrl: string;
  apiKey: string;
  role: Role;
  /** Reviewer identifier posted with review decisions (interface-spec "Review request"). */
  reviewerId: string;
  failMode: FailMode;
  enabledSites: Record<AdapterId, boolean>;
  siteMappings: SiteMapping[];
  generic: GenericAdapterConfig;
  gateProfile: GateProfile;
}

/**
 * A fresh install gates with the law pack's catch-all action type, which needs review until the
 * tenant allowlists it (interface-spec, States and transitions): the safe default for prompts
 * that may carry client confidences (ABA Model Rule 1.6). How the AI tool handles its inputs is
 * "unknown" until the admin says otherwise (ABA Formal Op. 512). Admins pick another pack and
 * context in the options.
 */
export const DEFAULT_GATE_PROFILE: GateProfile = {
  pack: 'law',
  actionType: 'proposed-action',
  context: { matter_band: 'moderate', doctrine_anchor: 'confidentiality', jurisdiction: 'US', tool_data_handling: 'unknown' },
};

export const DEFAULT_SETTINGS: Settings = {
  companionUrl: 'http://127.0.0.1:8787',
  apiKey: '',
  role: 'employee',
  reviewerId: '',
  failMode: 'closed',
  enabledSites: { chatgpt: true, claude: true, gemini: true, copilot: true, generic: true },
  siteMappings: [],
  generic: DEFAULT_GENERIC_ADAPTER,
  gateProfile: DEFAULT_GATE_PROFILE,
};

/** Storage item, versioned: add a migration here whenever the shape changes. */
export const settingsItem = storage.defineItem<Settings>('local:settings', {
  fallback: DEFAULT_SETTINGS,
  version: 1,
  migrations: {},
});

export async function loadSettings(): Promise<Settings> {
  return normalizeSettings(await settingsItem.getValue());
}

export async function saveSettings(next: Settings): Promise<void> {
  await settingsItem.setValue(normalizeSettings(next));
}

/** Fills what an older or partial value lacks, and drops what it should not hold. */
export function normalizeSettings(raw: unknown): Settings {
  const v = (raw ?? {}) as Partial<Settings>;
  const d = DEFAULT_SETTINGS;
  const enabledSites = { ...d.enabledSites };
  for (const id of ADAPTER_IDS) if (typeof v.enabledSites?.[id] === 'boolean') enabledSites[id] = v.enabledSites[id];
  const generic = { ...d.generic, ...(v.generic ?? {}) };
  generic.enterSends = generic.enterSends === true;
  generic.release = (generic.release ?? []).filter((r) => (RELEASE_STRATEGIES as readonly string[]).includes(r));
  if (generic.release.length === 0) generic.release = [...d.generic.release];
  return {
    companionUrl: typeof v.companionUrl === 'string' ? v.companionUrl.trim().replace(/\/+$/, '') : d.companionUrl,
    apiKey: typeof v.apiKey === 'string' ? v.apiKey.trim() : d.apiKey,
    role: v.role === 'reviewer' ? 'reviewer' : 'employee',
    reviewerId: typeof v.reviewerId === 'string' ? v.reviewerId.trim() : d.reviewerId,
    failMode: v.failMode === 'open' ? 'open' : 'closed',
    enabledSites,
    siteMappings: Array.isArray(v.siteMappings)
      ? v.siteMappings.filter((m) => typeof m?.pattern === 'string' && (ADAPTER_IDS as readonly string[]).includes(m.adapter))
      : [],
    generic,
    gateProfile: {
      pack: typeof v.gateProfile?.pack === 'string' && v.gateProfile.pack !== '' ? v.gateProfile.pack : d.gateProfile.pack,
      actionType: typeof v.gateProfile?.actionType === 'string' && v.gateProfile.actionType !== '' ? v.gateProfile.actionType : null,
      context: isPlainObject(v.gateProfile?.context) ? v.gateProfile.context : { ...d.gateProfile.context },
    },
  };
}

/** Everything wrong with a settings value, for the options page (empty when it can be saved). */
export function settingsProblems(s: Settings): string[] {
  const problems: string[] = [];
  try {
    const url = new URL(s.companionUrl);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') problems.push('Companion URL: expected http:// or https://');
    if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
      problems.push('Companion URL: plain http is only accepted on loopback (127.0.0.1, localhost); use https');
    }
  } catch {
    problems.push(`Companion URL: not a URL: ${JSON.stringify(s.companionUrl)}`);
  }
  if (s.apiKey !== '' && !/^svc_(test|live)_[A-Za-z0-9]+$/.test(s.apiKey)) {
    problems.push('API key: expected a key starting svc_test_ or svc_live_');
  }
  if (s.role === 'reviewer' && s.reviewerId === '') problems.push('Reviewer id: required for the reviewer role');
  for (const m of s.siteMappings) if (!/^(https?):\/\/[^/]+/.test(m.pattern)) problems.push(`Site mapping: ${m.pattern} must start with http(s)://host`);
  return problems;
}

export function isLoopbackHost(hostname: string): boolean {
  return hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]';
}

export function isConfigured(s: Settings): boolean {
  return s.companionUrl !== '' && s.apiKey !== '';
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
