/**
 * The extension's settings: companion URL, API key, role, enabled sites, fail
 * mode and the gate profile. They live in extension storage (storage.local), read by the
 * background and the extension's own pages. Content scripts never ask for them: they get a
 * site's adapter through the `site.config` message, so the API key never reaches a page.
 *
 * The storage schema and its migrations are here, in one place (STYLE.md, "Extensions").
 */
import { storage } from 'wxt/utils/storage';
import { browser } from './browser.ts';
import { ADAPTER_IDS, DEFAULT_GENERIC_ADAPTER, RELEASE_STRATEGIES } from './adapters/definitions.ts';
import type { RedactionKind } from './redact.ts';
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
  /** The action type for a file attached to an AI tool; null: the same as prompts. */
  fileActionType?: string | null;
  /** The pack context (law_context for law); `tool_id` is filled from the adapter when absent. */
  context: Record<string, unknown>;
}

/**
 * What a paste of flagged text does, per pattern class: `warn` shows the flagged spans and lets
 * the person paste it as it is or redacted; `redact` pastes only the redacted form; `block`
 * pastes nothing.
 */
export type PasteRule = 'warn' | 'redact' | 'block';
export const PASTE_RULES: readonly PasteRule[] = ['warn', 'redact', 'block'];

export const DEFAULT_PASTE_RULES: Readonly<Record<RedactionKind, PasteRule>> = {
  PRIVATE_KEY: 'block',
  TOKEN: 'redact',
  KEY: 'redact',
  SECRET: 'redact',
  EMAIL: 'warn',
  IBAN: 'warn',
  CARD: 'warn',
  SSN: 'warn',
  ID: 'warn',
  PHONE: 'warn',
};

export interface Settings {
  companionUrl: string;
  apiKey: string;
  role: Role;
  /** Whom the reviewer decides for (interface-spec "Review request" `reviewer`); empty: the key's own principal. */
  reviewerId: string;
  failMode: FailMode;
  enabledSites: Record<AdapterId, boolean>;
  siteMappings: SiteMapping[];
  generic: GenericAdapterConfig;
  gateProfile: GateProfile;
  pasteRules: Record<RedactionKind, PasteRule>;
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
  fileActionType: null,
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
  pasteRules: { ...DEFAULT_PASTE_RULES },
};

/** Storage item, versioned: add a migration here whenever the shape changes. */
export const settingsItem = storage.defineItem<Settings>('local:settings', {
  fallback: DEFAULT_SETTINGS,
  version: 1,
  migrations: {},
});

/**
 * Managed deployment (Chrome enterprise policy `3rdparty.extensions.<id>`, Firefox
 * policies.json `3rdparty.Extensions.<id>`), read from storage.managed under the schema in
 * public/managed-schema.json. A setting the policy gives and lists in `locked` always wins and
 * cannot be changed in the options page; one it gives without locking is only a default for a
 * browser whose person has not saved their own. The policy's API key is never copied into the
 * extension's own storage.
 */
export const LOCKABLE_SETTINGS = ['companionUrl', 'apiKey', 'role', 'reviewerId', 'failMode', 'siteMappings', 'gateProfile', 'pasteRules'] as const;
export type LockableSetting = (typeof LOCKABLE_SETTINGS)[number];

export interface ManagedSettings {
  values: Partial<Pick<Settings, LockableSetting>>;
  locked: LockableSetting[];
}

export const NO_MANAGED_SETTINGS: ManagedSettings = { values: {}, locked: [] };

