/**
 * The options page's container: loads and saves settings (extension storage), asks for the
 * host permissions that mapped internal tools and a remote companion need, and runs the
 * connection test through the message table.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { OptionsForm } from '../../components/options-form.tsx';
import { OrganisationSignIn } from '../../components/organisation-sign-in.tsx';
import type { OrganisationSignInState } from '../../components/organisation-sign-in.tsx';
import { pollDeviceToken, startDeviceSignIn } from '../../utils/device-sign-in.ts';
import type { OptionsFormProps } from '../../components/options-form.tsx';
import { HOST_PERMISSIONS } from '../../utils/adapters/hosts.ts';
import { originPatternsFor } from '../../utils/adapters/match.ts';
import { browser } from '../../utils/browser.ts';
import { downloadJson } from '../../utils/download.ts';
import { sendMessage } from '../../utils/messages.ts';
import type { ConnectionReport, PackSummary } from '../../utils/messages.ts';
import { draftFromSettings, settingsFromDraft } from '../../utils/options-draft.ts';
import type { OptionsDraft } from '../../utils/options-draft.ts';
import { loadManagedSettings, loadSettings, saveSettings, isLoopbackHost } from '../../utils/settings.ts';
import type { LockableSetting, Settings } from '../../utils/settings.ts';
import '../../components/pages.css';

function Options() {
  const [draft, setDraft] = useState<OptionsDraft | null>(null);
  const [packs, setPacks] = useState<PackSummary[]>([]);
  const [report, setReport] = useState<ConnectionReport | null>(null);
  const [testing, setTesting] = useState(false);
  const [status, setStatus] = useState<OptionsFormProps['status']>(null);
  const [locked, setLocked] = useState<LockableSetting[]>([]);
  const [orgSignIn, setOrgSignIn] = useState<OrganisationSignInState>({ kind: 'idle' });
  const [polling, setPolling] = useState<AbortController | null>(null);

  useEffect(() => {
    void loadSettings().then((s) => setDraft(draftFromSettings(s)));
    void loadManagedSettings().then((m) => setLocked(m.locked));
    void sendMessage('packs.list', {}).then(setPacks, () => setPacks([]));
  }, []);

  if (draft === null) return <p>Loading…</p>;

  const test = async () => {
    setTesting(true);
    try {
      setReport(await sendMessage('connection.test', { companionUrl: draft.companionUrl.trim().replace(/\/+$/, ''), apiKey: draft.apiKey.trim() }));
    } catch (e) {
      setReport({ ok: false, detail: e instanceof Error ? e.message : String(e), tenant_id: null, usage: null, api_keys: [], signing_keys: [], alarms: [] });
    } finally {
      setTesting(false);
    }
  };

  const save = async () => {
    const result = settingsFromDraft(draft);
    if (!result.ok) return setStatus({ kind: 'problems', lines: result.problems });
    // permissions.request needs the click's user gesture: ask before any other await.
    const granted = await requestOrigins(neededOrigins(result.settings));
    await saveSettings(result.settings);
    setDraft(draftFromSettings(result.settings));
    setStatus({ kind: 'saved', lines: [granted ? 'Saved.' : 'Saved, but some sites were not granted: the gate will not run there.'] });
    void sendMessage('packs.list', {}).then(setPacks, () => undefined);
  };

  /** RFC 8628: codes from the companion, the console's approval page opened, then polling until decided. */
  const signInWithOrganisation = async () => {
    const companionUrl = draft.companionUrl.trim().replace(/\/+$/, '');
    const abort = new AbortController();
    setPolling(abort);
    try {
      const device = await startDeviceSignIn(companionUrl);
      setOrgSignIn({ kind: 'waiting', userCode: device.user_code, verificationUri: device.verification_uri });
      void browser.tabs.create({ url: device.verification_uri_complete });
      const result = await pollDeviceToken(companionUrl, device, { signal: abort.signal });
      if (!result.ok) return setOrgSignIn(result.error === 'cancelled' ? { kind: 'idle' } : { kind: 'failed', detail: result.detail });
      // The person-bound key takes the API key's place. The sign-in is the reviewer role's (the
      // form offers it only there), so that role is kept too, even when not yet saved.
      const current = await loadSettings();
      const next: Settings = { ...current, companionUrl, apiKey: result.token, role: 'reviewer' };
      await saveSettings(next);
      setDraft(draftFromSettings(next));
      setOrgSignIn({ kind: 'signed-in', scope: result.scope });
    } catch (e) {
      setOrgSignIn({ kind: 'failed', detail: e instanceof Error ? e.message : String(e) });
    } finally {
      setPolling(null);
    }
  };

  return (
    <>
      <OptionsForm
        draft={draft}
        locked={locked}
        packs={packs}
        report={report}
        testing={testing}
        status={status}
        onChange={setDraft}
        onTest={() => void test()}
        onSave={() => void save().catch((e: unknown) => setStatus({ kind: 'error', lines: [String(e)] }))}
        onExport={async () => downloadJson(`action-gate-log-${Date.now()}.json`, await sendMessage('log.export', {}))}
      />
      {draft.role === 'reviewer' ? (
        <OrganisationSignIn
          state={orgSignIn}
          disabled={polling !== null || draft.companionUrl.trim() === '' || locked.includes('apiKey')}
          onStart={() => void signInWithOrganisation()}
          onCancel={() => polling?.abort()}
        />
      ) : null}
    </>
  );
}

/** Origins beyond the manifest's: a remote companion, and internal tools in site mappings. */
function neededOrigins(s: Settings): string[] {
  const origins = originPatternsFor(s.siteMappings, HOST_PERMISSIONS);
  const companion = new URL(s.companionUrl);
  if (!isLoopbackHost(companion.hostname)) origins.push(`${companion.protocol}//${companion.hostname}/*`);
  return origins;
}

async function requestOrigins(origins: string[]): Promise<boolean> {
  if (origins.length === 0) return true;
  // Answers true at once, without a prompt, when everything is granted already.
  return browser.permissions.request({ origins });
}

render(<Options />, document.getElementById('app')!);
