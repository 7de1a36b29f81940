// @vitest-environment happy-dom
/**
 * The reviewer's panel (extension/components/review-panel.tsx) rendered with Preact: it shows
 * what the sealed record says (reasons, rule, policy version, approvers, claim boundary, link)
 * and the review context opened in the page with real HPKE (shared/hpke.ts) on a device key in
 * IndexedDB; Approve stays disabled while the context loads, when it is refused or does not
 * recompute to the sealed payload_hash, and is enabled for matching or absent context.
 */
import 'fake-indexeddb/auto';
import { h, render } from 'preact';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { payloadHash } from '../../shared/attestation.ts';
import { toBase64Url } from '../../shared/encoding.ts';
import { encodeReviewContext, REVIEW_CONTEXT_FORMAT, sealReviewContext, rawPublicKey } from '../../shared/hpke.ts';
import { ReviewPanel } from '../../extension/components/review-panel.tsx';
import type { ReviewPanelProps } from '../../extension/components/review-panel.tsx';
import type { PendingReview, ReviewContextCiphertext, ReviewRecordView } from '../../extension/utils/messages.ts';
import { idbDeviceStore, loadReviewContext, reviewDevice } from '../../extension/utils/review-device.ts';
import type { DeviceStore, ReviewDevicePorts } from '../../extension/utils/review-device.ts';

const ACTION_KEY = 'ak_panel_0001';
const PROMPT = 'Does Smith v. Jones still support our limitation argument? canary-panel-77a2';
const GATE_REQUEST = { pack: 'law', action_type: 'proposed-action', proposed_action: 'send prompt to gemini', redacted_text: PROMPT, law_context: { jurisdiction: 'US' } };
const SEALED_HASH = payloadHash(GATE_REQUEST);

const ITEM: PendingReview = {
  action_key: ACTION_KEY,
  pack: 'law',
  action_type: 'proposed-action',
  decision: 'needs_review',
  status: 'pending',
  review_route: 'browser:legal-review',
  next_step: 'Pause here.',
  created_at: '2026-11-28T12:00:00Z',
  age_seconds: 30,
  expires_at: null,
  approvals: 1,
  approvals_required: 2,
};

const RECORD: ReviewRecordView = {
  reasons: [{ rule: 'law.citation-check', explanation: 'Citing authority to an external AI tool needs attorney review.' }],
  verified: true,
  payload_hash: SEALED_HASH,
  policy_digest: 'ab'.repeat(32),
  paused_by: 'law.citation-check',
  claim_boundary: 'Evidence of a decision, not legal advice.',
  approved_by: ['Rita Reviewer'],
  record_url: 'http://127.0.0.1:9/console#/records',
};

let root: HTMLElement;
let store: DeviceStore;
let answer: () => Promise<ReviewContextCiphertext>;
let ports: ReviewDevicePorts;

beforeEach(() => {
  root = document.createElement('div');
  document.body.append(root);
  store = idbDeviceStore(new IDBFactory());
  let registered: { id: string; public_key: string } | null = null;
  ports = {
    keys: async () => (registered ? [{ ...registered, label: 'x', status: 'active' as const }] : []),
    register: async (public_key) => (registered = { id: 'rvk_1', public_key }) && { ...registered, label: 'x', status: 'active' as const },
    context: () => answer(),
  };
});

afterEach(() => {
  render(null, root);
  root.remove();
});

/** Seals `gateRequest` to this profile's device as the employee's browser would. */
async function sealedToDevice(gateRequest: Record<string, unknown>, binding = { action_key: ACTION_KEY, payload_hash: SEALED_HASH }): Promise<ReviewContextCiphertext> {
  const device = (await reviewDevice(ports, store))!;
  const plaintext = encodeReviewContext({ format: REVIEW_CONTEXT_FORMAT, gate_request: gateRequest });
  const sealed = await sealReviewContext(await rawPublicKey(device.pair.publicKey), plaintext, binding);
  return { status: 'sealed', action_key: ACTION_KEY, key_id: device.keyId, enc: toBase64Url(sealed.enc), ct: toBase64Url(sealed.ct) };
}

function show(props: Partial<ReviewPanelProps> = {}) {
  const onDecide = vi.fn();
  render(
    h(ReviewPanel, {
      item: ITEM,
      record: RECORD,
      loadContext: (key, hash) => loadReviewContext(key, hash, ports, store),
      mirror: null,
      busy: false,
      error: null,
      result: null,
      onDecide,
      onClose: () => undefined,
      ...props,
    }),
    root,
  );
  return { onDecide };
}

