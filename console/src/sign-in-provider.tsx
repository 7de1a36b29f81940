/**
 * Signing in with the organisation's identity provider (OpenID Connect, companion sign-in/):
 * the browser leaves for GET /account/oidc/start and comes back to /console#/signed-in with the
 * session cookie set and the session's CSRF token in the fragment, which browsers never send to
 * a server. The token is kept like the API-key sign-in's, the fragment is removed from the
 * address bar and history at once, and the page the person was on before leaving is restored.
 */
import { useState } from 'preact/hooks';
import { setCsrfToken } from './api.ts';
import { Field } from './ui/field.tsx';

const RETURN_KEY = 'ag.console.return';
const SIGNED_IN = /^#\/signed-in\?csrf_token=([A-Za-z0-9_-]{1,128})$/;

/** Takes the CSRF token from the return fragment, if this load is the provider's return. */
export function completeProviderSignIn(): void {
  const m = SIGNED_IN.exec(location.hash);
  if (!m) return;
  setCsrfToken(m[1]!);
  const back = sessionStorage.getItem(RETURN_KEY);
  sessionStorage.removeItem(RETURN_KEY);
  const hash = back && back.startsWith('#/') && !SIGNED_IN.test(back) ? back : '#/overview';
  history.replaceState(null, '', `${location.pathname}${location.search}${hash}`);
}

export function ProviderSignIn() {
  const [email, setEmail] = useState('');
  const submit = (e: Event) => {
    e.preventDefault();
    // The page to come back to (a device approval link, say) survives the trip to the provider.
    if (location.hash.startsWith('#/')) sessionStorage.setItem(RETURN_KEY, location.hash);
    location.assign(`/account/oidc/start?email=${encodeURIComponent(email.trim())}`);
  };
  return (
    <form onSubmit={submit} class="provider-sign-in">
      <h2>Sign in with your organisation</h2>
      <Field label="Work email" hint="Its domain tells us which organisation’s sign-in to use.">
        {(a11y) => <input {...a11y} type="email" autoComplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
      </Field>
      <button type="submit">Continue to your organisation’s sign-in</button>
    </form>
  );
}
