/** The seal's verdict, and its record's independent evidence, as people read them. Presentational. */
import type { IndependentEvidence } from '../../shared/independent-evidence.ts';
import type { Verification } from '../utils/messages.ts';

export function VerificationBadge({ verification, label = 'Seal' }: { verification: Verification | null; label?: string }) {
  if (verification === null) return <span class="ag-badge ag-badge-none">{label}: not checked</span>;
  if (verification.key_alarm) {
    return (
      <span class="ag-badge ag-badge-alarm" data-verified="false" title="A pinned signing key changed">
        {label}: key alarm
      </span>
    );
  }
  if (!verification.verified) {
    return (
      <span class="ag-badge ag-badge-bad" data-verified="false" title={`Failed: ${verification.failed_checks.join(', ')}`}>
        {label}: NOT verified
      </span>
    );
  }
  return (
    <span class="ag-badge ag-badge-ok" data-verified="true" title={`Key status: ${verification.key_status}`}>
      {label}: verified{verification.dev_key ? ' (sandbox key)' : ''}
    </span>
  );
}

/**
 * A record's independent evidence (shared/independent-evidence.ts), checked in the background:
 * "independently timestamped" when an RFC 3161 token over its epoch's checkpoint verifies under
 * the TSA roots the companion publishes, "witnessed" when cosignatures verify under its witness
 * keys; what could not be checked says so. Nothing for an epoch with neither. Presentational.
 */
export function IndependentBadges({ evidence }: { evidence: IndependentEvidence | null | undefined }) {
  if (!evidence) return null;
  if (evidence.proofFailed.length > 0) {
    return (
      <span class="ag-badge ag-badge-bad" data-independent="refused" title={evidence.proofFailed.join(', ')}>
        Inclusion proof: NOT verified
      </span>
    );
  }
  const t = evidence.timestamp;
  const w = evidence.witnesses;
  return (
    <>
      {t?.state === 'verified' && (
        <span class="ag-badge ag-badge-ok" data-independent="timestamped" title={`RFC 3161 token by ${t.by}`}>
          Independently timestamped by {t.by}, {new Date(t.genTime).toLocaleString()}
        </span>
      )}
      {t?.state === 'present' && (
        <span class="ag-badge ag-badge-none" data-independent="timestamp-unchecked" title={`${t.by}, ${t.genTime}: no TSA roots to check it against`}>
          Timestamp token present, verify with svc-verify
        </span>
      )}
      {t?.state === 'refused' && (
        <span class="ag-badge ag-badge-bad" data-independent="timestamp-refused" title={t.detail}>
          Timestamp: NOT verified
        </span>
      )}
      {t?.state === 'awaiting' && (
        <span class="ag-badge ag-badge-none" data-independent="awaiting">
          Awaiting timestamp
        </span>
      )}
      {w?.state === 'verified' && (
        <span class="ag-badge ag-badge-ok" data-independent="witnessed" title="Cosignatures checked against the witness keys the companion publishes">
          Witnessed by {w.names.length} {w.names.length === 1 ? 'witness' : 'witnesses'}: {w.names.join(', ')}
        </span>
      )}
      {w?.state === 'unchecked' && (
        <span class="ag-badge ag-badge-none" data-independent="cosigned-unchecked" title={`The signed note names ${w.names.join(', ')}`}>
          Cosigned by {w.names.join(', ')} (keys not configured in this browser)
        </span>
      )}
      {w?.state === 'refused' && (
        <span class="ag-badge ag-badge-bad" data-independent="witness-refused" title={w.detail}>
          Cosignature: NOT verified
        </span>
      )}
    </>
  );
}
