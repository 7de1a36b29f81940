/**
 * Records: the records export (GET /tenant/exports/records) for a time range, filtered by pack,
 * kind and decision on the service, each record verified in this browser, with its anchoring
 * status (an inclusion proof once its hour's epoch has closed) and its seal bundle to download.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, api, apiResponse, query, seg } from '../api.ts';
import { checkIndependent, verifyReceipt } from '../evidence.ts';
import { IndependentBadges } from '../independent-evidence.tsx';
import type { IndependentEvidence } from '../../../shared/independent-evidence.ts';
import type { Verification } from '../evidence.ts';
import { shortKey, when } from '../format.ts';
import { Badge, decisionTone } from '../ui/badge.tsx';
import { saveResponse } from '../ui/download.ts';
import { Field } from '../ui/field.tsx';
import { useLoad } from '../ui/load.ts';
import { Name, useDirectory } from '../ui/names.tsx';
import type { Directory } from '../ui/names.tsx';
import { ErrorNotice, NeedsCapability } from '../ui/notice.tsx';
import { Columns, TableWrap } from '../ui/table.tsx';
import type { Me } from '../session.ts';
import type { PageProps } from './types.ts';

interface ExportedRecord {
  action_key: string;
  pack: string;
  kind: string;
  decision: string | null;
  recorded_at: string;
  verify_request: unknown;
}

interface RecordsPage {
  records: ExportedRecord[];
  next_cursor: string | null;
}

const SHOWN = 25;
const KINDS = ['gate', 'record', 'review', 'policy'];
const DECISIONS = ['allow', 'needs_review', 'blocked', 'approved', 'rejected', 'escalated'];

/**
 * Who a receipt names as acting, from its signed context: a review's `principal` (or, before
 * receipts named one, its `reviewer`), an admin or policy receipt's `actor`. Gate records and
 * records name nobody.
 */
function actorOf(record: ExportedRecord): { id: string; name: string | null } | null {
  const seal = (record.verify_request as { seal?: { attestation?: { context?: Record<string, unknown> } } } | null)?.seal;
  const ctx = seal?.attestation?.context ?? {};
  const principal = ctx.principal as { principal_id?: string; display_name?: string } | null | undefined;
  if (principal?.principal_id) return { id: principal.principal_id, name: principal.display_name ?? null };
  const actor = ctx.actor as { id?: string; display_name?: string } | string | undefined;
  if (typeof actor === 'string') return { id: actor, name: null };
  if (actor?.id) return { id: actor.id, name: actor.display_name ?? null };
  return typeof ctx.reviewer === 'string' ? { id: ctx.reviewer, name: null } : null;
}

