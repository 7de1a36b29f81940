/**
 * Audit: the admin receipts of GET /account/audit, newest first: who changed which person,
 * service account or key, what changed, and when. Each receipt is verified in this browser
 * against the pinned service keys (console/src/evidence.ts), so "verified" is this browser's
 * check of the signature, never the server's say-so. The capability lists themselves are not
 * in a receipt, only their digests: a change of capabilities shows as a change of digest.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, query } from '../api.ts';
import { verifyReceipt } from '../evidence.ts';
import type { Verification } from '../evidence.ts';
import { when } from '../format.ts';
import { Badge } from '../ui/badge.tsx';
import { Name, nameOf, useDirectory } from '../ui/names.tsx';
import type { Directory } from '../ui/names.tsx';
import { ErrorNotice, NeedsCapability } from '../ui/notice.tsx';
import { Columns, TableWrap } from '../ui/table.tsx';
import type { PageProps } from './types.ts';

interface AdminReceipt {
  action_key: string;
  action: string;
  actor_id: string;
  subject_id: string;
  created_at: string;
  facts: {
    actor?: { id: string; display_name?: string };
    subject?: { id: string; kind: string };
    capabilities_before_sha256?: string | null;
    capabilities_after_sha256?: string | null;
    related?: Record<string, string>;
  };
  verify_request: unknown;
}

interface AuditPage {
  receipts: AdminReceipt[];
  next_before: string | null;
}

const ACTIONS: Record<string, string> = {
  'person.added': 'Added a person',
  'person.changed': 'Changed a person',
  'person.deactivated': 'Deactivated a person',
  'person.reactivated': 'Reactivated a person',
  'service_account.created': 'Added a service account',
  'service_account.changed': 'Changed a service account',
  'service_account.deactivated': 'Deactivated a service account',
  'service_account.reactivated': 'Reactivated a service account',
  'key.created': 'Created a key',
  'key.rotated': 'Rotated a key',
  'key.revoked': 'Revoked a key',
};

const PAGE = 50;

export default function Audit({ me }: PageProps) {
  if (!me.capabilities.includes('people:manage')) return <NeedsCapability capability="people:manage" what="read the admin receipts" />;
  return <AuditList me={me} />;
}

function AuditList({ me }: PageProps) {
  const dir = useDirectory(me);
  const [receipts, setReceipts] = useState<AdminReceipt[]>([]);
  const [before, setBefore] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(false);
  const [loaded, setLoaded] = useState(false);
  const load = async (more: boolean) => {
    setLoading(true);
    setError(undefined);
    try {
      const page = await api<AuditPage>(`/account/audit${query({ limit: PAGE, before: more ? (before ?? undefined) : undefined })}`);
      setReceipts((list) => (more ? [...list, ...page.receipts] : page.receipts));
      setBefore(page.next_before);
      setLoaded(true);
    } catch (err) {
      setError(err);
    } finally {
      setLoading(false);
    }
  };
  useEffect(() => {
    void load(false);
  }, []);
  return (
    <div>
      <div class="toolbar">
        <button type="button" class="secondary" onClick={() => load(false)} disabled={loading}>
          Refresh
        </button>
        <span class="muted" aria-live="polite">
          {loading ? 'Loading…' : loaded ? `${receipts.length} receipts shown${before ? ', older ones on request' : ''}` : ''}
        </span>
      </div>
      {error ? <ErrorNotice error={error} /> : null}
      {loaded && receipts.length === 0 ? <p>No changes to people, service accounts or keys yet.</p> : null}
      {receipts.length > 0 ? (
        <TableWrap label="Admin receipts">
          <table>
            <caption class="visually-hidden">Admin receipts, newest first</caption>
            <Columns names={['When', 'Who', 'What', 'Subject', 'Change', 'Receipt']} />
            <tbody>
              {receipts.map((r) => (
                <ReceiptRow key={r.action_key} receipt={r} dir={dir} />
              ))}
            </tbody>
          </table>
        </TableWrap>
      ) : null}
      {before ? (
        <button type="button" class="secondary" onClick={() => load(true)} disabled={loading}>
          Show older receipts
        </button>
      ) : null}
    </div>
  );
}

/** What the receipt commits beyond who and whom, in words. */
function change(r: AdminReceipt, dir: Directory | undefined): string {
  const parts: string[] = [];
  const before = r.facts.capabilities_before_sha256 ?? null;
  const after = r.facts.capabilities_after_sha256 ?? null;
  if (r.action.endsWith('.changed')) parts.push(before === after ? 'name or role; capabilities unchanged' : 'capabilities changed');
  const related = r.facts.related ?? {};
  if (related.key_id) parts.push(`with the key ${nameOf(related.key_id, dir)}`);
  // A key the directory knows is already named with its owner.
  if (related.principal_id && r.action.startsWith('key.') && !dir?.has(r.subject_id)) parts.push(`of ${nameOf(related.principal_id, dir)}`);
  if (related.new_key_id) parts.push(`replaced by ${nameOf(related.new_key_id, dir)}`);
  if (related.old_key_expires_at) parts.push(`the old key works until ${when(related.old_key_expires_at)}`);
  return parts.join('; ') || '—';
}

function ReceiptRow({ receipt: r, dir }: { receipt: AdminReceipt; dir: Directory | undefined }) {
  const [verification, setVerification] = useState<Verification | null>(null);
  useEffect(() => {
    void verifyReceipt(r.verify_request).then(setVerification);
  }, [r.action_key]);
  const digests = `capabilities before ${r.facts.capabilities_before_sha256 ?? 'none'}, after ${r.facts.capabilities_after_sha256 ?? 'none'} (SHA-256 of the sorted list)`;
  return (
    <tr>
      <td>{when(r.created_at)}</td>
      <td>
        <Name id={r.actor_id} dir={dir} fallback={r.facts.actor?.display_name} />
      </td>
      <td>{ACTIONS[r.action] ?? r.action}</td>
      <td>
        <Name id={r.subject_id} dir={dir} />
      </td>
      <td title={digests}>{change(r, dir)}</td>
      <td>
        {verification === null ? (
          <Badge tone="neutral">checking…</Badge>
        ) : verification.verified ? (
          <Badge tone="ok" title={`${r.action_key}; key ${verification.keyStatus}${verification.devKey ? ', sandbox dev key' : ''}`}>
            verified
          </Badge>
        ) : (
          <Badge tone="bad" title={verification.failed.join(', ')}>
            not verified
          </Badge>
        )}
      </td>
    </tr>
  );
}
