/**
 * Exports: the OSCAL assessment results, the DCAT-US data catalog and the AI acquisition read
 * model as downloads, validation runs against their pinned schemas, and the validation report
 * with its blocking gaps. Each document says it is for owner review, not an approval.
 */
import { useState } from 'preact/hooks';
import { api, apiResponse } from '../api.ts';
import { when } from '../format.ts';
import { Badge } from '../ui/badge.tsx';
import { saveResponse } from '../ui/download.ts';
import { useLoad } from '../ui/load.ts';
import { ErrorNotice, NeedsCapability, Notice } from '../ui/notice.tsx';
import { Columns, TableWrap } from '../ui/table.tsx';
import type { PageProps } from './types.ts';

const DOCUMENTS = [
  { kind: 'oscal', path: '/tenant/exports/oscal', title: 'OSCAL assessment results', file: 'oscal-assessment-results.json' },
  { kind: 'data-catalog', path: '/tenant/exports/data-catalog', title: 'Data catalog (DCAT-US 1.1)', file: 'data-catalog.json' },
  { kind: 'ai-acquisition', path: '/tenant/exports/ai-acquisition', title: 'AI acquisition read model', file: 'ai-acquisition.json' },
] as const;

interface Gap {
  code: string;
  export_kind: string;
  blocking: boolean;
  detail: string;
}

interface Report {
  blocking_gaps: Gap[];
  other_gaps: Gap[];
}

interface Run {
  run_key: string;
  export_kind: string;
  schema_profile_key: string;
  validation_status: 'passed' | 'failed';
  error_count: number;
  created_at: string;
}

export default function Exports({ me }: PageProps) {
  const report = useLoad(() => api<Report>('/tenant/exports/validation-report'));
  const runs = useLoad(() => api<{ runs: Run[] }>('/tenant/exports/validation-runs'));
  const [error, setError] = useState<unknown>(undefined);
  const [message, setMessage] = useState<string | null>(null);
  if (!me.capabilities.includes('exports:read')) return <NeedsCapability capability="exports:read" what="download exports or run validations" />;

  const download = async (d: (typeof DOCUMENTS)[number]) => {
    setError(undefined);
    try {
      await saveResponse(await apiResponse(d.path), d.file);
    } catch (e) {
      setError(e);
    }
  };
  const validate = async (kind: string) => {
    setError(undefined);
    setMessage(null);
    try {
      const res = await api<{ run: Run }>('/tenant/exports/validation-runs', { json: { export_kind: kind } });
      setMessage(`${kind}: ${res.run.validation_status}, ${res.run.error_count} errors against ${res.run.schema_profile_key}.`);
      runs.reload();
      report.reload();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <div>
      <Notice>Exports are read models for the owner’s review: they are not an authorization decision or an official approval.</Notice>
      <section aria-labelledby="docs-h" class="card">
        <h2 id="docs-h">Documents</h2>
        <ul class="documents">
          {DOCUMENTS.map((d) => (
            <li key={d.kind}>
              <span class="strong">{d.title}</span>
              <button type="button" class="secondary" onClick={() => download(d)}>
                Download<span class="visually-hidden"> {d.title}</span>
              </button>
              <button type="button" class="secondary" onClick={() => validate(d.kind)}>
                Validate<span class="visually-hidden"> {d.title}</span>
              </button>
            </li>
          ))}
        </ul>
        {message ? <Notice tone="success">{message}</Notice> : null}
        {error ? <ErrorNotice error={error} /> : null}
      </section>
      <section aria-labelledby="report-h" class="card">
        <h2 id="report-h">Validation report</h2>
        {report.error ? <ErrorNotice error={report.error} /> : null}
        {report.data ? (
          <>
            <h3>Blocking gaps ({report.data.blocking_gaps.length})</h3>
            {report.data.blocking_gaps.length === 0 ? <p>None: every export can go to an auditor.</p> : <GapList gaps={report.data.blocking_gaps} />}
            <h3>Other gaps ({report.data.other_gaps.length})</h3>
            {report.data.other_gaps.length === 0 ? <p>None.</p> : <GapList gaps={report.data.other_gaps} />}
          </>
        ) : null}
      </section>
      <section aria-labelledby="runs-h" class="card">
        <h2 id="runs-h">Validation runs</h2>
        {runs.error ? <ErrorNotice error={runs.error} /> : null}
        {runs.data && runs.data.runs.length === 0 ? <p>No runs yet: validate a document above.</p> : null}
        {runs.data && runs.data.runs.length > 0 ? (
          <TableWrap label="Validation runs">
            <table>
              <Columns names={['When', 'Export', 'Schema', 'Result', 'Errors']} />
              <tbody>
                {runs.data.runs.map((r) => (
                  <tr key={r.run_key}>
                    <td>{when(r.created_at)}</td>
                    <td>{r.export_kind}</td>
                    <td>
                      <code>{r.schema_profile_key}</code>
                    </td>
                    <td>
                      <Badge tone={r.validation_status === 'passed' ? 'ok' : 'bad'}>{r.validation_status}</Badge>
                    </td>
                    <td>{r.error_count}</td>
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

function GapList({ gaps }: { gaps: Gap[] }) {
  return (
    <ul class="gaps">
      {gaps.map((g) => (
        <li key={`${g.export_kind}:${g.code}`}>
          <Badge tone={g.blocking ? 'bad' : 'wait'}>{g.export_kind}</Badge> <code>{g.code}</code>: {g.detail}
        </li>
      ))}
    </ul>
  );
}
