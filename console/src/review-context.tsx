/**
 * The reviewer's side of review context, in the console: this browser's device key, and the
 * paused action's context opened here and checked against the sealed record.
 *
 * - The device key is an X25519 pair made by WebCrypto with a non-extractable private key
 *   (extractable = false: no script, ours included, can read its bytes), kept in IndexedDB as the
 *   CryptoKey object itself (structured clone keeps it non-extractable), one per browser
 *   profile. Only the raw public key is registered (POST /account/me/review-keys).
 * - The ciphertext sealed to this device (GET /v1/reviews/{action_key}/context) is opened with
 *   HPKE (RFC 9180, shared/hpke.ts), bound to the action_key and the payload_hash of the record
 *   whose seal this browser verified (./evidence.ts). payload_hash is then recomputed from the
 *   plaintext: a match says "this is exactly what was gated"; anything else is a loud mismatch,
 *   and `onCheck(false)` tells the page to keep Decide disabled.
 * - The plaintext lives only in this component's state, never in storage.
 *
 * Mount it on the review page, beside each item's Decide controls:
 *   <ReviewContext actionKey={item.action_key} onCheck={(ok) => setContextOk(item.action_key, ok)} />
 */
import { useEffect, useState } from 'preact/hooks';
import { toBase64Url } from '../../shared/encoding.ts';
import { rawPublicKey, readReviewContext } from '../../shared/hpke.ts';
import type { ContextCheck, ReviewContextDocument } from '../../shared/hpke.ts';
import { api, ApiError, seg, query } from './api.ts';
import { verifyReceipt } from './evidence.ts';
import { ErrorNotice, Notice } from './ui/notice.tsx';

const DB_NAME = 'ag-console-review-keys';
const STORE = 'device';
const RECORD = 'current';

/** This browser's review device: its key pair and the id the service registered it under. */
export interface ReviewDevice {
  keyId: string;
  pair: CryptoKeyPair;
}

function openDb(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function idb<T>(mode: IDBTransactionMode, fn: (store: IDBObjectStore) => IDBRequest): Promise<T> {
  const db = await openDb();
  try {
    return await new Promise<T>((resolve, reject) => {
      const req = fn(db.transaction(STORE, mode).objectStore(STORE));
      req.onsuccess = () => resolve(req.result as T);
      req.onerror = () => reject(req.error);
    });
  } finally {
    db.close();
  }
}

interface ReviewKeyView {
  id: string;
  public_key: string;
  status: 'active' | 'revoked';
}

/**
 * This browser's device, registered for the signed-in person: the stored one while the service
 * still lists it as active, otherwise a new pair made and registered now.
 */
export async function reviewDevice(label = deviceLabel()): Promise<ReviewDevice> {
  const stored = await idb<ReviewDevice | undefined>('readonly', (s) => s.get(RECORD));
  if (stored) {
    const { review_keys } = await api<{ review_keys: ReviewKeyView[] }>('/account/me/review-keys');
    const publicKey = toBase64Url(await rawPublicKey(stored.pair.publicKey));
    if (review_keys.some((k) => k.id === stored.keyId && k.status === 'active' && k.public_key === publicKey)) return stored;
  }
  const pair = (await crypto.subtle.generateKey({ name: 'X25519' }, false, ['deriveBits'])) as CryptoKeyPair;
  const { review_key } = await api<{ review_key: ReviewKeyView }>('/account/me/review-keys', {
    json: { public_key: toBase64Url(await rawPublicKey(pair.publicKey)), label },
  });
  const device = { keyId: review_key.id, pair };
  await idb('readwrite', (s) => s.put(device, RECORD));
  return device;
}

/** The key id this browser's stored device was registered under, if it holds one; registers nothing. */
export async function storedDeviceKeyId(): Promise<string | undefined> {
  return (await idb<ReviewDevice | undefined>('readonly', (s) => s.get(RECORD)))?.keyId;
}

/**
 * Drops this browser's stored device once its key is revoked: nothing can be sealed to it any
 * more and what was is erased, so the private key has no use left. The next reviewDevice()
 * registers a new pair.
 */
export async function forgetReviewDevice(keyId: string): Promise<void> {
  const db = await openDb();
  try {
    // Read and delete in one transaction, so a device registered meanwhile is never the one dropped.
    await new Promise<void>((resolve, reject) => {
      const tx = db.transaction(STORE, 'readwrite');
      const store = tx.objectStore(STORE);
      const get = store.get(RECORD);
      get.onsuccess = () => {
        if ((get.result as ReviewDevice | undefined)?.keyId === keyId) store.delete(RECORD);
      };
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error);
    });
  } finally {
    db.close();
  }
}

export function deviceLabel(): string {
  const ua = navigator.userAgent;
  const browser = /Firefox\//.test(ua) ? 'Firefox' : /Edg\//.test(ua) ? 'Edge' : /Chrome\//.test(ua) ? 'Chrome' : 'Browser';
  return `Console, ${browser}`.slice(0, 64);
}

