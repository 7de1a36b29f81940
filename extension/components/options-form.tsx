/**
 * The options page: companion URL and API key with a connection test, role,
 * enabled sites and their mappings, the generic adapter, the gate profile and the fail mode.
 * Presentational: it edits an OptionsDraft and reports events to its container.
 */
import { ADAPTER_IDS, BUILT_IN_ADAPTERS } from '../utils/adapters/definitions.ts';
import type { ConnectionReport, PackSummary } from '../utils/messages.ts';
import type { OptionsDraft } from '../utils/options-draft.ts';
import type { LockableSetting } from '../utils/settings.ts';

export interface OptionsFormProps {
  draft: OptionsDraft;
  /** Settings the organisation's policy locked (storage.managed): shown, not editable. */
  locked: readonly LockableSetting[];
  packs: PackSummary[];
  report: ConnectionReport | null;
  testing: boolean;
  status: { kind: 'saved' | 'problems' | 'error'; lines: string[] } | null;
  onChange: (next: OptionsDraft) => void;
  onTest: () => void;
  onSave: () => void;
  onExport: () => void;
}

export function OptionsForm({ draft, locked, packs, report, testing, status, onChange, onTest, onSave, onExport }: OptionsFormProps) {
  const lock = (setting: LockableSetting) => (locked.includes(setting) ? { disabled: true, 'data-locked': 'true', title: 'Set by your organisation' } : {});
  const set = <K extends keyof OptionsDraft>(key: K, value: OptionsDraft[K]) => onChange({ ...draft, [key]: value });
  const text = (key: keyof OptionsDraft) => (e: Event) => set(key, (e.target as HTMLInputElement).value as never);
  const pack = packs.find((p) => p.name === draft.pack);

  return (
    <form class="ag-options" onSubmit={(e) => (e.preventDefault(), onSave())}>
      <h1>Action Gate options</h1>
      {locked.length > 0 && (
        <p class="ag-managed" id="managed-notice">
          Your organisation manages some of these settings ({locked.join(', ')}); they cannot be changed here.
        </p>
      )}

      <fieldset>
        <legend>Companion</legend>
        <label>
          <span>Companion URL</span>
          <input id="companion-url" {...lock('companionUrl')} type="url" value={draft.companionUrl} onInput={text('companionUrl')} placeholder="http://127.0.0.1:8787" />
        </label>
        <label>
          <span>API key</span>
          <input id="api-key" {...lock('apiKey')} type="password" autoComplete="off" value={draft.apiKey} onInput={text('apiKey')} placeholder="svc_test_…" />
        </label>
        <button type="button" id="test-connection" onClick={onTest} disabled={testing}>
          {testing ? 'Testing…' : 'Test connection'}
        </button>
        {report && <ConnectionResult report={report} />}
      </fieldset>

      <fieldset>
        <legend>Role</legend>
        <label>
          <span>Role</span>
          <select id="role" {...lock('role')} value={draft.role} onChange={text('role')}>
            <option value="employee">Employee</option>
            <option value="reviewer">Reviewer</option>
          </select>
        </label>
        <label>
          <span>Reviewing for (optional: empty, you decide as the person your key or sign-in names; naming someone else needs reviews:delegate)</span>
          <input id="reviewer-id" {...lock('reviewerId')} value={draft.reviewerId} onInput={text('reviewerId')} placeholder="name@example.com" />
        </label>
      </fieldset>

      <fieldset>
        <legend>When the gate cannot answer</legend>
        <label>
          <span>Fail mode</span>
          <select id="fail-mode" {...lock('failMode')} value={draft.failMode} onChange={text('failMode')}>
            <option value="closed">Fail closed: nothing is sent (default)</option>
            <option value="open">Fail open: send, and log it</option>
          </select>
        </label>
      </fieldset>

      <fieldset>
        <legend>Gate profile</legend>
        <label>
          <span>Pack</span>
          <input id="gate-pack" {...lock('gateProfile')} list="ag-packs" value={draft.pack} onInput={text('pack')} />
          <datalist id="ag-packs">
            {packs.map((p) => (
              <option key={p.name} value={p.name} />
            ))}
          </datalist>
        </label>
        <label>
          <span>Action type{pack?.default_action_type ? ` (default ${pack.default_action_type})` : ''}</span>
          <input id="gate-action-type" {...lock('gateProfile')} list="ag-action-types" value={draft.actionType} onInput={text('actionType')} />
          <datalist id="ag-action-types">
            {(pack?.action_types ?? []).map((a) => (
              <option key={a.id} value={a.id}>
                {a.title} (default: {a.default_decision})
              </option>
            ))}
          </datalist>
        </label>
        <label>
          <span>Action type for files attached to AI tools (empty: the same)</span>
          <input id="gate-file-action-type" {...lock('gateProfile')} list="ag-action-types" value={draft.fileActionType} onInput={text('fileActionType')} />
        </label>
        <label>
          <span>Pack context (JSON; tool_id comes from the site when omitted)</span>
          <textarea id="gate-context" {...lock('gateProfile')} rows={4} value={draft.contextJson} onInput={text('contextJson')} />
        </label>
        {pack && <p class="ag-hint">Required: {pack.required_fields.join(', ')}</p>}
      </fieldset>

      <fieldset>
        <legend>Sites</legend>
        {ADAPTER_IDS.map((id) => (
          <label key={id} class="ag-check">
            <input
              type="checkbox"
              id={`site-${id}`}
              checked={draft.enabledSites[id]}
              onChange={(e) => set('enabledSites', { ...draft.enabledSites, [id]: (e.target as HTMLInputElement).checked })}
            />
            <span>{id === 'generic' ? 'Internal tools (generic adapter)' : BUILT_IN_ADAPTERS[id].label}</span>
          </label>
        ))}
        <label>
          <span>Site mappings: one per line, "&lt;URL pattern with *&gt; &lt;adapter&gt;"</span>
          <textarea id="site-mappings" {...lock('siteMappings')} rows={4} value={draft.mappingsText} onInput={text('mappingsText')} placeholder="https://ai.intranet.example/* generic" />
        </label>
      </fieldset>

      <fieldset>
        <legend>Generic adapter (internal tools)</legend>
        <label>
          <span>Name</span>
          <input id="generic-label" value={draft.genericLabel} onInput={text('genericLabel')} />
        </label>
        <label>
          <span>Composer selector</span>
          <input id="generic-composer" value={draft.genericComposer} onInput={text('genericComposer')} />
        </label>
        <label>
          <span>Send control selector</span>
          <input id="generic-send" value={draft.genericSend} onInput={text('genericSend')} />
        </label>
        <label class="ag-check">
          <input
            type="checkbox"
            id="generic-enter-sends"
            checked={draft.genericEnterSends}
            onChange={(e) => set('genericEnterSends', (e.target as HTMLInputElement).checked)}
          />
          <span>Enter in the composer sends (a chat app), rather than starting a new line</span>
        </label>
        <label>
          <span>Release (click-send, request-submit, enter-key; in order)</span>
          <input id="generic-release" value={draft.genericRelease} onInput={text('genericRelease')} />
        </label>
      </fieldset>

      <div class="ag-actions">
        <button type="submit" id="save">
          Save
        </button>
        <button type="button" id="export-log" onClick={onExport}>
          Export log (JSON)
        </button>
      </div>
      {status && (
        <div class={`ag-status ag-status-${status.kind}`} id="save-status" role="status">
          {status.lines.map((l) => (
            <p key={l}>{l}</p>
          ))}
        </div>
      )}
    </form>
  );
}

function ConnectionResult({ report }: { report: ConnectionReport }) {
  return (
    <div class="ag-connection-result" id="connection-result" data-ok={String(report.ok)}>
      <p>{report.detail}</p>
      {report.usage && (
        <p>
          Usage: {report.usage.actions_used}
          {report.usage.cap !== null ? ` of ${report.usage.cap}` : ''} sealed actions
          {report.usage.warning ? `: ${report.usage.warning}` : ''}
        </p>
      )}
      {report.api_keys.length > 0 && (
        <p>
          API keys:{' '}
          {report.api_keys.map((k) => `${k.prefix}…${k.last_four} (${k.status})`).join(', ')}
        </p>
      )}
      {report.signing_keys.length > 0 && (
        <p>
          Pinned signing keys:{' '}
          {report.signing_keys.map((k) => `${k.kid.slice(0, 10)}… (${k.status}${k.dev_key && k.status !== 'sandbox' ? ', sandbox key' : ''})`).join(', ')}
        </p>
      )}
      {report.alarms.map((a) => (
        <p key={a.id} class="ag-problem" role="alert">
          Key alarm: {a.detail}
        </p>
      ))}
    </div>
  );
}
