/** The tenant's pending reviews (GET /active-manifest) for reviewers. Presentational. */
import type { PendingReview } from '../utils/messages.ts';
import { formatAge } from './gate-dialog.tsx';

export function PendingList({ items, onOpen }: { items: PendingReview[]; onOpen: (item: PendingReview) => void }) {
  if (items.length === 0) return <p class="ag-empty">Nothing waiting for review.</p>;
  return (
    <ul class="ag-pending">
      {items.map((item) => (
        <li key={item.action_key} class="ag-pending-item" data-action-key={item.action_key}>
          <div class="ag-row">
            <strong>{item.action_type}</strong>
            <span>{item.pack}</span>
            <span class="ag-age">{formatAge(item.age_seconds * 1000)}</span>
            {item.status === 'escalated' && <span class="ag-escalated">escalated</span>}
            {item.approvals_required > 1 && (
              <span class="ag-approvals">
                {item.approvals} of {item.approvals_required} approvals
              </span>
            )}
          </div>
          <div class="ag-row">
            <span class="ag-route">{item.review_route ?? 'no route'}</span>
            <button type="button" class="ag-open-review" onClick={() => onOpen(item)}>
              Review
            </button>
          </div>
          <code class="ag-key">{item.action_key}</code>
        </li>
      ))}
    </ul>
  );
}
