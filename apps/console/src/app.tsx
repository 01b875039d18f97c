import { useState } from 'preact/hooks';
import { devSignIn, signOut, startOidc, useAuth, type ConsoleConfig } from './auth.js';
import { AccessesPage } from './pages/accesses.js';
import { ConnectorsPage } from './pages/connectors.js';
import { NotFoundPage } from './pages/not-found.js';
import { SessionsPage } from './pages/sessions.js';
import { SessionPage } from './session/session-page.js';
import { useRoute, type Route } from './router.js';

export function App({ config, signInError }: { config: ConsoleConfig; signInError: string | null }) {
  const { session, notice } = useAuth();
  const route = useRoute();
  if (!session) return <SignIn config={config} error={signInError ?? notice} />;
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Tether</span>
        <nav aria-label="Main">
          <NavLink href="#/connectors" active={route.page === 'connectors'} label="Connectors" />
          <NavLink href="#/accesses" active={route.page === 'accesses'} label="Saved accesses" />
          <NavLink
            href="#/sessions"
            active={route.page === 'sessions' || route.page === 'session'}
            label="Sessions"
          />
        </nav>
        <span class="who">
          Signed in as <strong>{session.sub}</strong>
        </span>
        <button type="button" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Page route={route} config={config} />
      </main>
    </div>
  );
}

function NavLink({ href, active, label }: { href: string; active: boolean; label: string }) {
  return (
    <a href={href} aria-current={active ? 'page' : undefined}>
      {label}
    </a>
  );
}

function Page({ route, config }: { route: Route; config: ConsoleConfig }) {
  switch (route.page) {
    case 'connectors':
      return <ConnectorsPage />;
    case 'accesses':
      return <AccessesPage />;
    case 'sessions':
      return <SessionsPage accessId={route.accessId} pageNo={route.page_no} />;
    case 'session':
      return (
        <SessionPage
          key={route.sessionId}
          edgeId={route.edgeId}
          accessId={route.accessId}
          sessionId={route.sessionId}
          traceTemplate={config.trace_url_template}
        />
      );
    case 'not-found':
      return <NotFoundPage />;
  }
}

function SignIn({ config, error }: { config: ConsoleConfig; error: string | null }) {
  const [user, setUser] = useState('demo');
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setFailure(null);
    try {
      await action();
    } catch (e) {
      setFailure((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const shown = failure ?? error;
  return (
    <main id="main" class="signin">
      <h1>Tether console</h1>
      {shown && (
        <p role="alert" class="error">
          {shown}
        </p>
      )}
      {config.oidc && (
        <button
          type="button"
          class="primary"
          disabled={busy}
          onClick={() => void run(() => startOidc(config.oidc!))}
        >
          Sign in with your identity provider
        </button>
      )}
      {config.dev_sign_in && (
        <form
          class="card"
          onSubmit={(event) => {
            event.preventDefault();
            void run(() => devSignIn(user.trim()));
          }}
        >
          <h2>Development sign-in</h2>
          <p class="muted">This api runs with the development secret: anyone can sign in as anyone.</p>
          <label>
            User
            <input value={user} required maxLength={32} onInput={(e) => setUser(e.currentTarget.value)} />
          </label>
          <button type="submit" disabled={busy}>
            Sign in for development
          </button>
        </form>
      )}
      {!config.oidc && !config.dev_sign_in && (
        <p>No sign-in is configured for this console (TETHER_CONSOLE_OIDC_CLIENT_ID).</p>
      )}
    </main>
  );
}
