/**
 * People and keys: the tenant's people (add, change capabilities or role, deactivate and
 * reactivate), its service accounts, and every API key (create with a label, a capability
 * subset and an expiry, the secret shown once; rotate with an overlap; revoke). Each change is
 * an admin receipt sealed by the service (Audit page). The service enforces people:manage and
 * least privilege itself (companion/account/principal-routes.ts); this page shows its refusals
 * as they come, the last owner's 409 included.
 */
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, api, seg } from '../api.ts';
import { when } from '../format.ts';
import type { Capability, Me } from '../session.ts';
import { Badge } from '../ui/badge.tsx';
import { CapabilityList, CapabilityPicker, DEFAULT_CAPABILITIES } from '../ui/capabilities.tsx';
import { Field } from '../ui/field.tsx';
import { useLoad } from '../ui/load.ts';
import { Loaded } from '../ui/loaded.tsx';
import { keyName, personName, refreshDirectory, useDirectory } from '../ui/names.tsx';
import type { KeyRow, PersonRow, ServiceAccountRow } from '../ui/names.tsx';
import { ErrorNotice, NeedsCapability, Notice } from '../ui/notice.tsx';
import { SecretOnce } from '../ui/secret.tsx';
import { Columns, TableWrap } from '../ui/table.tsx';
import type { PageProps } from './types.ts';

interface Lists {
  people: PersonRow[];
  serviceAccounts: ServiceAccountRow[];
  keys: KeyRow[];
}

async function loadLists(): Promise<Lists> {
  const [people, accounts, keys] = await Promise.all([
    api<{ people: PersonRow[] }>('/account/people'),
    api<{ service_accounts: ServiceAccountRow[] }>('/account/service-accounts'),
    api<{ keys: KeyRow[] }>('/account/api-keys'),
  ]);
  return { people: people.people, serviceAccounts: accounts.service_accounts, keys: keys.keys };
}

export default function People({ me }: PageProps) {
  if (!me.capabilities.includes('people:manage')) return <NeedsCapability capability="people:manage" what="see and change people and keys" />;
  return <Manage me={me} />;
}

function Manage({ me }: { me: Me }) {
  const lists = useLoad(loadLists);
  const changed = () => {
    lists.reload();
    refreshDirectory(me);
  };
  return (
    <Loaded state={lists}>
      {(l) => (
        <>
          <PeopleSection me={me} people={l.people} onChanged={changed} />
          <ServiceAccountsSection accounts={l.serviceAccounts} onChanged={changed} />
          <KeysSection me={me} lists={l} onChanged={changed} />
        </>
      )}
    </Loaded>
  );
}

