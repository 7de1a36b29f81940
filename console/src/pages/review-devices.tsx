/**
 * "Your review devices": the signed-in person's review keys (GET /account/me/review-keys), each
 * with its device label, when it was registered and last used, its status, and which one is this
 * browser (the key id ../review-context.tsx keeps in IndexedDB). An active key can be revoked
 * after a confirmation (DELETE /account/me/review-keys/{id}); the service erases every context
 * sealed to it. Revoking this browser's own key also drops its stored pair, so the next decide
 * form registers a new one. Only a short SHA-256 fingerprint of each public key is shown, never
 * the key itself. The list is read again while the page is visible, so a device registered
 * elsewhere (or by this browser's decide form) shows without a refresh.
 */
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { fromBase64Url } from '../../../shared/encoding.ts';
import { api, seg } from '../api.ts';
import { when } from '../format.ts';
import { forgetReviewDevice, storedDeviceKeyId } from '../review-context.tsx';
import type { Me } from '../session.ts';
import { Badge } from '../ui/badge.tsx';
import { ErrorNotice, Notice } from '../ui/notice.tsx';
import { usePolled } from '../ui/poll.ts';
import { Columns, TableWrap } from '../ui/table.tsx';

export interface ReviewKey {
  id: string;
  public_key: string;
  label: string;
  status: 'active' | 'revoked';
  created_at?: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

interface Devices {
  keys: ReviewKey[];
  /** The key id of this browser's stored device, if it holds one. */
  thisBrowser: string | undefined;
}

const POLL_MS = 4000;

async function loadDevices(): Promise<Devices> {
  const [list, thisBrowser] = await Promise.all([
    api<{ review_keys: ReviewKey[] }>('/account/me/review-keys'),
    // A browser whose IndexedDB is unavailable (private windows of some browsers) holds no device.
    storedDeviceKeyId().catch(() => undefined),
  ]);
  return { keys: list.review_keys, thisBrowser };
}

/** The first 8 bytes of SHA-256 over the raw public key, in hex groups: enough to tell devices apart by eye. */
export async function keyFingerprint(publicKey: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', fromBase64Url(publicKey) as Uint8Array<ArrayBuffer>));
  const hex = [...digest.subarray(0, 8)].map((b) => b.toString(16).padStart(2, '0')).join('');
  return hex.match(/.{4}/g)!.join(' ');
}

function useFingerprints(keys: ReviewKey[]): Map<string, string> {
  const [prints, setPrints] = useState<Map<string, string>>(new Map());
  const wanted = keys.map((k) => k.public_key).join(',');
  useEffect(() => {
    let live = true;
    Promise.all(keys.map(async (k) => [k.id, await keyFingerprint(k.public_key)] as const)).then(
      (pairs) => live && setPrints(new Map(pairs)),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [wanted]);
  return prints;
}

/** The section, for a person who holds reviews:decide; nothing for anyone else (a service account has no devices). */
export function ReviewDevices({ me }: { me: Me }) {
  if (!me.person || !me.capabilities.includes('reviews:decide')) return null;
  return <DeviceList />;
}

function DeviceList() {
  const devices = usePolled(loadDevices, [], POLL_MS);
  const keys = devices.data?.keys ?? [];
  const prints = useFingerprints(keys);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [error, setError] = useState<{ id: string; error: unknown } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const thisBrowser = devices.data?.thisBrowser;
  const revoke = async (k: ReviewKey) => {
    setError(null);
    setDone(null);
    try {
      await api(`/account/me/review-keys/${seg(k.id)}`, { method: 'DELETE' });
      if (k.id === thisBrowser) await forgetReviewDevice(k.id);
      setConfirming(null);
      setDone(
        k.id === thisBrowser
          ? `This browser’s device “${k.label}” is revoked and what was sealed to it is erased; the next decide form here registers a new one.`
          : `The device “${k.label}” is revoked: what was sealed to it is erased, and nothing new is sealed to it.`,
      );
      devices.reload();
    } catch (err) {
      setConfirming(null);
      setError({ id: k.id, error: err });
    }
  };
  return (
    <section aria-labelledby="review-devices-h" class="card review-devices">
      <h2 id="review-devices-h">Your review devices</h2>
      <p>
        Context the employee shares is encrypted to each of your devices; revoke a device you no longer use — what was sealed to it is erased.
      </p>
      {done ? <Notice tone="success">{done}</Notice> : null}
      {devices.error ? <ErrorNotice error={devices.error} /> : null}
      {devices.data === undefined && !devices.error ? <p>Loading…</p> : null}
      {devices.data && keys.length === 0 ? <p>No device yet: opening a decide form registers this browser.</p> : null}
      {keys.length > 0 ? (
        <TableWrap label="Your review devices">
          <table>
            <caption class="visually-hidden">Your review devices, oldest first, revoked ones included</caption>
            <Columns names={['Device', 'Key fingerprint', 'Registered', 'Last used', 'Status', { hidden: 'Actions' }]} />
            <tbody>
              {keys.map((k) => (
                <Fragment key={k.id}>
                  <tr>
                    <th scope="row">
                      {k.label}
                      {k.id === thisBrowser ? (
                        <>
                          {' '}
                          <Badge tone="neutral">this browser</Badge>
                        </>
                      ) : null}
                    </th>
                    <td>
                      <code title={k.id}>{prints.get(k.id) ?? '…'}</code>
                    </td>
                    <td>{k.created_at ? when(k.created_at) : '—'}</td>
                    <td>{k.last_used_at ? when(k.last_used_at) : <span class="muted">never</span>}</td>
                    <td>
                      <Badge tone={k.status === 'active' ? 'ok' : 'bad'}>{k.status}</Badge>
                      {k.revoked_at ? <span class="muted"> {when(k.revoked_at)}</span> : null}
                    </td>
                    <td class="row-actions">
                      {k.status === 'active' ? (
                        <button
                          type="button"
                          class="secondary"
                          aria-expanded={confirming === k.id}
                          onClick={() => setConfirming(confirming === k.id ? null : k.id)}
                        >
                          Revoke<span class="visually-hidden"> {k.label}{k.id === thisBrowser ? ' (this browser)' : ''}</span>
                        </button>
                      ) : null}
                    </td>
                  </tr>
                  {confirming === k.id && k.status === 'active' ? (
                    <tr class="decide-row">
                      <td colSpan={6}>
                        <RevokeConfirm keyRow={k} thisBrowser={k.id === thisBrowser} onConfirm={() => revoke(k)} onCancel={() => setConfirming(null)} />
                      </td>
                    </tr>
                  ) : null}
                  {error?.id === k.id ? (
                    <tr>
                      <td colSpan={6}>
                        <ErrorNotice error={error.error} />
                      </td>
                    </tr>
                  ) : null}
                </Fragment>
              ))}
            </tbody>
          </table>
        </TableWrap>
      ) : null}
    </section>
  );
}

function RevokeConfirm({ keyRow, thisBrowser, onConfirm, onCancel }: { keyRow: ReviewKey; thisBrowser: boolean; onConfirm: () => void; onCancel: () => void }) {
  const question = `Revoke “${keyRow.label}”${thisBrowser ? ' (this browser)' : ''}? Every context sealed to it is erased; this cannot be undone.`;
  return (
    <div class="confirm" role="group" aria-label={question}>
      <p>{question}</p>
      <div class="actions">
        <button type="button" class="danger" onClick={onConfirm}>
          Revoke the device
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}