/** The policy as the schema describes it, reduced to settings; anything malformed is left out. */
export function readManagedPolicy(raw: unknown): ManagedSettings {
  if (!isPlainObject(raw)) return NO_MANAGED_SETTINGS;
  const values: ManagedSettings['values'] = {};
  const str = (k: string) => (typeof raw[k] === 'string' && raw[k] !== '' ? (raw[k] as string) : undefined);
  const set = <K extends LockableSetting>(k: K, v: Settings[K] | undefined) => {
    if (v !== undefined) values[k] = v;
  };
  set('companionUrl', str('companionUrl')?.trim().replace(/\/+$/, ''));
  set('apiKey', str('apiKey')?.trim());
  set('role', raw.role === 'reviewer' || raw.role === 'employee' ? raw.role : undefined);
  set('reviewerId', str('reviewerId')?.trim());
  set('failMode', raw.failMode === 'open' || raw.failMode === 'closed' ? raw.failMode : undefined);
  if (Array.isArray(raw.siteMappings)) set('siteMappings', normalizeSettings({ siteMappings: raw.siteMappings }).siteMappings);
  if (str('gatePack')) {
    set('gateProfile', {
      pack: str('gatePack')!,
      actionType: str('gateActionType') ?? null,
      fileActionType: str('gateFileActionType') ?? null,
      context: parseObject(str('gateContext')),
    });
  }
  if (isPlainObject(raw.pasteRules)) set('pasteRules', normalizeSettings({ pasteRules: raw.pasteRules }).pasteRules);
  const locked = Array.isArray(raw.locked) ? LOCKABLE_SETTINGS.filter((k) => (raw.locked as unknown[]).includes(k) && k in values) : [];
  return { values, locked };
}

export async function loadManagedSettings(): Promise<ManagedSettings> {
  try {
    return readManagedPolicy(await browser.storage.managed.get());
  } catch {
    // No policy store (Firefox without policies.json answers with an error; so do test fakes).
    return NO_MANAGED_SETTINGS;
  }
}

function parseObject(json: string | undefined): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(json ?? '{}');
    return isPlainObject(v) ? v : {};
  } catch {
    return {};
  }
}

/**
 * The person's settings (null before they ever saved) with the policy applied: locked values
 * win; unlocked ones fill what the person has not set; unlocked site mappings are added to the
 * person's own.
 */
export function applyManaged(local: unknown, managed: ManagedSettings): Settings {
  const own = isPlainObject(local) ? local : {};
  const merged: Record<string, unknown> = { ...DEFAULT_SETTINGS, ...own };
  for (const [k, v] of Object.entries(managed.values)) {
    const key = k as LockableSetting;
    if (managed.locked.includes(key) || own[key] === undefined || own[key] === '') merged[key] = v;
    else if (key === 'siteMappings' && Array.isArray(own.siteMappings)) merged.siteMappings = [...own.siteMappings, ...(v as SiteMapping[])];
  }
  return normalizeSettings(merged);
}

export async function loadSettings(): Promise<Settings> {
  const [local, saved, managed] = await Promise.all([settingsItem.getValue(), browser.storage.local.get('settings'), loadManagedSettings()]);
  // Before the person ever saved, getValue() answers its fallback, which must not read as
  // "the person chose the defaults" (the policy's unlocked values would never apply).
  return applyManaged(saved.settings === undefined ? null : local, managed);
}

/**
 * Saves the person's own settings: a locked setting keeps its stored value (the policy's wins
 * anyway), and the policy's API key is not written to extension storage.
 */
export async function saveSettings(next: Settings): Promise<void> {
  const [previous, managed] = await Promise.all([settingsItem.getValue(), loadManagedSettings()]);
  const own: Record<string, unknown> = { ...next };
  for (const key of managed.locked) own[key] = (previous as unknown as Record<string, unknown>)[key];
  if (managed.values.apiKey !== undefined && own.apiKey === managed.values.apiKey) own.apiKey = '';
  await settingsItem.setValue(normalizeSettings(own));
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
  const pasteRules = { ...DEFAULT_PASTE_RULES };
  for (const k of Object.keys(pasteRules) as RedactionKind[]) {
    const r = (v.pasteRules as Record<string, unknown> | undefined)?.[k];
    if (PASTE_RULES.includes(r as PasteRule)) pasteRules[k] = r as PasteRule;
  }
  return {
    pasteRules,
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
      fileActionType: typeof v.gateProfile?.fileActionType === 'string' && v.gateProfile.fileActionType !== '' ? v.gateProfile.fileActionType : null,
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
