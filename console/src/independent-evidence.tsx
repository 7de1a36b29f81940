/**
 * A record's independent evidence as badges (shared/independent-evidence.ts): "Independently
 * timestamped by <TSA>, <time>" when an RFC 3161 token over its epoch's checkpoint verifies in
 * this browser, "Witnessed by <n> witness(es): <names>" when cosignatures verify under the
 * witness keys the service publishes. What could not be checked is labelled as such; nothing
 * is shown for an epoch with neither.
 */
import type { IndependentEvidence } from '../../shared/independent-evidence.ts';
import { when } from './format.ts';
import { Badge } from './ui/badge.tsx';

export function IndependentBadges({ evidence }: { evidence: IndependentEvidence | null }) {
  if (evidence === null) return null;
  if (evidence.proofFailed.length > 0) {
    return (
      <Badge tone="bad" title={evidence.proofFailed.join(', ')}>
        inclusion proof refused
      </Badge>
    );
  }
  const t = evidence.timestamp;
  const w = evidence.witnesses;
  return (
    <span class="independent">
      {t?.state === 'verified' ? (
        <Badge tone="ok" title="RFC 3161 token checked in this browser against the TSA roots the service publishes">
          Independently timestamped by {t.by}, {when(t.genTime)}
        </Badge>
      ) : t?.state === 'present' ? (
        <Badge tone="neutral" title={`${t.by}, ${t.genTime}: no TSA roots to check it against here`}>
          timestamp token present, verify with svc-verify
        </Badge>
      ) : t?.state === 'refused' ? (
        <Badge tone="bad" title={t.detail}>
          timestamp does not check
        </Badge>
      ) : t?.state === 'awaiting' ? (
        <Badge tone="wait">awaiting timestamp</Badge>
      ) : null}{' '}
      {w?.state === 'verified' ? (
        <Badge tone="ok" title="c2sp.org/tlog-cosignature lines checked in this browser against the witness keys the service publishes">
          Witnessed by {w.names.length} {w.names.length === 1 ? 'witness' : 'witnesses'}: {w.names.join(', ')}
        </Badge>
      ) : w?.state === 'unchecked' ? (
        <Badge tone="neutral" title={`the signed note names ${w.names.join(', ')}`}>
          cosigned by {w.names.join(', ')} (keys not configured in this browser)
        </Badge>
      ) : w?.state === 'refused' ? (
        <Badge tone="bad" title={w.detail}>
          cosignature does not check
        </Badge>
      ) : null}
    </span>
  );
}
