/**
 * Settings: defaults, normalising what storage holds, the options form's
 * text round trip, and what the options page refuses to save. Storage is WXT's fake browser.
 */
import { fakeBrowser } from 'wxt/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { draftFromSettings, settingsFromDraft } from '../../extension/utils/options-draft.ts';
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_SETTINGS, LOCKABLE_SETTINGS, loadManagedSettings, loadSettings, normalizeSettings, readManagedPolicy, saveSettings, settingsProblems } from '../../extension/utils/settings.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';

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

  it('refuses plain http off loopback and a malformed key; a reviewer needs no id (the companion seals who the key names)', () => {
    const problems = settingsProblems(normalizeSettings({ companionUrl: 'http://gate.example', apiKey: 'sk-123', role: 'reviewer' }));
    expect(problems).toHaveLength(2);
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

describe('managed deployment (storage.managed, under public/managed-schema.json)', () => {
  const policy = {
    companionUrl: 'https://gate.example.com/',
    apiKey: 'svc_live_PolicyKey123',
    failMode: 'closed',
    role: 'employee',
    siteMappings: [{ pattern: 'https://ai.intranet.example/*', adapter: 'generic' }],
    gatePack: 'law',
    gateActionType: 'proposed-action',
    gateContext: JSON.stringify({ matter_band: 'high', jurisdiction: 'EU' }),
    locked: ['companionUrl', 'apiKey', 'failMode'],
  };

  it('applies the policy: locked settings win over the person’s own, the others are defaults', async () => {
    await fakeBrowser.storage.managed.set(policy);
    await fakeBrowser.storage.local.set({ settings: { ...DEFAULT_SETTINGS, companionUrl: 'http://127.0.0.1:8787', failMode: 'open', role: 'reviewer', reviewerId: 'r@firm.example' } });
    const s = await loadSettings();
    expect(s).toMatchObject({ companionUrl: 'https://gate.example.com', apiKey: 'svc_live_PolicyKey123', failMode: 'closed', role: 'reviewer' });
    expect(await loadManagedSettings()).toMatchObject({ locked: ['companionUrl', 'apiKey', 'failMode'] });
    // Unlocked: the organisation's mappings come on top of the person's own; the person's own profile stays.
    expect(s.siteMappings).toEqual(policy.siteMappings);
    expect(s.gateProfile).toEqual(DEFAULT_SETTINGS.gateProfile);
  });

  it('on a fresh install every setting the policy gives applies, locked or not', async () => {
    await fakeBrowser.storage.managed.set({ ...policy, role: 'reviewer', reviewerId: 'r@firm.example', locked: [] });
    expect(await loadSettings()).toMatchObject({
      role: 'reviewer',
      reviewerId: 'r@firm.example',
      companionUrl: 'https://gate.example.com',
      gateProfile: { pack: 'law', actionType: 'proposed-action', fileActionType: null, context: { matter_band: 'high', jurisdiction: 'EU' } },
    });
  });

  it('a locked setting cannot be changed by saving, and the policy’s API key is not copied to extension storage', async () => {
    await fakeBrowser.storage.managed.set(policy);
    await saveSettings({ ...(await loadSettings()), failMode: 'open', companionUrl: 'https://elsewhere.example', reviewerId: 'me@firm.example' });
    expect(await loadSettings()).toMatchObject({ failMode: 'closed', companionUrl: 'https://gate.example.com', reviewerId: 'me@firm.example' });
    const stored = (await fakeBrowser.storage.local.get('settings')).settings as Record<string, unknown>;
    expect(JSON.stringify(stored)).not.toContain('svc_live_PolicyKey123');
  });

  it('reads only what the schema allows: malformed values and unknown locks are left out', () => {
    const m = readManagedPolicy({ role: 'admin', failMode: 'sometimes', companionUrl: 42, siteMappings: [{ pattern: 'https://x/*', adapter: 'nope' }], locked: ['role', 'enabledSites', 'siteMappings'] });
    expect(m).toEqual({ values: { siteMappings: [] }, locked: ['siteMappings'] });
    expect(readManagedPolicy(undefined)).toEqual({ values: {}, locked: [] });
  });

  it('the shipped schema names every setting the reader takes, and locks only lockable settings', async () => {
    const schema = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'extension', 'public', 'managed-schema.json'), 'utf8'));
    expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(policy).concat('reviewerId', 'gateFileActionType', 'pasteRules').sort());
    expect(schema.properties.locked.items.enum).toEqual([...LOCKABLE_SETTINGS]);
  });
});

it('the example policy files (Chrome enterprise policy, Firefox policies.json) read as the settings they document', () => {
  const dir = path.join(REPO_ROOT, 'extension', 'policies');
  const chrome = JSON.parse(fs.readFileSync(path.join(dir, 'chrome-policy.example.json'), 'utf8'))['3rdparty'].extensions;
  const firefox = JSON.parse(fs.readFileSync(path.join(dir, 'firefox-policies.example.json'), 'utf8')).policies['3rdparty'].Extensions;
  for (const policy of [Object.values(chrome)[0], firefox['action-gate@extension.invalid']]) {
    const m = readManagedPolicy(policy);
    expect(m.locked).toEqual(['companionUrl', 'apiKey', 'failMode', 'gateProfile']);
    expect(m.values).toMatchObject({ companionUrl: 'https://gate.example.com', failMode: 'closed', gateProfile: { pack: 'law', context: { jurisdiction: 'US' } } });
    expect(m.values.siteMappings).toEqual([{ pattern: 'https://ai.intranet.example/*', adapter: 'generic' }]);
  }
});
