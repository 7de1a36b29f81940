/** The console's pages in navigation order; each is reached at #/<id>. */
import Audit from './audit.tsx';
import Exports from './exports.tsx';
import Integrations from './integrations.tsx';
import Overview from './overview.tsx';
import People from './people.tsx';
import Policy from './policy.tsx';
import Records, { RecordDetail } from './records.tsx';
import ReviewItem from './review-item.tsx';
import Reviews from './reviews.tsx';
import type { Me } from '../session.ts';
import type { PageEntry } from './types.ts';

export const PAGES: PageEntry[] = [
  { id: 'overview', title: 'Overview', lead: 'Usage, decisions over time, reviews and readiness.', component: Overview },
  { id: 'reviews', title: 'Review board', lead: 'Paused actions waiting for a person, longest waiting first; it follows the service as items arrive and are decided.', capability: 'reviews:decide', component: Reviews },
  { id: 'records', title: 'Records', lead: 'Sealed records, each verified in this browser.', capability: 'exports:read', component: Records },
  { id: 'policy', title: 'Policy', lead: 'Each pack’s tenant policy: its versions, a change previewed before it is saved.', capability: 'policy:manage', component: Policy },
  { id: 'integrations', title: 'Integrations', lead: 'Routes and webhooks, their readiness and deliveries.', capability: 'integrations:manage', component: Integrations },
  { id: 'exports', title: 'Exports', lead: 'Documents for auditors and procurement, and their validation.', capability: 'exports:read', component: Exports },
  { id: 'people', title: 'People and keys', lead: 'Who may do what: people, service accounts and their API keys. Every change is sealed as an admin receipt.', capability: 'people:manage', component: People },
  { id: 'audit', title: 'Audit', lead: 'Admin receipts: every change to people, service accounts and keys, newest first, each verified in this browser.', capability: 'people:manage', component: Audit },
];

/** A page for one item of a list page, reached at #/<list page id>/<item id> (a shareable deep link). */
export interface ItemPageEntry {
  title: string;
  lead: string;
  component: (props: { me: Me; id: string }) => preact.JSX.Element;
}

export const ITEM_PAGES: Record<string, ItemPageEntry> = {
  reviews: { title: 'Paused action', lead: 'One paused action: what was gated, opened on this device; why it paused; who has approved.', component: ReviewItem },
  records: { title: 'Record', lead: 'One sealed record, verified in this browser.', component: RecordDetail },
};
