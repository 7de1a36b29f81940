/**
 * The console's frame: sign-in, then a header (tenant, person, sign out), the navigation and
 * the current page. Pages are addressed by the URL fragment (#/reviews), so a reload or a
 * shared link opens the same page and no server route is needed per page; one item of a list
 * page has its own (#/reviews/<action_key>, the link route dispatches carry). Signing in keeps
 * the fragment, so a link opened signed out lands on its page once signed in.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, onSignedOut } from './api.ts';
import { ITEM_PAGES, PAGES } from './pages/index.ts';
import { currentSession, signIn, signOut } from './session.ts';
import DevicePage from './pages/device.tsx';
import { ProviderSignIn, completeProviderSignIn } from './sign-in-provider.tsx';
import type { Me } from './session.ts';
import { Field } from './ui/field.tsx';
import { selfName } from './ui/names.tsx';
import { ErrorNotice, Notice } from './ui/notice.tsx';

interface Route {
  page: string;
  /** The item of an item page (#/<page>/<item>), decoded. */
  item?: string;
}

function routeFromHash(): Route {
  const id = location.hash.replace(/^#\/?/, '');
  const slash = id.indexOf('/');
  if (slash > 0 && id.slice(0, slash) in ITEM_PAGES) {
    try {
      const item = decodeURIComponent(id.slice(slash + 1));
      if (item) return { page: id.slice(0, slash), item };
    } catch {
      // A malformed escape is no item: the list page instead.
    }
    return { page: id.slice(0, slash) };
  }
  return { page: PAGES.some((p) => p.id === id) ? id : 'overview' };
}

export function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [route, setRoute] = useState(routeFromHash());
  const [device, setDevice] = useState(location.hash.startsWith('#/device'));
  useEffect(() => {
    completeProviderSignIn();
    // replaceState fires no hashchange: read the restored page here.
    setRoute(routeFromHash());
    setDevice(location.hash.startsWith('#/device'));
    currentSession().then(setMe);
    const onHash = () => {
      setRoute(routeFromHash());
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
  return <Shell me={me} route={route} onSignedOut={() => setMe(null)} />;
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

function Shell({ me, route, onSignedOut }: { me: Me; route: Route; onSignedOut: () => void }) {
  const current = PAGES.find((p) => p.id === route.page)!;
  const itemPage = route.item !== undefined ? ITEM_PAGES[route.page] : undefined;
  const title = itemPage?.title ?? current.title;
  const heading = useRef<HTMLHeadingElement>(null);
  const first = useRef(true);
  useEffect(() => {
    document.title = `${title} · Action Gate console`;
    // Moving focus to the new page's heading tells keyboard and screen-reader users where they are.
    if (!first.current) heading.current?.focus();
    first.current = false;
  }, [current.id, route.item]);
  const Page = current.component;
  const Item = itemPage?.component;
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
          {title}
        </h1>
        <p class="lead">{itemPage?.lead ?? current.lead}</p>
        {missing ? (
          <Notice tone="warning">
            You can look, but changes here need the <code>{missing}</code> capability, which this person does not hold.
          </Notice>
        ) : null}
        {Item && route.item !== undefined ? <Item key={`${current.id}/${route.item}`} me={me} id={route.item} /> : <Page key={current.id} me={me} />}
      </main>
    </>
  );
}