/** A datetime-local value (the browser's zone) as RFC 3339 UTC, or undefined when empty. */
function utc(local: string): string | undefined {
  if (!local) return undefined;
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

export default function Records({ me }: PageProps) {
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [pack, setPack] = useState('');
  const [kind, setKind] = useState('');
  const [decision, setDecision] = useState('');
  const packs = useLoad(() => api<{ packs: { name: string }[] }>('/v1/packs'));
  const dir = useDirectory(me);
  const [records, setRecords] = useState<ExportedRecord[]>([]);
  const [total, setTotal] = useState<number | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(false);
  const [shown, setShown] = useState(SHOWN);
  // Each load re-checks every row's seal and anchoring, which may have changed since.
  const [generation, setGeneration] = useState(0);

  const load = async (more: boolean) => {
    setLoading(true);
    setError(undefined);
    try {
      const filters = { from: utc(from), to: utc(to), pack, kind, decision };
      const res = await apiResponse(`/tenant/exports/records${query({ ...filters, cursor: more ? (cursor ?? undefined) : undefined })}`);
      const page = (await res.json()) as RecordsPage;
      if (!more) setTotal(Number(res.headers.get('x-total-count') ?? page.records.length));
      setRecords((list) => (more ? [...list, ...page.records] : page.records));
      setCursor(page.records.length > 0 ? page.next_cursor : null);
      if (!more) setShown(SHOWN);
      setGeneration((g) => g + 1);
    } catch (err) {
      setError(err);
    } finally {
      setLoading(false);
    }
  };
  const canRead = me.capabilities.includes('exports:read');
  useEffect(() => {
    if (canRead) void load(false);
  }, []);

  // Newest first; the export itself is chronological.
  const newest = useMemo(() => [...records].reverse(), [records]);
  const fieldError = (name: string) => (error instanceof ApiError ? error.fieldError(`/${name}`) : undefined);

  if (!canRead) return <NeedsCapability capability="exports:read" what="read the tenant's records" />;
  return (
    <div>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          void load(false);
        }}
      >
        <Field label="From" hint="Your local time" error={fieldError('from')}>
          {(a11y) => <input {...a11y} type="datetime-local" step={1} value={from} onInput={(e) => setFrom(e.currentTarget.value)} />}
        </Field>
        <Field label="To (exclusive)" error={fieldError('to')}>
          {(a11y) => <input {...a11y} type="datetime-local" step={1} value={to} onInput={(e) => setTo(e.currentTarget.value)} />}
        </Field>
        <Field label="Pack" error={fieldError('pack')}>
          {(a11y) => (
            <select {...a11y} value={pack} onChange={(e) => setPack(e.currentTarget.value)}>
              <option value="">All packs</option>
              {(packs.data?.packs ?? []).map((p) => (
                <option key={p.name}>{p.name}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Kind" error={fieldError('kind')}>
          {(a11y) => (
            <select {...a11y} value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
              <option value="">Any kind</option>
              {KINDS.map((k) => (
                <option key={k}>{k}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Decision" error={fieldError('decision')}>
          {(a11y) => (
            <select {...a11y} value={decision} onChange={(e) => setDecision(e.currentTarget.value)}>
              <option value="">Any decision</option>
              {DECISIONS.map((d) => (
                <option key={d}>{d}</option>
              ))}
            </select>
          )}
        </Field>
        <div class="actions">
          <button type="submit" disabled={loading}>
            Load records
          </button>
        </div>
      </form>
      {error ? <ErrorNotice error={error} /> : null}
      <p class="muted" aria-live="polite">
        {loading
          ? 'Loading…'
          : total === null
            ? ''
            : `${Math.min(shown, newest.length)} shown of ${records.length} loaded; ${total} match.`}
      </p>
      {newest.length > 0 ? (
        <TableWrap label="Records">
          <table>
            <caption class="visually-hidden">Sealed records, newest first</caption>
            <Columns names={['Recorded', 'Record', 'Pack', 'Decision', 'By', 'Seal', 'Anchoring', 'Bundle']} />
            <tbody>
              {newest.slice(0, shown).map((r) => (
                <RecordRow key={r.action_key} record={r} generation={generation} dir={dir} />
              ))}
            </tbody>
          </table>
        </TableWrap>
      ) : null}
      <div class="toolbar">
        {newest.length > shown ? (
          <button type="button" class="secondary" onClick={() => setShown(shown + SHOWN)}>
            Show {Math.min(SHOWN, newest.length - shown)} more
          </button>
        ) : null}
        {cursor ? (
          <button type="button" class="secondary" onClick={() => load(true)} disabled={loading}>
            Load the next page
          </button>
        ) : null}
      </div>
    </div>
  );
}

/**
 * One sealed record by its action key (#/records/<action_key>, the link the review page gives):
 * GET /v1/records/{action_key}, shown as its row of the table above, verified and anchored alike.
 */
export function RecordDetail({ me, id }: { me: Me; id: string }) {
  const dir = useDirectory(me);
  const record = useLoad(() => api<ExportedRecord>(`/v1/records/${seg(id)}`), [id]);
  return (
    <div>
      <p>
        <a href="#/records">All records</a>
      </p>
      {record.error ? <ErrorNotice error={record.error} /> : null}
      {record.data ? (
        <TableWrap label="Record">
          <table>
            <caption class="visually-hidden">The sealed record {record.data.action_key}</caption>
            <Columns names={['Recorded', 'Record', 'Pack', 'Decision', 'By', 'Seal', 'Anchoring', 'Bundle']} />
            <tbody>
              <RecordRow record={record.data} generation={0} dir={dir} independent />
            </tbody>
          </table>
        </TableWrap>
      ) : record.error ? null : (
        <p class="loading">Loading…</p>
      )}
    </div>
  );
}

type Anchoring = { state: 'anchored'; epoch: number } | { state: 'waiting' } | { state: 'error'; detail: string };

/** `independent`: also check the epoch's timestamps and cosignatures (the record detail). */
function RecordRow({ record, generation, dir, independent = false }: { record: ExportedRecord; generation: number; dir: Directory | undefined; independent?: boolean }) {
  const actor = actorOf(record);
  const [verification, setVerification] = useState<Verification | null>(null);
  const [anchoring, setAnchoring] = useState<Anchoring | null>(null);
  const [downloadError, setDownloadError] = useState<unknown>(undefined);
  const [evidence, setEvidence] = useState<IndependentEvidence | null>(null);
  useEffect(() => {
    void verifyReceipt(record.verify_request).then(setVerification);
    api<{ epoch: { epoch_seq: number } }>(`/v1/records/${seg(record.action_key)}/inclusion-proof`).then(
      (p) => {
        setAnchoring({ state: 'anchored', epoch: p.epoch.epoch_seq });
        const attestationHash = (record.verify_request as { seal?: { attestation_hash?: string } } | null)?.seal?.attestation_hash;
        if (independent) void checkIndependent(p, attestationHash).then(setEvidence);
      },
      (e: unknown) =>
        setAnchoring(e instanceof ApiError && e.status === 409 ? { state: 'waiting' } : { state: 'error', detail: e instanceof Error ? e.message : String(e) }),
    );
  }, [record.action_key, generation]);
  const download = async () => {
    setDownloadError(undefined);
    try {
      const res = await apiResponse('/evidence-packets/seal-bundle', { json: record.verify_request, accept: 'application/x-tar' });
      await saveResponse(res, `${record.action_key.replaceAll(':', '_')}.tar`);
    } catch (e) {
      setDownloadError(e);
    }
  };
  return (
    <tr>
      <td>{when(record.recorded_at)}</td>
      <td>
        <code title={record.action_key}>{shortKey(record.action_key)}</code>
        <span class="muted"> {record.kind}</span>
      </td>
      <td>{record.pack}</td>
      <td>{record.decision ? <Badge tone={decisionTone(record.decision)}>{record.decision}</Badge> : '—'}</td>
      <td>
        <Name id={actor?.id} dir={dir} fallback={actor?.name} />
      </td>
      <td>
        {verification === null ? (
          <Badge tone="neutral">checking…</Badge>
        ) : verification.verified ? (
          <Badge tone="ok" title={`key ${verification.keyStatus}${verification.devKey ? ', sandbox dev key' : ''}`}>
            verified
          </Badge>
        ) : (
          <Badge tone="bad" title={verification.failed.join(', ')}>
            not verified
          </Badge>
        )}
      </td>
      <td>
        {anchoring === null ? (
          <Badge tone="neutral">checking…</Badge>
        ) : anchoring.state === 'anchored' ? (
          <>
            <Badge tone="ok">anchored, epoch {anchoring.epoch}</Badge> <IndependentBadges evidence={evidence} />
          </>
        ) : anchoring.state === 'waiting' ? (
          <Badge tone="wait" title="Its hour's epoch has not closed yet">
            waiting for the epoch
          </Badge>
        ) : (
          <Badge tone="bad" title={anchoring.detail}>
            unknown
          </Badge>
        )}
      </td>
      <td>
        <button type="button" class="secondary" onClick={download}>
          Download<span class="visually-hidden"> the seal bundle of {shortKey(record.action_key)}</span>
        </button>
        {downloadError ? <ErrorNotice error={downloadError} /> : null}
      </td>
    </tr>
  );
}