/** A row's action that asks again before it acts (deactivate, revoke). */
function Confirm({ question, confirm, onConfirm, onCancel }: { question: string; confirm: string; onConfirm: () => void; onCancel: () => void }) {
  return (
    <div class="confirm" role="group" aria-label={question}>
      <p>{question}</p>
      <div class="actions">
        <button type="button" class="danger" onClick={onConfirm}>
          {confirm}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}

// ---- people ----

function PeopleSection({ me, people, onChanged }: { me: Me; people: PersonRow[]; onChanged: () => void }) {
  const [open, setOpen] = useState<{ id: string; what: 'change' | 'status' } | null>(null);
  const [error, setError] = useState<{ id: string; error: unknown } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const setStatus = async (p: PersonRow, status: 'active' | 'deactivated') => {
    setError(null);
    setDone(null);
    try {
      await api(`/account/people/${seg(p.id)}`, { method: 'PATCH', json: { status } });
      setOpen(null);
      setDone(`${personName(p)} is ${status === 'active' ? 'active again' : 'deactivated: their keys and sessions stopped'}.`);
      onChanged();
    } catch (err) {
      setOpen(null);
      setError({ id: p.id, error: err });
    }
  };
  return (
    <section aria-labelledby="people-h" class="card">
      <h2 id="people-h">People</h2>
      {done ? <Notice tone="success">{done}</Notice> : null}
      <TableWrap label="People">
        <table>
          <caption class="visually-hidden">The tenant’s people, oldest first</caption>
          <Columns names={['Name', 'Email', 'Role', 'Capabilities', 'Status', { hidden: 'Actions' }]} />
          <tbody>
            {people.map((p) => (
              <Fragment key={p.id}>
                <tr>
                  <th scope="row">
                    <span title={p.id}>{personName(p)}</span>
                    {p.id === me.principal?.id ? <span class="muted"> (you)</span> : null}
                  </th>
                  <td>{p.email ?? <span class="muted">—</span>}</td>
                  <td>{p.role}</td>
                  <td>{p.role === 'owner' ? <span>every capability</span> : <CapabilityList list={p.capabilities} withoutDefaults />}</td>
                  <td>
                    <Badge tone={p.status === 'active' ? 'ok' : 'neutral'}>{p.status}</Badge>
                  </td>
                  <td class="row-actions">
                    <button
                      type="button"
                      class="secondary"
                      aria-expanded={open?.id === p.id && open.what === 'change'}
                      onClick={() => setOpen(open?.id === p.id && open.what === 'change' ? null : { id: p.id, what: 'change' })}
                    >
                      Change<span class="visually-hidden"> {personName(p)}</span>
                    </button>
                    <button type="button" class="secondary" onClick={() => setOpen({ id: p.id, what: 'status' })}>
                      {p.status === 'active' ? 'Deactivate' : 'Reactivate'}
                      <span class="visually-hidden"> {personName(p)}</span>
                    </button>
                  </td>
                </tr>
                {open?.id === p.id && open.what === 'status' ? (
                  <tr class="decide-row">
                    <td colSpan={6}>
                      {p.status === 'active' ? (
                        <Confirm
                          question={`Deactivate ${personName(p)}? Their keys and sessions stop at once; you can reactivate them later.`}
                          confirm="Deactivate"
                          onConfirm={() => setStatus(p, 'deactivated')}
                          onCancel={() => setOpen(null)}
                        />
                      ) : (
                        <Confirm
                          question={`Reactivate ${personName(p)}? Their keys that are not revoked or expired work again.`}
                          confirm="Reactivate"
                          onConfirm={() => setStatus(p, 'active')}
                          onCancel={() => setOpen(null)}
                        />
                      )}
                    </td>
                  </tr>
                ) : null}
                {open?.id === p.id && open.what === 'change' ? (
                  <tr class="decide-row">
                    <td colSpan={6}>
                      <ChangePerson
                        me={me}
                        person={p}
                        onDone={(message) => {
                          setOpen(null);
                          setDone(message);
                          onChanged();
                        }}
                      />
                    </td>
                  </tr>
                ) : null}
                {error?.id === p.id ? (
                  <tr>
                    <td colSpan={6}>
                      <ErrorNotice error={error.error} />
                    </td>
                  </tr>
                ) : null}
              </Fragment>
            ))}
          </tbody>
        </table>
      </TableWrap>
      <AddPerson onAdded={onChanged} />
    </section>
  );
}

function ChangePerson({ me, person, onDone }: { me: Me; person: PersonRow; onDone: (message: string) => void }) {
  const [role, setRole] = useState(person.role);
  const [caps, setCaps] = useState<Capability[]>(person.capabilities as Capability[]);
  const [name, setName] = useState(person.display_name ?? '');
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const meIsOwner = me.person?.role === 'owner';
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      const body: Record<string, unknown> = {};
      if (role !== person.role) body.role = role;
      if (role === 'member' && caps.join() !== person.capabilities.join()) body.capabilities = caps;
      if (name.trim() && name.trim() !== (person.display_name ?? '')) body.display_name = name.trim();
      const res = await api<{ receipt: { action_key: string } | null }>(`/account/people/${seg(person.id)}`, { method: 'PATCH', json: body });
      onDone(res.receipt ? `${name.trim() || personName(person)} changed; the change is sealed as an admin receipt.` : 'Nothing changed.');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const fieldError = (pointer: string) => (error instanceof ApiError ? error.fieldError(pointer) : undefined);
  return (
    <form class="decide" onSubmit={submit} aria-label={`Change ${personName(person)}`}>
      <Field label="Display name" error={fieldError('/display_name')}>
        {(a11y) => <input {...a11y} maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
      </Field>
      <Field label="Role" hint={meIsOwner ? 'An owner holds every capability' : 'Only an owner changes a role'} error={fieldError('/role')}>
        {(a11y) => (
          <select {...a11y} value={role} disabled={!meIsOwner} onChange={(e) => setRole(e.currentTarget.value as 'owner' | 'member')}>
            <option value="member">member</option>
            <option value="owner">owner</option>
          </select>
        )}
      </Field>
      {role === 'member' ? (
        <CapabilityPicker legend={`Capabilities of ${personName(person)}`} value={caps} onChange={setCaps} hint="You can give only capabilities you hold yourself." />
      ) : (
        <p class="muted">As an owner, {personName(person)} holds every capability.</p>
      )}
      <div class="actions">
        <button type="submit" disabled={busy}>
          Save changes
        </button>
      </div>
      {error ? <ErrorNotice error={error} /> : null}
    </form>
  );
}

function AddPerson({ onAdded }: { onAdded: () => void }) {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [caps, setCaps] = useState<Capability[]>([...DEFAULT_CAPABILITIES]);
  const [error, setError] = useState<unknown>(undefined);
  const [secret, setSecret] = useState<{ who: string; key: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setSecret(null);
    setBusy(true);
    try {
      const body: Record<string, unknown> = { email: email.trim(), capabilities: caps.filter((c) => !DEFAULT_CAPABILITIES.includes(c)) };
      if (name.trim()) body.display_name = name.trim();
      const res = await api<{ person: PersonRow; api_key: string }>('/account/people', { json: body });
      setSecret({ who: personName(res.person), key: res.api_key });
      setEmail('');
      setName('');
      setCaps([...DEFAULT_CAPABILITIES]);
      onAdded();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const fieldError = (pointer: string) => (error instanceof ApiError ? error.fieldError(pointer) : undefined);
  return (
    <>
      <h3 id="add-person-h">Add a person</h3>
      <form onSubmit={submit} aria-labelledby="add-person-h">
        <div class="filters">
          <Field label="Email" error={fieldError('/email')}>
            {(a11y) => <input {...a11y} type="email" required maxLength={254} autoComplete="off" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
          </Field>
          <Field label="Display name" hint="Optional; shown instead of the id" error={fieldError('/display_name')}>
            {(a11y) => <input {...a11y} maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
          </Field>
        </div>
        <CapabilityPicker
          legend="Their capabilities"
          value={caps}
          onChange={setCaps}
          disabled={DEFAULT_CAPABILITIES}
          hint="Every person holds gate:submit, records:write and records:read; you can take them away afterwards."
        />
        <div class="actions">
          <button type="submit" disabled={busy}>
            Add the person
          </button>
        </div>
      </form>
      {error ? <ErrorNotice error={error} /> : null}
      {secret ? <SecretOnce title={`${secret.who} is added. Their API key, to hand over securely:`} secret={secret.key} onDone={() => setSecret(null)} /> : null}
    </>
  );
}

// ---- service accounts ----

function ServiceAccountsSection({ accounts, onChanged }: { accounts: ServiceAccountRow[]; onChanged: () => void }) {
  const [confirming, setConfirming] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const [name, setName] = useState('');
  const [caps, setCaps] = useState<Capability[]>([...DEFAULT_CAPABILITIES]);
  const [busy, setBusy] = useState(false);
  const setStatus = async (s: ServiceAccountRow, status: 'active' | 'deactivated') => {
    setError(undefined);
    setConfirming(null);
    try {
      await api(`/account/service-accounts/${seg(s.id)}`, { method: 'PATCH', json: { status } });
      onChanged();
    } catch (err) {
      setError(err);
    }
  };
  const create = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      await api('/account/service-accounts', { json: { name: name.trim(), capabilities: caps.filter((c) => !DEFAULT_CAPABILITIES.includes(c)) } });
      setName('');
      setCaps([...DEFAULT_CAPABILITIES]);
      onChanged();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const fieldError = (pointer: string) => (error instanceof ApiError ? error.fieldError(pointer) : undefined);
  return (
    <section aria-labelledby="accounts-h" class="card">
      <h2 id="accounts-h">Service accounts</h2>
      <p class="muted">For automation and integrations: their keys act in the account’s name, never a person’s.</p>
      {accounts.length === 0 ? (
        <p>No service accounts yet.</p>
      ) : (
        <TableWrap label="Service accounts">
          <table>
            <caption class="visually-hidden">The tenant’s service accounts, oldest first</caption>
            <Columns names={['Name', 'Capabilities', 'Status', 'Created', { hidden: 'Actions' }]} />
            <tbody>
              {accounts.map((s) => (
                <Fragment key={s.id}>
                  <tr>
                    <th scope="row">
                      <span title={s.id}>{s.name}</span>
                    </th>
                    <td>
                      <CapabilityList list={s.capabilities} withoutDefaults />
                    </td>
                    <td>
                      <Badge tone={s.status === 'active' ? 'ok' : 'neutral'}>{s.status}</Badge>
                    </td>
                    <td>{when(s.created_at)}</td>
                    <td>
                      <button type="button" class="secondary" onClick={() => setConfirming(s.id)}>
                        {s.status === 'active' ? 'Deactivate' : 'Reactivate'}
                        <span class="visually-hidden"> {s.name}</span>
                      </button>
                    </td>
                  </tr>
                  {confirming === s.id ? (
                    <tr class="decide-row">
                      <td colSpan={5}>
                        <Confirm
                          question={s.status === 'active' ? `Deactivate ${s.name}? Its keys stop at once.` : `Reactivate ${s.name}?`}
                          confirm={s.status === 'active' ? 'Deactivate' : 'Reactivate'}
                          onConfirm={() => setStatus(s, s.status === 'active' ? 'deactivated' : 'active')}
                          onCancel={() => setConfirming(null)}
                        />
                      </td>
                    </tr>
                  ) : null}
                </Fragment>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <h3 id="add-account-h">Add a service account</h3>
      <form onSubmit={create} aria-labelledby="add-account-h">
        <Field label="Service account name" error={fieldError('/name')}>
          {(a11y) => <input {...a11y} required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <CapabilityPicker legend="Its capabilities" value={caps} onChange={setCaps} disabled={DEFAULT_CAPABILITIES} />
        <div class="actions">
          <button type="submit" disabled={busy}>
            Add the service account
          </button>
        </div>
      </form>
      {error ? <ErrorNotice error={error} /> : null}
    </section>
  );
}

// ---- keys ----

const OVERLAPS: { seconds: number; label: string }[] = [
  { seconds: 0, label: 'none: the old key stops at once' },
  { seconds: 3600, label: '1 hour' },
  { seconds: 86_400, label: '1 day' },
  { seconds: 7 * 86_400, label: '7 days (the longest)' },
];

function keyTone(status: KeyRow['status']) {
  return status === 'active' ? 'ok' : status === 'revoked' ? 'bad' : 'neutral';
}

function KeysSection({ me, lists, onChanged }: { me: Me; lists: Lists; onChanged: () => void }) {
  const [open, setOpen] = useState<{ id: string; what: 'rotate' | 'revoke' } | null>(null);
  const [error, setError] = useState<{ id: string; error: unknown } | null>(null);
  const [secret, setSecret] = useState<{ title: string; key: string } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const dir = useDirectory(me);
  const ownerName = (k: KeyRow) => dir?.get(k.principal.id)?.name ?? k.principal.display_name;
  const revoke = async (k: KeyRow) => {
    setError(null);
    setDone(null);
    try {
      await api(`/account/api-keys/${seg(k.id)}/revoke`, { method: 'POST' });
      setOpen(null);
      setDone(`Key ${keyName(k)} is revoked: the next request with it is refused.`);
      onChanged();
    } catch (err) {
      setOpen(null);
      setError({ id: k.id, error: err });
    }
  };
  return (
    <section aria-labelledby="keys-h" class="card">
      <h2 id="keys-h">API keys</h2>
      {done ? <Notice tone="success">{done}</Notice> : null}
      {secret ? <SecretOnce title={secret.title} secret={secret.key} onDone={() => setSecret(null)} /> : null}
      <TableWrap label="API keys">
        <table>
          <caption class="visually-hidden">Every key of the tenant, oldest first; never a secret</caption>
          <Columns names={['Key', 'Belongs to', 'Capabilities', 'Created', 'Last used', 'Expires', 'Status', { hidden: 'Actions' }]} />
          <tbody>
            {lists.keys.map((k) => (
              <Fragment key={k.id}>
                <tr>
                  <th scope="row">
                    <span title={k.id}>{keyName(k)}</span>
                  </th>
                  <td>
                    <span title={k.principal.id}>{ownerName(k)}</span>
                  </td>
                  <td>{k.capability_subset === null ? <span>all of its principal’s</span> : <CapabilityList list={k.capabilities} />}</td>
                  <td>{when(k.created_at)}</td>
                  <td>{k.last_used_at ? when(k.last_used_at) : <span class="muted">never</span>}</td>
                  <td>{k.expires_at ? when(k.expires_at) : <span class="muted">never</span>}</td>
                  <td>
                    <Badge tone={keyTone(k.status)}>{k.status}</Badge>
                  </td>
                  <td class="row-actions">
                    {k.status === 'active' ? (
                      <>
                        <button
                          type="button"
                          class="secondary"
                          aria-expanded={open?.id === k.id && open.what === 'rotate'}
                          onClick={() => setOpen(open?.id === k.id && open.what === 'rotate' ? null : { id: k.id, what: 'rotate' })}
                        >
                          Rotate<span class="visually-hidden"> {keyName(k)}</span>
                        </button>
                        <button type="button" class="secondary" onClick={() => setOpen({ id: k.id, what: 'revoke' })}>
                          Revoke<span class="visually-hidden"> {keyName(k)}</span>
                        </button>
                      </>
                    ) : null}
                  </td>
                </tr>
                {open?.id === k.id && open.what === 'revoke' ? (
                  <tr class="decide-row">
                    <td colSpan={8}>
                      <Confirm
                        question={`Revoke ${keyName(k)} of ${ownerName(k)}? The next request with it is refused; this cannot be undone.`}
                        confirm="Revoke the key"
                        onConfirm={() => revoke(k)}
                        onCancel={() => setOpen(null)}
                      />
                    </td>
                  </tr>
                ) : null}
                {open?.id === k.id && open.what === 'rotate' ? (
                  <tr class="decide-row">
                    <td colSpan={8}>
                      <RotateKey
                        keyRow={k}
                        onRotated={(newKey, overlap) => {
                          setOpen(null);
                          setSecret({
                            title: `The new key for ${ownerName(k)}. The old one ${overlap === 0 ? 'stopped now' : `keeps working for ${OVERLAPS.find((o) => o.seconds === overlap)?.label ?? `${overlap} s`}`}.`,
                            key: newKey,
                          });
                          onChanged();
                        }}
                      />
                    </td>
                  </tr>
                ) : null}
                {error?.id === k.id ? (
                  <tr>
                    <td colSpan={8}>
                      <ErrorNotice error={error.error} />
                    </td>
                  </tr>
                ) : null}
              </Fragment>
            ))}
          </tbody>
        </table>
      </TableWrap>
      <CreateKey
        me={me}
        accounts={lists.serviceAccounts.filter((s) => s.status === 'active')}
        onCreated={(title, key) => {
          setDone(null);
          setSecret({ title, key });
          onChanged();
        }}
      />
    </section>
  );
}

function RotateKey({ keyRow, onRotated }: { keyRow: KeyRow; onRotated: (key: string, overlap: number) => void }) {
  const [overlap, setOverlap] = useState(3600);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      const res = await api<{ api_key: string }>(`/account/api-keys/${seg(keyRow.id)}/rotate`, { json: { overlap_seconds: overlap } });
      onRotated(res.api_key, overlap);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="decide" onSubmit={submit} aria-label={`Rotate ${keyName(keyRow)}`}>
      <Field label="The old key keeps working for" hint="So what uses it can switch to the new key without a gap">
        {(a11y) => (
          <select {...a11y} value={String(overlap)} onChange={(e) => setOverlap(Number(e.currentTarget.value))}>
            {OVERLAPS.map((o) => (
              <option key={o.seconds} value={String(o.seconds)}>
                {o.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <div class="actions">
        <button type="submit" disabled={busy}>
          Rotate the key
        </button>
      </div>
      {error ? <ErrorNotice error={error} /> : null}
    </form>
  );
}

/** A datetime-local value (the browser's zone) as RFC 3339 UTC, or undefined when empty. */
function utc(local: string): string | undefined {
  if (!local) return undefined;
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

function CreateKey({ me, accounts, onCreated }: { me: Me; accounts: ServiceAccountRow[]; onCreated: (title: string, key: string) => void }) {
  const self = me.principal?.id ?? '';
  const [principal, setPrincipal] = useState(self);
  const [label, setLabel] = useState('');
  const [narrow, setNarrow] = useState(false);
  const [caps, setCaps] = useState<Capability[]>([]);
  const [expires, setExpires] = useState('');
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      const body: Record<string, unknown> = {};
      if (principal && principal !== self) body.principal_id = principal;
      if (label.trim()) body.label = label.trim();
      if (narrow) body.capabilities = caps;
      const at = utc(expires);
      if (at) body.expires_at = at;
      const res = await api<{ api_key: string; key: KeyRow }>('/account/api-keys', { json: body });
      onCreated(`The new key ${keyName(res.key)} for ${principal === self ? 'you' : (accounts.find((a) => a.id === principal)?.name ?? 'the service account')}:`, res.api_key);
      setLabel('');
      setExpires('');
      setNarrow(false);
      setCaps([]);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const fieldError = (pointer: string) => (error instanceof ApiError ? error.fieldError(pointer) : undefined);
  return (
    <>
      <h3 id="add-key-h">Create a key</h3>
      <form onSubmit={submit} aria-labelledby="add-key-h">
        <div class="filters">
          <Field label="For" hint="Yourself or a service account; never another person" error={fieldError('/principal_id')}>
            {(a11y) => (
              <select {...a11y} value={principal} onChange={(e) => setPrincipal(e.currentTarget.value)}>
                <option value={self}>yourself</option>
                {accounts.map((a) => (
                  <option key={a.id} value={a.id}>
                    {a.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Label" hint="What the key is for, e.g. CI deploys" error={fieldError('/label')}>
            {(a11y) => <input {...a11y} maxLength={200} value={label} onInput={(e) => setLabel(e.currentTarget.value)} />}
          </Field>
          <Field label="Expires" hint="Optional; your local time" error={fieldError('/expires_at')}>
            {(a11y) => <input {...a11y} type="datetime-local" value={expires} onInput={(e) => setExpires(e.currentTarget.value)} />}
          </Field>
        </div>
        <label class="checkbox">
          <input type="checkbox" checked={narrow} onChange={(e) => setNarrow(e.currentTarget.checked)} />
          Only some capabilities (least privilege)
        </label>
        {narrow ? <CapabilityPicker legend="The key’s capabilities" value={caps} onChange={setCaps} hint="At most what its principal holds" /> : null}
        <div class="actions">
          <button type="submit" disabled={busy}>
            Create the key
          </button>
        </div>
      </form>
      {error ? <ErrorNotice error={error} /> : null}
    </>
  );
}
