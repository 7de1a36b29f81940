/**
 * Recent decisions with their verification badge, and for records whose epoch has closed the
 * epoch's independent evidence (timestamps, cosignatures), which the background checks.
 */
import { useEffect, useState } from 'preact/hooks';
import type { IndependentEvidence } from '../../shared/independent-evidence.ts';
import type { DecisionEntry } from '../utils/db.ts';
import { sendMessage } from '../utils/messages.ts';
import { IndependentBadges, VerificationBadge } from './verification-badge.tsx';

/** Independent evidence per action key (null: epoch still open); the background's by default. */
export type IndependentLoader = (actionKeys: string[]) => Promise<Record<string, IndependentEvidence | null>>;

const fromBackground: IndependentLoader = (action_keys) => sendMessage('decisions.independent', { action_keys });

const LABEL: Record<DecisionEntry['decision'], string> = { allow: 'allowed', needs_review: 'needs review', blocked: 'blocked' };

export function DecisionList({ entries, loadIndependent = fromBackground }: { entries: DecisionEntry[]; loadIndependent?: IndependentLoader }) {
  const [independent, setIndependent] = useState<Record<string, IndependentEvidence | null>>({});
  // Only verified seals (an unverified one already says all there is to say), and the newest
  // ten: the background answers at most INDEPENDENT_MAX_KEYS (background/evidence.ts) at once.
  const keys = entries
    .filter((e) => e.verified)
    .slice(0, 10)
    .map((e) => e.action_key);
  useEffect(() => {
    if (keys.length === 0) return;
    let current = true;
    // Best effort: an unreachable companion leaves the seal badges as they are.
    loadIndependent(keys).then(
      (found) => current && setIndependent(found),
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, [keys.join(' ')]);
  if (entries.length === 0) return <p class="ag-empty">No decisions yet.</p>;
  return (
    <ul class="ag-decisions">
      {entries.map((e) => (
        <li key={e.action_key} class={`ag-decision ag-decision-${e.decision}`} data-action-key={e.action_key}>
          <div class="ag-row">
            <strong class="ag-decision-label">{LABEL[e.decision]}</strong>
            <span class="ag-site">{e.site}</span>
            <time dateTime={e.time}>{new Date(e.time).toLocaleTimeString()}</time>
          </div>
          <div class="ag-row">
            <VerificationBadge
              verification={{ verified: e.verified, key_status: e.key_status, dev_key: e.dev_key, failed_checks: e.failed_checks, key_alarm: false }}
            />
            <IndependentBadges evidence={independent[e.action_key]} />
            {e.review_status && (
              <span class="ag-review-status">
                review: {e.review_status}
                {e.review_verified === true ? ' (receipt verified)' : e.review_verified === false ? ' (receipt NOT verified)' : ''}
              </span>
            )}
            <ReleaseState entry={e} />
          </div>
          <code class="ag-key">{e.action_key}</code>
        </li>
      ))}
    </ul>
  );
}

/** Sent only with the page's evidence (release_outcome); a release without its report yet says so. */
function ReleaseState({ entry }: { entry: DecisionEntry }) {
  const outcome = entry.release_outcome;
  if (outcome?.sent) return <span class="ag-sent" data-evidence={outcome.evidence ?? ''}>sent</span>;
  if (outcome) return <span class="ag-not-sent">not sent: the site did not take it</span>;
  return entry.released_attempt !== null ? <span class="ag-released">released</span> : null;
}
