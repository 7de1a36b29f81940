/**
 * One paused action's review page, #/reviews/<action_key>: the link every route dispatch
 * carries (review_page_url), so a reviewer told in chat or a workflow task opens the action
 * here, where its encrypted review context is opened on their own device (../review-context.tsx)
 * and nowhere else. The fragment is never sent to a server and survives signing in, so the link
 * works from a signed-out browser.
 *
 * While the review is open: the decide form with the context opened, beside the facts the
 * reviewer decides on (./review-facts.tsx). Once decided or expired: what happened, and its
 * receipt verified in this browser, with no form. The record is read again every few seconds
 * while the page is visible, so a decision taken elsewhere shows without a refresh.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, seg } from '../api.ts';
import { verifyReceipt } from '../evidence.ts';
import type { Verification } from '../evidence.ts';
import { duration, shortKey, when } from '../format.ts';
import type { Me } from '../session.ts';
import { Badge, decisionTone } from '../ui/badge.tsx';
import { ErrorNotice, NeedsCapability, Notice } from '../ui/notice.tsx';
import { usePolled } from '../ui/poll.ts';
import { ReviewFacts, approvalsOf, loadReviewRecord, recordHref } from './review-facts.tsx';
import type { ReviewRecord } from './review-facts.tsx';
import { DecideForm, OutcomeNotice, isMine } from './reviews.tsx';
import type { Outcome } from './reviews.tsx';

/** How often the record is read again while the page is visible (as the board). */
const POLL_MS = 4000;
const OPEN = new Set(['pending', 'escalated']);

export default function ReviewItem({ me, id }: { me: Me; id: string }) {
  const record = usePolled(() => loadReviewRecord(id), [id], POLL_MS);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [sealCheck, setSealCheck] = useState<Verification | null>(null);
  const data = record.data;
  useEffect(() => {
    if (data) void verifyReceipt(data.verify_request).then(setSealCheck);
  }, [data?.action_key]);

  if (record.error instanceof ApiError && record.error.status === 404 && !data) {
    return (
      <div>
        <Notice tone="warning">
          No paused action <code>{shortKey(id)}</code> for this tenant: check the link, or whether you are signed in to the right tenant.
        </Notice>
        <p>
          <a href="#/reviews">Back to the review board</a>
        </p>
      </div>
    );
  }
  if (!data) return record.error ? <ErrorNotice error={record.error} /> : <p class="loading">Loading…</p>;
  const review = data.review;
  const canDecide = me.capabilities.includes('reviews:decide');
  const mine = approvalsOf(data).find((a) => isMine(a, me));
  const open = review !== undefined && OPEN.has(review.status);
  return (
    <div>
      <p>
        <a href="#/reviews">Back to the review board</a>
      </p>
      <section class="card review-head" aria-label="The paused action">
        <h2>
          {data.action_type ?? data.kind} <code title={data.action_key}>{shortKey(data.action_key)}</code>
        </h2>
        <p>
          {review ? <Badge tone={OPEN.has(review.status) ? 'wait' : decisionTone(review.status)}>{review.status}</Badge> : null} {data.pack} · route{' '}
          {data.review_route ?? '—'} · paused {when(data.recorded_at)}
          {open && review.expires_at ? ` · expires ${when(review.expires_at)}` : ''}
          {review && review.escalation_level > 0 ? ` · escalation level ${review.escalation_level}` : ''}
          {' · '}
          {sealCheck === null ? (
            <Badge tone="neutral">checking the seal…</Badge>
          ) : sealCheck.verified ? (
            <Badge tone="ok">sealed record verified in this browser</Badge>
          ) : (
            <Badge tone="bad" title={sealCheck.failed.join(', ')}>
              seal not verified
            </Badge>
          )}
        </p>
      </section>
      {outcome ? <OutcomeNotice outcome={outcome} /> : null}
      <div class="review-layout">
        <div>
          {review === undefined ? (
            <Notice tone="warning">This record did not pause for a review ({data.decision ?? data.kind}): there is nothing to decide.</Notice>
          ) : !open ? (
            <Ended record={data} />
          ) : !canDecide ? (
            <NeedsCapability capability="reviews:decide" what="approve, reject or escalate" />
          ) : mine ? (
            <Notice>
              You approved this{mine.at ? ` on ${when(mine.at)}` : ''}; the rule needs another person’s approval ({review.approvals} of {review.approvals_required} so far).
            </Notice>
          ) : (
            <DecideForm
              key={data.action_key}
              item={{ action_key: data.action_key, pack: data.pack, action_type: data.action_type ?? data.kind }}
              me={me}
              onDone={(o) => {
                setOutcome(o);
                record.reload();
              }}
            />
          )}
        </div>
        <ReviewFacts record={data} me={me} />
      </div>
    </div>
  );
}

/** A review that is over: how it ended, and the receipt that says so, verified here. */
function Ended({ record }: { record: ReviewRecord }) {
  const review = record.review!;
  const receiptKey = review.receipt_action_key;
  const [check, setCheck] = useState<Verification | { error: unknown } | null>(null);
  useEffect(() => {
    if (!receiptKey) return;
    setCheck(null);
    api<{ verify_request: unknown }>(`/v1/records/${seg(receiptKey)}`)
      .then((r) => verifyReceipt(r.verify_request))
      .then(setCheck, (error: unknown) => setCheck({ error }));
  }, [receiptKey]);
  const what =
    review.status === 'expired'
      ? `Expired ${when(review.decided_at ?? review.expires_at)}: nobody decided within the review window${review.expires_at && record.recorded_at ? ` (${duration((Date.parse(review.expires_at) - Date.parse(record.recorded_at)) / 1000)})` : ''}, and its review context was erased with it.`
      : `Already decided: ${review.status}${review.decided_at ? ` on ${when(review.decided_at)}` : ''}. The review context was erased when the decision was sealed.`;
  return (
    <section class="review-ended" aria-label="How the review ended">
      <Notice tone={review.status === 'approved' ? 'success' : 'info'}>{what}</Notice>
      {receiptKey ? (
        <p>
          Receipt{' '}
          <a href={recordHref(receiptKey)}>
            <code title={receiptKey}>{shortKey(receiptKey)}</code>
          </a>
          {': '}
          {check === null ? (
            <Badge tone="neutral">checking…</Badge>
          ) : 'error' in check ? (
            <ErrorNotice error={check.error} />
          ) : check.verified ? (
            <Badge tone="ok">verified in this browser{check.devKey ? ' (sandbox dev key)' : ''}</Badge>
          ) : (
            <Badge tone="bad" title={check.failed.join(', ')}>
              not verified
            </Badge>
          )}
        </p>
      ) : (
        <p class="muted">No receipt is sealed yet for this ending; the service seals it on its next expiry sweep.</p>
      )}
    </section>
  );
}
