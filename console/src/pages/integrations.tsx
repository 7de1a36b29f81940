/**
 * Integrations: the tenant's review routes and event webhooks with their readiness, a webhook's
 * deliveries with status and last error, requeue of a dead letter, and registration of a
 * webhook, whose signing secret is shown once (only a derived key is stored) and never again.
 */
import { useState } from 'preact/hooks';
import { ApiError, api, query, seg } from '../api.ts';
import { when } from '../format.ts';
import { EVENT_KINDS } from '../../../companion/webhooks/events.ts';
import { Badge, ReadinessBadge } from '../ui/badge.tsx';
import { Field } from '../ui/field.tsx';
import { useLoad } from '../ui/load.ts';
import { ErrorNotice, NeedsCapability, Notice } from '../ui/notice.tsx';
import { Columns, TableWrap } from '../ui/table.tsx';
import type { PageProps } from './types.ts';


interface ReadinessList {
  integrations: { channel: string; target: string; readiness: { state: string; detail: string } }[];
}

interface Delivery {
  id: string;
  event: string;
  status: 'pending' | 'delivered' | 'failed';
  dead_lettered: boolean;
  attempt_count: number;
  last_error: string | null;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
}

interface Deliveries {
  endpoint: { state: string; disabled_reason: string | null };
  deliveries: Delivery[];
}

interface Dispatch {
  dispatch_key: string;
  action_key: string;
  channel: string;
  target: string;
  attempt_count: number;
  last_error: string | null;
}

