/**
 * Settings (issue 5, item 6): defaults, normalising what storage holds, the options form's
 * text round trip, and what the options page refuses to save. Storage is WXT's fake browser.
 */
import { fakeBrowser } from 'wxt/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { draftFromSettings, settingsFromDraft } from '../../extension/utils/options-draft.ts';
import { DEFAULT_SETTINGS, loadSettings, normalizeSettings, saveSettings, settingsProblems } from '../../extension/utils/settings.ts';

beforeEach(() => fakeBrowser.reset());

describe('settings', () => {
  it('a fresh install fails closed, as an employee, with the law pack and nothing configured', async () => {
    const s = await loadSettings();
    expect(s).toEqual(DEFAULT_SETTINGS);
    expect(s).toMatchObject({ failMode: 'closed', role: 'employee', apiKey: '', gateProfile: { pack: 'law', actionType: 'proposed-action' } });
  });

  it('normalises what storage holds: trims, drops unknown values, fills new fields', async () => {
    await fakeBrowser.storage.local.set({
      settings: { companionUrl: ' https://gate.example/ ', role: 'admin', failMode: 'sometimes', siteMappings: [{ pattern: 'https://x/*', adapter: 'nope' }] },
    });
    const s = await loadSettings();
    expect(s).toMatchObject({ companionUrl: 'https://gate.example', role: 'employee', failMode: 'closed', siteMappings: [] });
    expect(s.enabledSites).toEqual(DEFAULT_SETTINGS.enabledSites);
  });

  it('saves and loads back', async () => {
    await saveSettings({ ...DEFAULT_SETTINGS, role: 'reviewer', reviewerId: 'r@firm.example', failMode: 'open' });
    expect(await loadSettings()).toMatchObject({ role: 'reviewer', reviewerId: 'r@firm.example', failMode: 'open' });
  });

  it('refuses plain http off loopback, a malformed key and a reviewer without an id', () => {
    const problems = settingsProblems(normalizeSettings({ companionUrl: 'http://gate.example', apiKey: 'sk-123', role: 'reviewer' }));
    expect(problems).toHaveLength(3);
    expect(settingsProblems(normalizeSettings({ companionUrl: 'http://127.0.0.1:8787', apiKey: 'svc_test_abc' }))).toEqual([]);
  });
});

describe('the options form', () => {
  it('round-trips settings through its text fields', () => {
    const s = normalizeSettings({
      ...DEFAULT_SETTINGS,
      apiKey: 'svc_live_abc123',
      siteMappings: [{ pattern: 'https://ai.intranet.example/*', adapter: 'generic' }],
    });
    const back = settingsFromDraft(draftFromSettings(s));
    expect(back).toEqual({ ok: true, settings: s });
  });

  it('lists every problem in the form at once', () => {
    const draft = { ...draftFromSettings(DEFAULT_SETTINGS), contextJson: '[1]', mappingsText: 'https://a.example/* nosuch\nonlyonefield', genericRelease: 'click-send, teleport' };
    const r = settingsFromDraft(draft);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.problems.join('\n')).toMatch(/Pack context/);
      expect(r.problems.filter((p) => p.startsWith('Site mappings'))).toHaveLength(2);
      expect(r.problems.join('\n')).toMatch(/teleport/);
    }
  });
});
