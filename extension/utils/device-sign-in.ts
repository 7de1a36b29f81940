/**
 * "Sign in with your organisation" for the reviewer role: the OAuth 2.0 device authorization
 * grant (RFC 8628) against the companion. The extension asks for a user code, the person approves
 * it in the console where they are signed in, and the extension polls until it receives a key
 * acting for that person (only the capabilities they hold, revocable from the console), which
 * it keeps in place of an API key.
 */

/** The companion knows the extension by this client id (companion/sign-in/device-grant.ts). */
export const DEVICE_CLIENT_ID = 'action-gate-extension';
/** What the reviewer role needs: decide reviews and read the records it shows. */
export const REVIEWER_SCOPE = 'reviews:decide records:read';
const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

/** RFC 8628 §3.2. */
export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

export type DeviceSignInResult = { ok: true; token: string; scope: string } | { ok: false; error: string; detail: string };

type Fetch = (url: string, init: RequestInit) => Promise<Response>;

function formPost(fetchFn: Fetch, url: string, fields: Record<string, string>): Promise<Response> {
  return fetchFn(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: new URLSearchParams(fields).toString() });
}

export async function startDeviceSignIn(companionUrl: string, fetchFn: Fetch = fetch): Promise<DeviceAuthorization> {
  const res = await formPost(fetchFn, `${companionUrl}/oauth/device_authorization`, { client_id: DEVICE_CLIENT_ID, scope: REVIEWER_SCOPE });
  const body = (await res.json()) as DeviceAuthorization & { error?: string; error_description?: string };
  if (!res.ok) throw new Error(body.error_description ?? `the companion answered HTTP ${res.status}`);
  return body;
}

/**
 * Polls the token endpoint at the interval (RFC 8628 §3.4), slowing down when told (§3.5),
 * until the person approves or denies, the code expires, or `signal` aborts.
 */
export async function pollDeviceToken(
  companionUrl: string,
  device: DeviceAuthorization,
  options: { signal?: AbortSignal; fetchFn?: Fetch; wait?: (ms: number, signal?: AbortSignal) => Promise<void> } = {},
): Promise<DeviceSignInResult> {
  const fetchFn = options.fetchFn ?? fetch;
  const wait = options.wait ?? sleep;
  let interval = Math.max(device.interval, 1);
  const deadline = Date.now() + device.expires_in * 1000;
  while (Date.now() < deadline) {
    await wait(interval * 1000, options.signal);
    if (options.signal?.aborted) return { ok: false, error: 'cancelled', detail: 'Sign-in was cancelled.' };
    const res = await formPost(fetchFn, `${companionUrl}/oauth/token`, { grant_type: GRANT_TYPE, device_code: device.device_code, client_id: DEVICE_CLIENT_ID });
    const body = (await res.json()) as { access_token?: string; scope?: string; error?: string; error_description?: string };
    if (res.ok && typeof body.access_token === 'string') return { ok: true, token: body.access_token, scope: body.scope ?? '' };
    if (body.error === 'authorization_pending') continue;
    if (body.error === 'slow_down') {
      interval += 5;
      continue;
    }
    return { ok: false, error: body.error ?? `http_${res.status}`, detail: body.error_description ?? `The companion answered HTTP ${res.status}.` };
  }
  return { ok: false, error: 'expired_token', detail: 'The code expired before it was approved; start again.' };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });
}
