/**
 * The console's frame: sign-in, then a header (tenant, person, sign out), the navigation and
 * the current page. Pages are addressed by the URL fragment (#/reviews), so a reload or a
 * shared link opens the same page and no server route is needed per page.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, onSignedOut } from './api.ts';
import { PAGES } from './pages/index.ts';
import { currentSession, signIn, signOut } from './session.ts';
import DevicePage from './pages/device.tsx';
import { ProviderSignIn, completeProviderSignIn } from './sign-in-provider.tsx';
import type { Me } from './session.ts';
import { Field } from './ui/field.tsx';
import { selfName } from './ui/names.tsx';
import { ErrorNotice, Notice } from './ui/notice.tsx';

function pageFromHash(): string {
  const id = location.hash.replace(/^#\/?/, '');
  return PAGES.some((p) => p.id === id) ? id : 'overview';
}

export function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [page, setPage] = useState(pageFromHash());
  const [device, setDevice] = useState(location.hash.startsWith('#/device'));
  useEffect(() => {
    completeProviderSignIn();
    // replaceState fires no hashchange: read the restored page here.
    setPage(pageFromHash());
    setDevice(location.hash.startsWith('#/device'));
    currentSession().then(setMe);
    const onHash = () => {
      setPage(pageFromHash());
      setDevice(location.hash.startsWith('#/device'));
    };
    addEventListener('hashchange', onHash);
    const off = onSignedOut(() => setMe(null));
    return () => {
      removeEventListener('hashchange', onHash);
      off();
    };
  }, []);
  if (me === undefined) return <p class="loading">Loading…</p>;
  if (me === null) return <SignIn onSignedIn={setMe} />;
  // RFC 8628 §3.3: the device's verification page, reached from the extension's link.
  if (device)
    return (
      <main id="main" class="device-approval">
        <h1>Approve a device</h1>
        <DevicePage />
        <p>
          <a href="#/overview">Back to the console</a>
        </p>
      </main>
    );
  return <Shell me={me} page={page} onSignedOut={() => setMe(null)} />;
}

function SignIn({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      onSignedIn(await signIn(key.trim()));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const keyError = error instanceof ApiError && error.status === 401 ? 'This key is not valid: check it, or ask for a new one.' : undefined;
  return (
    <main class="signin" id="main">
      <h1>Action Gate console</h1>
      <p>Sign in with your API key. It is sent once to open a session and is not kept in this browser.</p>
      <form onSubmit={submit}>
        <Field label="API key" hint="svc_test_… or svc_live_…" error={keyError}>
          {(a11y) => (
            <input
              {...a11y}
              type="password"
              autoComplete="off"
              spellcheck={false}
              required
              value={key}
              onInput={(e) => setKey(e.currentTarget.value)}
            />
          )}
        </Field>
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      {error && !keyError ? <ErrorNotice error={error} /> : null}
      <ProviderSignIn />
    </main>
  );
}

function Shell({ me, page, onSignedOut }: { me: Me; page: string; onSignedOut: () => void }) {
  const current = PAGES.find((p) => p.id === page)!;
  const heading = useRef<HTMLHeadingElement>(null);
  const first = useRef(true);
  useEffect(() => {
    document.title = `${current.title} · Action Gate console`;
    // Moving focus to the new page's heading tells keyboard and screen-reader users where they are.
    if (!first.current) heading.current?.focus();
    first.current = false;
  }, [current.id]);
  const Page = current.component;
  const missing = current.capability && !me.capabilities.includes(current.capability) ? current.capability : undefined;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <div class="brand">Action Gate</div>
        <div class="who">
          <span class="tenant">{me.display_name}</span>
          <span class={`kind kind-${me.tenant_kind}`}>{me.tenant_kind}</span>
          <span class="person" title={me.principal?.id}>
            {selfName(me)} · {me.person ? me.person.role : 'service account'}
          </span>
          <button type="button" class="secondary" onClick={() => signOut().finally(onSignedOut)}>
            Sign out
          </button>
        </div>
      </header>
      <nav aria-label="Console pages">
        <ul>
          {PAGES.map((p) => (
            <li key={p.id}>
              <a href={`#/${p.id}`} aria-current={p.id === current.id ? 'page' : undefined}>
                {p.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        <h1 tabIndex={-1} ref={heading}>
          {current.title}
        </h1>
        <p class="lead">{current.lead}</p>
        {missing ? (
          <Notice tone="warning">
            You can look, but changes here need the <code>{missing}</code> capability, which this person does not hold.
          </Notice>
        ) : null}
        <Page key={current.id} me={me} />
      </main>
    </>
  );
}
