/** The seal's verdict as people read it. Presentational. */
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
