/**
 * The options form's editable text and its conversion to and from Settings, kept pure so it
 * is unit-tested without a page.
 */
import { ADAPTER_IDS, RELEASE_STRATEGIES } from './adapters/definitions.ts';
import type { AdapterId, ReleaseStrategy } from './adapters/definitions.ts';
import { normalizeSettings, settingsProblems } from './settings.ts';
import type { FailMode, Role, Settings, SiteMapping } from './settings.ts';

export interface OptionsDraft {
  companionUrl: string;
  apiKey: string;
  role: Role;
  reviewerId: string;
  failMode: FailMode;
  pack: string;
  actionType: string;
  fileActionType: string;
  contextJson: string;
  enabledSites: Record<AdapterId, boolean>;
  /** One mapping per line: `<url pattern> <adapter id>`. */
  mappingsText: string;
  genericLabel: string;
  genericComposer: string;
  genericSend: string;
  genericEnterSends: boolean;
  /** Comma-separated release strategies, in order. */
  genericRelease: string;
}

export function draftFromSettings(s: Settings): OptionsDraft {
  return {
    companionUrl: s.companionUrl,
    apiKey: s.apiKey,
    role: s.role,
    reviewerId: s.reviewerId,
    failMode: s.failMode,
    pack: s.gateProfile.pack,
    actionType: s.gateProfile.actionType ?? '',
    fileActionType: s.gateProfile.fileActionType ?? '',
    contextJson: JSON.stringify(s.gateProfile.context, null, 2),
    enabledSites: { ...s.enabledSites },
    mappingsText: s.siteMappings.map((m) => `${m.pattern} ${m.adapter}`).join('\n'),
    genericLabel: s.generic.label,
    genericComposer: s.generic.composer,
    genericSend: s.generic.send,
    genericEnterSends: s.generic.enterSends,
    genericRelease: s.generic.release.join(', '),
  };
}

export type DraftResult = { ok: true; settings: Settings } | { ok: false; problems: string[] };

export function settingsFromDraft(d: OptionsDraft): DraftResult {
  const problems: string[] = [];
  let context: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(d.contextJson || '{}');
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    context = parsed as Record<string, unknown>;
  } catch {
    problems.push('Pack context: expected a JSON object, e.g. {"matter_band": "moderate"}');
  }
  const siteMappings: SiteMapping[] = [];
  for (const [i, raw] of d.mappingsText.split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [pattern, adapter, ...extra] = line.split(/\s+/);
    if (!pattern || !adapter || extra.length > 0 || !(ADAPTER_IDS as readonly string[]).includes(adapter)) {
      problems.push(`Site mappings, line ${i + 1}: expected "<url pattern> <${ADAPTER_IDS.join('|')}>"`);
      continue;
    }
    siteMappings.push({ pattern, adapter: adapter as AdapterId });
  }
  const release = d.genericRelease.split(',').map((r) => r.trim()).filter((r) => r !== '');
  const unknown = release.filter((r) => !(RELEASE_STRATEGIES as readonly string[]).includes(r));
  if (unknown.length > 0) problems.push(`Generic adapter release: unknown ${unknown.join(', ')}; use ${RELEASE_STRATEGIES.join(', ')}`);

  const settings = normalizeSettings({
    companionUrl: d.companionUrl,
    apiKey: d.apiKey,
    role: d.role,
    reviewerId: d.reviewerId,
    failMode: d.failMode,
    enabledSites: d.enabledSites,
    siteMappings,
    generic: { label: d.genericLabel, composer: d.genericComposer, send: d.genericSend, enterSends: d.genericEnterSends, release: release as ReleaseStrategy[] },
    gateProfile: { pack: d.pack.trim(), actionType: d.actionType.trim() || null, fileActionType: d.fileActionType.trim() || null, context },
  });
  problems.push(...settingsProblems(settings));
  return problems.length > 0 ? { ok: false, problems } : { ok: true, settings };
}
