/**
 * Approving a device (RFC 8628 §3.3): the person signed in here types the code the extension
 * shows, or follows its link (#/device?user_code=…), sees which client asks for what and what
 * approving would grant (only capabilities this person holds), and approves or denies it. The
 * extension's next poll then receives a key acting for this person, or a refusal.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, seg } from '../api.ts';
import { Field } from '../ui/field.tsx';
import { ErrorNotice, Notice } from '../ui/notice.tsx';

interface DeviceRequest {
  user_code: string;
  client_id: string;
  client_name: string;
  status: 'pending' | 'approved' | 'denied' | 'issued';
  requested: string[];
  grantable: string[];
  expires_at: string;
}

function codeFromHash(): string {
  const q = location.hash.split('?')[1] ?? '';
  return new URLSearchParams(q).get('user_code') ?? '';
}

export default function DevicePage() {
  const [code, setCode] = useState(codeFromHash());
  const [request, setRequest] = useState<DeviceRequest | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);

  const look = async (typed: string) => {
    setError(undefined);
    setRequest(undefined);
    try {
      setRequest(await api<DeviceRequest>(`/account/device-authorizations/${seg(typed.trim())}`));
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => {
    if (code) void look(code);
  }, []);

  const decide = async (decision: 'approve' | 'deny') => {
    if (!request) return;
    setBusy(true);
    setError(undefined);
    try {
      setRequest(await api<DeviceRequest>(`/account/device-authorizations/${seg(request.user_code)}/${decision}`, { method: 'POST' }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="device">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void look(code);
        }}
      >
        <Field label="Code shown by the device" hint="Eight letters, such as BCDF-GHJK">
          {(a11y) => <input {...a11y} autoComplete="off" spellcheck={false} required value={code} onInput={(e) => setCode(e.currentTarget.value)} />}
        </Field>
        <button type="submit" class="secondary">
          Look up
        </button>
      </form>
      {error ? <ErrorNotice error={error} /> : null}
      {request ? (
        <div class="device-request">
          <p>
            <strong>{request.client_name}</strong> asks to act for you with: <code>{request.requested.join(', ')}</code>.
          </p>
          {request.status === 'pending' ? (
            <>
              {request.grantable.length > 0 ? (
                <p>
                  Approving gives it <code>{request.grantable.join(', ')}</code>
                  {request.grantable.length < request.requested.length ? ' (only what you hold yourself)' : ''}, until you revoke it.
                </p>
              ) : (
                <Notice tone="warning">You hold none of these capabilities, so you cannot approve this device.</Notice>
              )}
              <div class="actions">
                <button type="button" disabled={busy || request.grantable.length === 0} onClick={() => decide('approve')}>
                  Approve
                </button>
                <button type="button" class="secondary" disabled={busy} onClick={() => decide('deny')}>
                  Deny
                </button>
              </div>
            </>
          ) : (
            <Notice tone={request.status === 'denied' ? 'warning' : 'success'}>
              {request.status === 'denied' ? 'Denied: the device will be told so.' : 'Approved: return to the device; it finishes signing in by itself.'}
            </Notice>
          )}
        </div>
      ) : null}
    </section>
  );
}
