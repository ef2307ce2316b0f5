import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { api, getSession, type SessionUser } from './api.ts';
import {
  CheckEmailPage,
  ForgotPasswordPage,
  LINK_ALREADY_USED,
  ResetPasswordPage,
  SignInPage,
  SignUpPage,
  VerifiedPage,
} from './auth-pages.tsx';
import { KeysPage } from './keys-page.tsx';
import { ModelPage } from './model-page.tsx';
import { PlaygroundPage } from './playground-page.tsx';
import { TeachPage } from './teach-page.tsx';
import { Link, navigate, useLocation } from './ui.tsx';
import { UsagePage } from './usage-page.tsx';
import './styles.css';

const PUBLIC = new Set(['/sign-in', '/sign-up', '/check-email', '/verified', '/forgot-password', '/reset-password']);
const PRIVATE: Record<string, { label: string; page: () => React.ReactNode }> = {
  '/keys': { label: 'Keys', page: () => <KeysPage /> },
  '/usage': { label: 'Usage', page: () => <UsagePage /> },
  '/playground': { label: 'Playground', page: () => <PlaygroundPage /> },
  '/model': { label: 'Model', page: () => <ModelPage /> },
  '/adapters': { label: 'Adapters', page: () => <TeachPage /> },
};

function Shell({ user, onSignOut, children }: { user: SessionUser; onSignOut: () => void; children: React.ReactNode }) {
  const { path } = useLocation();
  return (
    <>
      <a href="#main" className="skip">
        Skip to content
      </a>
      <header className="top">
        <Link to="/keys" className="brand">
          Brier
        </Link>
        <nav aria-label="Console">
          <ul>
            {Object.entries(PRIVATE).map(([to, { label }]) => (
              <li key={to}>
                <Link to={to} aria-current={path === to ? 'page' : undefined}>
                  {label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="account">
          <span className="email" title={user.email}>
            {user.email}
          </span>
          <button type="button" className="secondary small" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main">{children}</main>
    </>
  );
}

function App({ initialUser }: { initialUser: SessionUser | null }) {
  const [user, setUser] = useState(initialUser);
  const { path, query } = useLocation();
  const isPublic = PUBLIC.has(path);
  const route = PRIVATE[path];

  // Redirect before painting anything that belongs to the other state. The verification link signs
  // the user in and lands on /verified: straight to the keys, which say the email is verified (or,
  // for a link opened a second time, that it was already used).
  const target = user
    ? path === '/verified'
      ? `/keys?verified=${query.get('error') === LINK_ALREADY_USED ? 'again' : '1'}`
      : isPublic || !route
        ? '/keys'
        : null
    : isPublic
      ? null
      : '/sign-in';
  useEffect(() => {
    if (target) navigate(target, { replace: true });
  }, [target]);
  if (target) return null;

  async function signOut() {
    try {
      await api('/control/v1/auth/sign-out', { body: {} });
    } finally {
      setUser(null);
      navigate('/sign-in', { replace: true });
    }
  }

  if (!user) {
    return (
      <main id="main" className="auth">
        <p className="brand-large">Brier</p>
        {path === '/sign-in' ? (
          <SignInPage
            onSignedIn={(u) => {
              setUser(u);
              navigate('/keys', { replace: true });
            }}
          />
        ) : null}
        {path === '/sign-up' ? <SignUpPage /> : null}
        {path === '/check-email' ? <CheckEmailPage /> : null}
        {path === '/verified' ? <VerifiedPage /> : null}
        {path === '/forgot-password' ? <ForgotPasswordPage /> : null}
        {path === '/reset-password' ? <ResetPasswordPage /> : null}
      </main>
    );
  }
  return (
    <Shell user={user} onSignOut={signOut}>
      {route?.page()}
    </Shell>
  );
}

async function boot() {
  const root = document.getElementById('root');
  if (!root) return;
  // The session is known before the first render: no flash of the signed-out (or signed-in) state.
  let user: SessionUser | null = null;
  try {
    user = await getSession();
  } catch {
    user = null;
  }
  createRoot(root).render(
    <StrictMode>
      <App initialUser={user} />
    </StrictMode>,
  );
}

void boot();