export default function Integrations({ me }: PageProps) {
  const list = useLoad(() => api<ReadinessList>('/tenant/integrations/readiness'));
  const canManage = me.capabilities.includes('integrations:manage');
  const [selected, setSelected] = useState<string | null>(null);
  const webhooks = (list.data?.integrations ?? []).filter((i) => i.channel === 'webhook');
  const target = selected ?? webhooks[0]?.target ?? null;
  return (
    <div>
      {!canManage ? <NeedsCapability capability="integrations:manage" what="register webhooks or requeue deliveries" /> : null}
      <section aria-labelledby="all-h" class="card">
        <h2 id="all-h">Routes and webhooks</h2>
        {list.error ? <ErrorNotice error={list.error} /> : null}
        {list.data && list.data.integrations.length === 0 ? <p>None yet.</p> : null}
        {list.data && list.data.integrations.length > 0 ? (
          <TableWrap label="Routes and webhooks">
            <table>
              <Columns names={['Channel', 'Target', 'Readiness', 'Detail']} />
              <tbody>
                {list.data.integrations.map((i) => (
                  <tr key={`${i.channel}/${i.target}`}>
                    <td>{i.channel}</td>
                    <td>
                      <code>{i.target}</code>
                    </td>
                    <td>
                      <ReadinessBadge state={i.readiness.state} />
                    </td>
                    <td>{i.readiness.detail}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        ) : null}
      </section>
      {webhooks.length > 0 ? (
        <section aria-labelledby="deliveries-h" class="card">
          <h2 id="deliveries-h">Webhook deliveries</h2>
          <Field label="Webhook">
            {(a11y) => (
              <select {...a11y} value={target ?? ''} onChange={(e) => setSelected(e.currentTarget.value)}>
                {webhooks.map((w) => (
                  <option key={w.target}>{w.target}</option>
                ))}
              </select>
            )}
          </Field>
          {target ? <DeliveryList key={target} target={target} canManage={canManage} /> : null}
        </section>
      ) : null}
      <RouteDeadLetters canManage={canManage} />
      {canManage ? <RegisterWebhook onRegistered={list.reload} /> : null}
    </div>
  );
}

function DeliveryList({ target, canManage }: { target: string; canManage: boolean }) {
  const list = useLoad(() => api<Deliveries>(`/tenant/integrations/webhook/${seg(target)}/deliveries${query({ limit: 50 })}`));
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const requeue = async (d: Delivery) => {
    setError(undefined);
    try {
      await api(`/tenant/integrations/webhook/${seg(target)}/deliveries/${seg(d.id)}/requeue`, { method: 'POST' });
      setMessage(`Requeued ${d.id}: it is sent again now.`);
      list.reload();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <div>
      <div class="toolbar">
        <button type="button" class="secondary" onClick={list.reload}>
          Refresh
        </button>
        {list.data ? (
          <span>
            Endpoint: <Badge tone={list.data.endpoint.state === 'enabled' ? 'ok' : 'bad'}>{list.data.endpoint.state.replaceAll('_', ' ')}</Badge>
            {list.data.endpoint.disabled_reason ? <span class="muted"> {list.data.endpoint.disabled_reason}</span> : null}
          </span>
        ) : null}
      </div>
      {message ? <Notice tone="success">{message}</Notice> : null}
      {error ? <ErrorNotice error={error} /> : null}
      {list.error ? <ErrorNotice error={list.error} /> : null}
      {list.data && list.data.deliveries.length === 0 ? <p>No deliveries yet.</p> : null}
      {list.data && list.data.deliveries.length > 0 ? (
        <TableWrap label="Deliveries">
          <table>
            <caption class="visually-hidden">Deliveries to {target}, newest first</caption>
            <Columns names={['Delivery', 'Event', 'Status', 'Attempts', 'Last error', 'Next attempt', { hidden: 'Requeue' }]} />
            <tbody>
              {list.data.deliveries.map((d) => (
                <tr key={d.id}>
                  <td>
                    <code>{d.id}</code>
                  </td>
                  <td>{d.event}</td>
                  <td>
                    <Badge tone={d.status === 'delivered' ? 'ok' : d.dead_lettered ? 'bad' : d.status === 'failed' ? 'wait' : 'neutral'}>
                      {d.dead_lettered ? 'dead letter' : d.status}
                    </Badge>
                  </td>
                  <td>{d.attempt_count}</td>
                  <td>{d.last_error ?? '—'}</td>
                  <td>{when(d.next_attempt_at)}</td>
                  <td>
                    {d.status === 'failed' ? (
                      <button type="button" class="secondary" disabled={!canManage} onClick={() => requeue(d)}>
                        Requeue<span class="visually-hidden"> {d.id}</span>
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      ) : null}
    </div>
  );
}

function RouteDeadLetters({ canManage }: { canManage: boolean }) {
  const list = useLoad(() => api<{ dispatches: Dispatch[] }>('/routing/outbox/dead-letters'));
  const [error, setError] = useState<unknown>(undefined);
  const requeue = async (d: Dispatch) => {
    setError(undefined);
    try {
      await api(`/routing/outbox/${seg(d.dispatch_key)}/requeue`, { method: 'POST' });
      list.reload();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <section aria-labelledby="routes-h" class="card">
      <h2 id="routes-h">Review route dead letters</h2>
      {error ? <ErrorNotice error={error} /> : null}
      {list.error ? <ErrorNotice error={list.error} /> : null}
      {list.data && list.data.dispatches.length === 0 ? <p>No review dispatch has run out of attempts.</p> : null}
      {list.data && list.data.dispatches.length > 0 ? (
        <ul class="checks">
          {list.data.dispatches.map((d) => (
            <li key={d.dispatch_key}>
              <Badge tone="bad">dead letter</Badge> {d.channel} <code>{d.target}</code> after {d.attempt_count} attempts: {d.last_error ?? 'no error recorded'}{' '}
              <button type="button" class="secondary" disabled={!canManage} onClick={() => requeue(d)}>
                Requeue<span class="visually-hidden"> {d.dispatch_key}</span>
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

function RegisterWebhook({ onRegistered }: { onRegistered: () => void }) {
  const [target, setTarget] = useState('');
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(['record.sealed']);
  const [error, setError] = useState<unknown>(undefined);
  const [secret, setSecret] = useState<{ target: string; value: string } | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setSecret(null);
    try {
      const res = await api<{ signing_secret?: string }>(`/tenant/integrations/webhook/${seg(target.trim())}`, {
        method: 'PUT',
        json: { enabled: true, config: { url: url.trim(), events } },
      });
      if (res.signing_secret) setSecret({ target: target.trim(), value: res.signing_secret });
      onRegistered();
    } catch (err) {
      setError(err);
    }
  };
  const fieldError = (pointer: string) => (error instanceof ApiError ? error.fieldError(pointer) : undefined);
  const targetError = error instanceof ApiError ? error.problem.errors?.find((x) => x.in === 'path')?.message : undefined;
  return (
    <section aria-labelledby="register-h" class="card">
      <h2 id="register-h">Register a webhook</h2>
      <form onSubmit={submit}>
        <div class="two">
          <Field label="Target name" hint="Lowercase letters, digits, dot, dash, underscore" error={targetError}>
            {(a11y) => <input {...a11y} required maxLength={63} value={target} onInput={(e) => setTarget(e.currentTarget.value)} />}
          </Field>
          <Field label="Endpoint URL" hint="https://…; the service refuses private addresses" error={fieldError('/config/url')}>
            {(a11y) => <input {...a11y} required type="url" maxLength={2000} value={url} onInput={(e) => setUrl(e.currentTarget.value)} />}
          </Field>
        </div>
        <fieldset>
          <legend>Events</legend>
          {EVENT_KINDS.map((ev) => (
            <label key={ev} class="checkbox">
              <input
                type="checkbox"
                checked={events.includes(ev)}
                onChange={(e) => setEvents(e.currentTarget.checked ? [...events, ev] : events.filter((x) => x !== ev))}
              />
              {ev}
            </label>
          ))}
          {fieldError('/config/events') ? <p class="field-error">{fieldError('/config/events')}</p> : null}
        </fieldset>
        <div class="actions">
          <button type="submit">Save webhook</button>
        </div>
      </form>
      {error ? <ErrorNotice error={error} /> : null}
      {secret ? (
        <Notice tone="success">
          <p>
            Webhook <code>{secret.target}</code> saved. Its signing secret, shown this once:
          </p>
          <p>
            <code class="secret">{secret.value}</code>
          </p>
          <p>Store it in your receiver now; the service keeps only a key derived from it and cannot show it again.</p>
        </Notice>
      ) : null}
    </section>
  );
}
