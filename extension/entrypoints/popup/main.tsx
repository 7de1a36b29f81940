/**
 * The popup's container: fetches state through the message table and renders PopupView.
 * For reviewers it also lists pending reviews and posts decisions.
 */
import { render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { PopupView } from '../../components/popup-view.tsx';
import type { ReviewerView } from '../../components/popup-view.tsx';
import { browser } from '../../utils/browser.ts';
import { downloadJson } from '../../utils/download.ts';
import { sendMessage } from '../../utils/messages.ts';
import type { PendingReview, PopupState, ReviewDecisionRequest, ReviewRecordView } from '../../utils/messages.ts';
import { loadReviewContext } from '../../utils/review-device.ts';
import '../../components/pages.css';

/** The pending list refreshes itself while the popup is open. */
const REFRESH_MS = 2000;

function Popup() {
  const [state, setState] = useState<PopupState | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [reviewer, setReviewer] = useState<ReviewerView | null>(null);

  const refresh = useCallback(async () => {
    try {
      const s = await sendMessage('popup.state', {});
      setState(s);
      setError(null);
      if (s.role !== 'reviewer') return setReviewer(null);
      try {
        const pending = await sendMessage('reviews.pending', {});
        setReviewer((r) => ({ ...(r ?? emptyReviewer()), pending, error: null }));
      } catch (e) {
        setReviewer((r) => ({ ...(r ?? emptyReviewer()), error: messageOf(e) }));
      }
    } catch (e) {
      setError(messageOf(e));
    }
  }, []);

  useEffect(() => {
    void refresh();
    const timer = setInterval(() => void refresh(), REFRESH_MS);
    return () => clearInterval(timer);
  }, [refresh]);

  const openReview = async (item: PendingReview) => {
    setReviewer((r) => r && { ...r, open: item, record: null, result: null, decideError: null, busy: false });
    void sendMessage('reviews.record', { action_key: item.action_key })
      .then((record) => setReviewer((r) => (r?.open?.action_key === item.action_key ? { ...r, record } : r)))
      .catch(() => setReviewer((r) => (r?.open?.action_key === item.action_key ? { ...r, record: unreadRecord() } : r)));
    if (item.pack === 'law') {
      const mirror = await sendMessage('reviews.mirror', {}).catch(() => null);
      setReviewer((r) => r && { ...r, mirror });
    }
  };

  const decide = async (req: ReviewDecisionRequest) => {
    setReviewer((r) => r && { ...r, busy: true, decideError: null });
    try {
      const result = await sendMessage('reviews.decide', req);
      setReviewer((r) => r && { ...r, busy: false, result });
      void refresh();
    } catch (e) {
      setReviewer((r) => r && { ...r, busy: false, decideError: messageOf(e) });
    }
  };

  return (
    <PopupView
      state={state}
      error={error}
      reviewer={reviewer}
      onRefresh={() => void refresh()}
      onOpenOptions={() => void browser.runtime.openOptionsPage()}
      onExport={async () => downloadJson(`action-gate-log-${Date.now()}.json`, await sendMessage('log.export', {}))}
      onOpenReview={(item) => void openReview(item)}
      onCloseReview={() => setReviewer((r) => r && { ...r, open: null, result: null })}
      onDecide={(req) => void decide(req)}
      loadContext={(actionKey, sealedPayloadHash) => loadReviewContext(actionKey, sealedPayloadHash)}
    />
  );
}

function emptyReviewer(): ReviewerView {
  return { pending: [], error: null, open: null, record: null, mirror: null, busy: false, decideError: null, result: null };
}

/** A record that could not be read: no reasons, and no verified payload_hash to open context against. */
function unreadRecord(): ReviewRecordView {
  return { reasons: [], verified: false, payload_hash: null, policy_digest: null, paused_by: null, claim_boundary: null, approved_by: [], record_url: '' };
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

render(<Popup />, document.getElementById('app')!);