type State =
  | { kind: 'loading' }
  | { kind: 'not_shared' }
  | { kind: 'expired' }
  | { kind: 'refused'; why: string }
  | { kind: 'error'; error: unknown }
  | { kind: 'opened'; doc: ReviewContextDocument; check: ContextCheck };

interface Ciphertext {
  action_key: string;
  payload_hash: string;
  enc: string;
  ct: string;
}

/** Fetches, opens and checks the context of one paused action for this device. */
export async function loadReviewContext(actionKey: string, device: ReviewDevice): Promise<State> {
  // The payload_hash to bind and compare with is the one the record's verified seal commits.
  const record = await api<{ verify_request: { payload_hash: string } }>(`/v1/records/${seg(actionKey)}`);
  const verification = await verifyReceipt(record.verify_request);
  if (!verification.verified) return { kind: 'refused', why: `the record's seal did not verify (${verification.failed.join(', ')})` };
  const sealedHash = record.verify_request.payload_hash;
  let sealed: Ciphertext;
  try {
    sealed = await api<Ciphertext>(`/v1/reviews/${seg(actionKey)}/context${query({ key_id: device.keyId })}`);
  } catch (e) {
    if (e instanceof ApiError && e.problem.code === 'review_context_not_shared') return { kind: 'not_shared' };
    if (e instanceof ApiError && e.problem.code === 'review_context_expired') return { kind: 'expired' };
    throw e;
  }
  return readReviewContext(device.pair, sealed, { action_key: actionKey, payload_hash: sealedHash });
}

export interface ReviewContextProps {
  actionKey: string;
  /** Told whether Decide may be enabled: true only for context that recomputes to the sealed payload_hash. */
  onCheck?: (matches: boolean) => void;
}

export function ReviewContext({ actionKey, onCheck }: ReviewContextProps) {
  const [state, setState] = useState<State>({ kind: 'loading' });
  useEffect(() => {
    let live = true;
    setState({ kind: 'loading' });
    reviewDevice()
      .then((device) => loadReviewContext(actionKey, device))
      .then(
        (s) => live && setState(s),
        (error: unknown) => live && setState({ kind: 'error', error }),
      );
    return () => {
      live = false;
    };
  }, [actionKey]);
  useEffect(() => {
    // Only a mismatch or a refusal blocks Decide; context that was never shared is the policy's
    // choice, and a context that could not be fetched is shown as an error beside the form.
    if (state.kind === 'opened') onCheck?.(state.check.match);
    else if (state.kind === 'refused') onCheck?.(false);
    else if (state.kind !== 'loading') onCheck?.(true);
  }, [state]);

  switch (state.kind) {
    case 'loading':
      return <p class="muted">Opening the review context on this device…</p>;
    case 'not_shared':
      return <Notice>Context not shared: the employee’s browser did not seal this action’s context to this device.</Notice>;
    case 'expired':
      return <Notice>Context expired: the review ended, and its context was erased with it.</Notice>;
    case 'error':
      return <ErrorNotice error={state.error} />;
    case 'refused':
      return (
        <Notice tone="error">
          <strong>Do not decide on this context:</strong> {state.why}.
        </Notice>
      );
    case 'opened':
      return <OpenedContext doc={state.doc} check={state.check} />;
  }
}

function OpenedContext({ doc, check }: { doc: ReviewContextDocument; check: ContextCheck }) {
  const req = doc.gate_request;
  const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v, null, 2));
  const contextField = req.law_context ?? req.context;
  return (
    <section class="review-context" aria-label="What was gated">
      {check.match ? (
        <Notice tone="success">This is exactly what was gated: its payload_hash recomputes to the sealed {check.expected.slice(0, 16)}….</Notice>
      ) : (
        <Notice tone="error">
          <strong>Mismatch: this is not what was gated.</strong> The sealed payload_hash is {check.expected}; this context hashes to {check.computed}
          {check.file_name_mismatches.length > 0 ? `, and ${check.file_name_mismatches.length} file name(s) do not match their hash` : ''}. Decide stays disabled.
        </Notice>
      )}
      <dl>
        <dt>Proposed action</dt>
        <dd>{text(req.proposed_action)}</dd>
        {req.action_type !== undefined ? (
          <>
            <dt>Action type</dt>
            <dd>{text(req.action_type)}</dd>
          </>
        ) : null}
        {req.redacted_text !== undefined ? (
          <>
            <dt>Text sent (after redaction)</dt>
            <dd>
              <pre class="wrap">{text(req.redacted_text)}</pre>
            </dd>
          </>
        ) : null}
        {contextField !== undefined ? (
          <>
            <dt>Context</dt>
            <dd>
              <pre class="wrap">{text(contextField)}</pre>
            </dd>
          </>
        ) : null}
        {doc.files && doc.files.length > 0 ? (
          <>
            <dt>Files</dt>
            <dd>
              <ul>
                {doc.files.map((f) => (
                  <li key={f.sha256}>
                    {f.name ?? '(name not shared)'} · {f.media_type || 'unknown type'} · {f.size} bytes · SHA-256 <code>{f.sha256.slice(0, 16)}…</code>
                  </li>
                ))}
              </ul>
            </dd>
          </>
        ) : null}
      </dl>
    </section>
  );
}
