/**
 * Policy: per pack, the current tenant policy version and its sealed receipts (each verified in
 * this browser), an editor for the allow list, hard denies, required reviews, routes and review
 * rules, and the preview of a change on sample requests before it can be saved
 * (POST /tenant/policy/preview, then PUT /tenant/policy). Every refusal is shown at its field.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, query } from '../api.ts';
import { verifyReceipt } from '../evidence.ts';
import type { Verification } from '../evidence.ts';
import { when } from '../format.ts';
import { Badge, decisionTone } from '../ui/badge.tsx';
import { Field } from '../ui/field.tsx';
import { useLoad } from '../ui/load.ts';
import { Name, useDirectory } from '../ui/names.tsx';
import { ErrorNotice, NeedsCapability, Notice } from '../ui/notice.tsx';
import { Columns, TableWrap } from '../ui/table.tsx';
import type { PageProps } from './types.ts';

type Treatment = '' | 'allow' | 'review' | 'deny';

interface PolicyDocument {
  allow_action_types: string[];
  deny_action_types: string[];
  review_action_types: string[];
  review_routes: Record<string, string>;
  review_rules?: Record<string, { approvals_required: number; remind_after_seconds?: number }>;
  label?: string;
  note?: string;
}

interface PolicyVersion {
  version: number;
  digest: string;
  actor: string;
  created_at: string;
  document: PolicyDocument;
  receipt: { action_key: string; verify_request: unknown };
}

interface Options {
  action_types: { id: string; title: string; default_decision: string; default_review_route: string; allowable: boolean }[];
  review_routes: { pattern: string; channels: string[]; pack_default: string };
  current: PolicyVersion | null;
  raw_material: { rules: { id: string; description: string }[] };
}

interface Preview {
  results: { index: number; action_type: string; current: { decision: string; review_route: string | null }; candidate: { decision: string; review_route: string | null }; changed: boolean }[];
  summary: { samples: number; changed: number };
}

interface Editor {
  treatment: Record<string, Treatment>;
  route: Record<string, string>;
  approvals: Record<string, string>;
  label: string;
  note: string;
}

function editorFrom(options: Options): Editor {
  const doc = options.current?.document;
  const treatment: Record<string, Treatment> = {};
  for (const t of options.action_types) {
    treatment[t.id] = doc?.allow_action_types.includes(t.id) ? 'allow' : doc?.deny_action_types.includes(t.id) ? 'deny' : doc?.review_action_types.includes(t.id) ? 'review' : '';
  }
  const approvals: Record<string, string> = {};
  for (const [k, r] of Object.entries(doc?.review_rules ?? {})) approvals[k] = String(r.approvals_required);
  return { treatment, route: { ...(doc?.review_routes ?? {}) }, approvals, label: doc?.label ?? '', note: doc?.note ?? '' };
}

function documentOf(pack: string, e: Editor): Record<string, unknown> {
  const pick = (t: Treatment) => Object.keys(e.treatment).filter((k) => e.treatment[k] === t);
  const routes = Object.fromEntries(Object.entries(e.route).filter(([, v]) => v.trim() !== '').map(([k, v]) => [k, v.trim()]));
  const rules = Object.fromEntries(Object.entries(e.approvals).filter(([, v]) => v.trim() !== '').map(([k, v]) => [k, { approvals_required: Number(v) }]));
  return {
    policy_pack: pack,
    allow_action_types: pick('allow'),
    deny_action_types: pick('deny'),
    review_action_types: pick('review'),
    review_routes: routes,
    ...(Object.keys(rules).length > 0 ? { review_rules: rules } : {}),
    ...(e.label.trim() ? { label: e.label.trim() } : {}),
    ...(e.note.trim() ? { note: e.note.trim() } : {}),
  };
}

export default function Policy({ me }: PageProps) {
  const packs = useLoad(() => api<{ packs: { name: string; title: string; kind: string }[] }>('/v1/packs'));
  const [pack, setPack] = useState('law');
  return (
    <div>
      <Field label="Pack">
        {(a11y) => (
          <select {...a11y} value={pack} onChange={(e) => setPack(e.currentTarget.value)}>
            {(packs.data?.packs ?? [{ name: 'law', title: 'Law', kind: 'gate' }])
              .filter((p) => p.kind === 'gate')
              .map((p) => (
                <option key={p.name} value={p.name}>
                  {p.title} ({p.name})
                </option>
              ))}
          </select>
        )}
      </Field>
      <PackPolicy key={pack} pack={pack} canEdit={me.capabilities.includes('policy:manage')} me={me} />
    </div>
  );
}

interface Saved {
  version: number;
  changed: boolean;
  verification: Verification;
}

function PackPolicy({ pack, canEdit, me }: { pack: string; canEdit: boolean; me: PageProps['me'] }) {
  const dir = useDirectory(me);
  const options = useLoad(() => api<Options>(`/tenant/policy/options${query({ policy_pack: pack })}`));
  const receipts = useLoad(() => api<{ receipts: PolicyVersion[] }>(`/tenant/policy/receipts${query({ policy_pack: pack, limit: 20 })}`));
  // Kept here: the editor starts afresh from the version it saved.
  const [saved, setSaved] = useState<Saved | null>(null);
  const onSaved = (s: Saved) => {
    setSaved(s);
    options.reload();
    receipts.reload();
  };
  if (options.error) return <ErrorNotice error={options.error} />;
  if (!options.data) return <p>Loading…</p>;
  return (
    <div class="policy">
      <section aria-labelledby="current-h" class="card">
        <h2 id="current-h">Current version</h2>
        {options.data.current ? (
          <p>
            Version {options.data.current.version}, saved {when(options.data.current.created_at)} by <Name id={options.data.current.actor} dir={dir} />
            {options.data.current.document.label ? ` — “${options.data.current.document.label}”` : ''}.
          </p>
        ) : (
          <p>No tenant policy yet: the pack’s defaults apply.</p>
        )}
      </section>
      {saved ? <SavedNotice saved={saved} /> : null}
      {canEdit ? (
        <PolicyEditor key={options.data.current?.version ?? 0} pack={pack} options={options.data} onSaved={onSaved} onEdit={() => setSaved(null)} />
      ) : (
        <NeedsCapability capability="policy:manage" what="change this pack's policy" />
      )}
      <section aria-labelledby="receipts-h" class="card">
        <h2 id="receipts-h">Receipts</h2>
        {receipts.error ? <ErrorNotice error={receipts.error} /> : null}
        {receipts.data && receipts.data.receipts.length === 0 ? <p>No versions yet.</p> : null}
        {receipts.data && receipts.data.receipts.length > 0 ? (
          <TableWrap label="Policy versions">
            <table>
              <caption class="visually-hidden">Policy versions of {pack}, newest first</caption>
              <Columns names={['Version', 'Saved', 'By', 'Allow / review / deny', 'Receipt']} />
              <tbody>
                {receipts.data.receipts.map((v) => (
                  <tr key={v.version}>
                    <td>{v.version}</td>
                    <td>{when(v.created_at)}</td>
                    <td>
                      <Name id={v.actor} dir={dir} />
                    </td>
                    <td>
                      {v.document.allow_action_types.length} / {v.document.review_action_types.length} / {v.document.deny_action_types.length}
                    </td>
                    <td>
                      <ReceiptBadge verifyRequest={v.receipt.verify_request} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        ) : null}
      </section>
    </div>
  );
}

function ReceiptBadge({ verifyRequest }: { verifyRequest: unknown }) {
  const [v, setV] = useState<Verification | null>(null);
  useEffect(() => void verifyReceipt(verifyRequest).then(setV), [verifyRequest]);
  if (v === null) return <Badge tone="neutral">checking…</Badge>;
  return v.verified ? <Badge tone="ok">verified</Badge> : <Badge tone="bad" title={v.failed.join(', ')}>not verified</Badge>;
}

function SavedNotice({ saved }: { saved: Saved }) {
  if (!saved.verification.verified) {
    return <Notice tone="error">Saved as version {saved.version}, but its receipt did not verify here ({saved.verification.failed.join(', ')}).</Notice>;
  }
  return (
    <Notice tone="success">
      <Badge tone="ok">verified</Badge>{' '}
      {saved.changed ? `Saved as version ${saved.version}; its receipt verified in this browser.` : `Nothing changed: version ${saved.version} already says this.`}
    </Notice>
  );
}

function PolicyEditor({ pack, options, onSaved, onEdit }: { pack: string; options: Options; onSaved: (s: Saved) => void; onEdit: () => void }) {
  const [editor, setEditor] = useState<Editor>(() => editorFrom(options));
  const fixtures = useLoad(() => api<{ fixtures: { pack: string; kind: string; body: Record<string, unknown> }[] }>('/demo-fixtures'));
  const [samplesText, setSamplesText] = useState<string | null>(null);
  const [preview, setPreview] = useState<{ digest: string; body: Preview } | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);

  // One sample per action type, from the pack's synthetic demo request (GET /demo-fixtures).
  const base = fixtures.data?.fixtures.find((f) => f.pack === pack && f.kind === 'gate')?.body;
  const generated = base ? JSON.stringify(options.action_types.map((t) => ({ ...base, action_type: t.id })), null, 2) : '[]';
  const samples = samplesText ?? generated;
  const doc = documentOf(pack, editor);
  const digest = JSON.stringify(doc);
  const previewed = preview !== null && preview.digest === digest;

  const update = (change: Partial<Editor>) => {
    setEditor({ ...editor, ...change });
    onEdit();
  };
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const doPreview = () =>
    run(async () => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(samples);
      } catch {
        throw new ApiError({ status: 422, detail: 'The samples are not valid JSON.', errors: [{ in: 'body', path: '/samples', message: 'not valid JSON' }] });
      }
      const body = await api<Preview>(`/tenant/policy/preview${query({ policy_pack: pack })}`, { json: { policy: doc, samples: parsed } });
      setPreview({ digest, body });
    });
  const save = () =>
    run(async () => {
      const res = await api<PolicyVersion & { changed: boolean }>(`/tenant/policy${query({ policy_pack: pack })}`, { method: 'PUT', json: doc });
      onSaved({ version: res.version, changed: res.changed, verification: await verifyReceipt(res.receipt.verify_request) });
    });

  const fieldError = (pointer: string) => (error instanceof ApiError ? (error.fieldError(pointer) ?? error.fieldError(`/policy${pointer}`)) : undefined);
  return (
    <section aria-labelledby="edit-h" class="card">
      <h2 id="edit-h">Change the policy</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void doPreview();
        }}
      >
        <TableWrap label="Treatment per action type">
          <table>
            <caption>How each action type is treated. “Pack default” keeps the pack’s own decision.</caption>
            <Columns names={['Action type', 'Pack default', 'Treatment', 'Review route', 'Approvals needed']} />
            <tbody>
              {options.action_types.map((t) => (
                <tr key={t.id}>
                  <th scope="row">
                    {t.title}
                    <br />
                    <code>{t.id}</code>
                  </th>
                  <td>
                    <Badge tone={decisionTone(t.default_decision)}>{t.default_decision}</Badge>
                  </td>
                  <td>
                    <select
                      aria-label={`Treatment of ${t.id}`}
                      value={editor.treatment[t.id]}
                      onChange={(e) => update({ treatment: { ...editor.treatment, [t.id]: e.currentTarget.value as Treatment } })}
                    >
                      <option value="">Pack default</option>
                      <option value="allow" disabled={!t.allowable}>
                        Allow{t.allowable ? '' : ' (not allowable)'}
                      </option>
                      <option value="review">Require review</option>
                      <option value="deny">Deny</option>
                    </select>
                  </td>
                  <td>
                    <input
                      aria-label={`Review route of ${t.id}`}
                      placeholder={t.default_review_route}
                      maxLength={200}
                      value={editor.route[t.id] ?? ''}
                      aria-invalid={fieldError(`/review_routes/${t.id}`) ? 'true' : undefined}
                      onInput={(e) => update({ route: { ...editor.route, [t.id]: e.currentTarget.value } })}
                    />
                    {fieldError(`/review_routes/${t.id}`) ? <p class="field-error">{fieldError(`/review_routes/${t.id}`)}</p> : null}
                  </td>
                  <td>
                    <input
                      aria-label={`Approvals needed for ${t.id}`}
                      type="number"
                      min={1}
                      max={10}
                      placeholder="1"
                      value={editor.approvals[t.id] ?? ''}
                      onInput={(e) => update({ approvals: { ...editor.approvals, [t.id]: e.currentTarget.value } })}
                    />
                    {fieldError(`/review_rules/${t.id}`) ? <p class="field-error">{fieldError(`/review_rules/${t.id}`)}</p> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
        <p class="hint">Routes look like {options.review_routes.pattern} (channels: {options.review_routes.channels.join(', ')}).</p>
        <div class="two">
          <Field label="Label" hint="A short name for this version; never raw material" error={fieldError('/label')}>
            {(a11y) => <input {...a11y} maxLength={200} value={editor.label} onInput={(e) => update({ label: e.currentTarget.value })} />}
          </Field>
          <Field label="Note" hint="Why it changed; never raw material" error={fieldError('/note')}>
            {(a11y) => <input {...a11y} maxLength={2000} value={editor.note} onInput={(e) => update({ note: e.currentTarget.value })} />}
          </Field>
        </div>
        <details>
          <summary>Sample requests ({samplesText === null ? 'one per action type' : 'edited'})</summary>
          <Field label="Samples (JSON array of gate requests)" error={fieldError('/samples')}>
            {(a11y) => <textarea {...a11y} rows={8} spellcheck={false} value={samples} onInput={(e) => setSamplesText(e.currentTarget.value)} />}
          </Field>
        </details>
        <div class="actions">
          <button type="submit" disabled={busy}>
            Preview on samples
          </button>
          <button type="button" disabled={busy || !previewed} onClick={save} title={previewed ? undefined : 'Preview this change first'}>
            Save as a new version
          </button>
          {!previewed ? <span class="muted">Preview the change before saving it.</span> : null}
        </div>
      </form>
      {error ? <ErrorNotice error={error} /> : null}
      {previewed ? <PreviewTable preview={preview.body} /> : null}
    </section>
  );
}

function PreviewTable({ preview }: { preview: Preview }) {
  return (
    <div class="preview" aria-live="polite">
      <h3>Preview</h3>
      <p>
        {preview.summary.changed} of {preview.summary.samples} sample requests would be decided differently.
      </p>
      <TableWrap label="Preview results">
        <table>
          <caption class="visually-hidden">Decisions now and with the change</caption>
          <Columns names={['Sample', 'Now', 'With the change']} />
          <tbody>
            {preview.results.map((r) => (
              <tr key={r.index} class={r.changed ? 'changed' : undefined}>
                <th scope="row">
                  {r.index + 1}. <code>{r.action_type}</code>
                </th>
                <td>
                  <Badge tone={decisionTone(r.current.decision)}>{r.current.decision}</Badge> {r.current.review_route ?? ''}
                </td>
                <td>
                  <Badge tone={decisionTone(r.candidate.decision)}>{r.candidate.decision}</Badge> {r.candidate.review_route ?? ''}
                  {r.changed ? <span class="strong"> changed</span> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </div>
  );
}