const approve = () => root.querySelector<HTMLButtonElement>('button.ag-approve')!;
const reject = () => root.querySelector<HTMLButtonElement>('button.ag-reject')!;
const contextKind = () => root.querySelector('.ag-context')?.getAttribute('data-context');

describe('the reviewer panel', () => {
  it('shows the record’s reasons, rule, policy version, approvers, claim boundary and link', async () => {
    answer = async () => ({ status: 'not_shared' });
    show();
    expect(root.querySelector('.ag-reasons')!.textContent).toContain('law.citation-check');
    expect(root.querySelector('.ag-paused-by')!.textContent).toBe('law.citation-check');
    expect(root.querySelector('.ag-policy code')!.getAttribute('title')).toBe(RECORD.policy_digest);
    expect(root.querySelector('.ag-approved-by')!.textContent).toBe('Rita Reviewer');
    expect(root.querySelector('.ag-claim-boundary')!.textContent).toBe(RECORD.claim_boundary);
    expect(root.querySelector<HTMLAnchorElement>('a.ag-record-link')!.getAttribute('href')).toBe(RECORD.record_url);
    await vi.waitFor(() => expect(contextKind()).toBe('not_shared'));
  });

  it('keeps Approve disabled while the record and the context load; Reject stays open', async () => {
    answer = () => new Promise(() => undefined);
    show({ record: null });
    expect(contextKind()).toBe('loading');
    expect(approve().disabled).toBe(true);
    expect(reject().disabled).toBe(false);
    render(null, root);
    show();
    // The context is being fetched for the record's payload_hash, and never answers.
    await vi.waitFor(() => expect(contextKind()).toBe('loading'));
    expect(approve().disabled).toBe(true);
  });

  it('opens the context on this device: exactly what was gated, the exact prompt, Approve enabled', async () => {
    answer = () => sealedToDevice(GATE_REQUEST);
    const { onDecide } = show();
    await vi.waitFor(() => expect(contextKind()).toBe('opened'), { timeout: 10_000 });
    expect(root.querySelector('.ag-context-match')!.textContent).toContain('This is exactly what was gated');
    expect(root.querySelector('.ag-context-text')!.textContent).toBe(PROMPT);
    await vi.waitFor(() => expect(approve().disabled).toBe(false));
    approve().click();
    expect(onDecide).toHaveBeenCalledWith(expect.objectContaining({ action_key: ACTION_KEY, decision: 'approved' }));
  });

  it('shows a loud mismatch for context that does not recompute to the sealed payload_hash, and keeps Approve disabled', async () => {
    // Sealed with the right binding, but the body is not the one the gate hashed.
    answer = () => sealedToDevice({ ...GATE_REQUEST, redacted_text: `${PROMPT} (edited)` });
    show();
    await vi.waitFor(() => expect(contextKind()).toBe('opened'), { timeout: 10_000 });
    expect(root.querySelector('.ag-context')!.getAttribute('data-match')).toBe('false');
    expect(root.querySelector('.ag-context-mismatch')!.textContent).toContain('Mismatch: this is not what was gated');
    expect(approve().disabled).toBe(true);
  });

  it('refuses context bound to another action, and keeps Approve disabled', async () => {
    answer = () => sealedToDevice(GATE_REQUEST, { action_key: 'ak_other_0002', payload_hash: SEALED_HASH });
    show();
    await vi.waitFor(() => expect(contextKind()).toBe('refused'), { timeout: 10_000 });
    expect(root.querySelector('[role="alert"]')!.textContent).toContain('Do not approve on this context');
    expect(approve().disabled).toBe(true);
    expect(reject().disabled).toBe(false);
  });

  it('keeps Approve disabled when the context could not be fetched', async () => {
    answer = async () => {
      throw new Error('GET /v1/reviews/…/context answered 500');
    };
    show();
    await vi.waitFor(() => expect(contextKind()).toBe('error'));
    expect(approve().disabled).toBe(true);
  });

  it('enables Approve for context known to be absent: not shared or expired', async () => {
    for (const status of ['not_shared', 'expired'] as const) {
      answer = async () => ({ status });
      show();
      await vi.waitFor(() => expect(contextKind()).toBe(status));
      await vi.waitFor(() => expect(approve().disabled).toBe(false));
      render(null, root);
    }
  });
});
