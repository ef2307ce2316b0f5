import { type FormEvent, useEffect, useState } from 'react';
import { type AuthProviders, api, consoleUrl, getSession, isApiError, type SessionUser } from './api.ts';
import { Alert, Field, Link, navigate, PageHeading, useLocation } from './ui.tsx';

interface FormErrors {
  form?: string | undefined;
  email?: string | undefined;
  password?: string | undefined;
}

/** Puts a server error next to the field it names, or above the form. */
function toErrors(error: unknown, passwordField = 'password'): FormErrors {
  if (!isApiError(error)) return { form: 'something went wrong; try again' };
  const text = error.message.replace(/^[a-zA-Z]+: /, '');
  const sentence = text.charAt(0).toUpperCase() + text.slice(1);
  if (error.field === 'email') return { email: sentence };
  if (error.field === passwordField || error.field === 'password') return { password: sentence };
  if (error.status === 429) {
    return { form: `Too many attempts. Try again in ${error.retryAfter ?? 60} seconds.` };
  }
  return { form: error.message.charAt(0).toUpperCase() + error.message.slice(1) };
}

function AuthCard({ children }: { children: React.ReactNode }) {
  return <div className="auth-card">{children}</div>;
}

/** Where this server's verification and reset links go (GET /control/v1/auth-providers); null until known. */
function useMailDelivery(): AuthProviders['mail_delivery'] | null {
  const [delivery, setDelivery] = useState<AuthProviders['mail_delivery'] | null>(null);
  useEffect(() => {
    api<AuthProviders>('/control/v1/auth-providers').then(
      (p) => setDelivery(p.mail_delivery),
      () => setDelivery(null),
    );
  }, []);
  return delivery;
}

/** On a server without SMTP, says that the link is in the server log, not in the user's inbox. */
function LinkInServerLog() {
  if (useMailDelivery() !== 'log') return null;
  return (
    <Alert kind="info">
      <span data-testid="link-in-log">
        This server sends no email (it has no <code>SMTP_URL</code>): the link is not in your inbox but in the server's
        log, on a line <code>mail (log mailer)</code> whose <code>mailLink</code> is the link. If you run this server,
        open that link; otherwise ask the person who runs it.
      </span>
    </Alert>
  );
}

export function SignInPage({ onSignedIn }: { onSignedIn: (user: SessionUser) => void }) {
  const { query } = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<FormErrors>({});
  const [busy, setBusy] = useState(false);
  const [unverified, setUnverified] = useState(false);
  const [providers, setProviders] = useState<AuthProviders['providers']>([]);

  useEffect(() => {
    api<AuthProviders>('/control/v1/auth-providers').then(
      (p) => setProviders(p.providers),
      () => setProviders([]),
    );
  }, []);

  const oauthError = query.get('error');

  async function submit(e: FormEvent) {
    e.preventDefault();
    const next: FormErrors = {};
    if (!email.trim()) next.email = 'Enter your email address.';
    if (!password) next.password = 'Enter your password.';
    setErrors(next);
    setUnverified(false);
    if (next.email || next.password) return;
    setBusy(true);
    try {
      await api('/control/v1/auth/sign-in/email', { body: { email: email.trim(), password } });
      const user = await getSession();
      if (user) onSignedIn(user);
    } catch (err) {
      if (isApiError(err) && err.type === 'email_not_verified') {
        setUnverified(true);
        setErrors({});
      } else {
        setErrors(toErrors(err));
      }
    } finally {
      setBusy(false);
    }
  }

  async function social(provider: string) {
    setErrors({});
    try {
      const { url } = await api<{ url: string }>('/control/v1/auth/sign-in/social', {
        body: { provider, callbackURL: '/console/keys', errorCallbackURL: '/console/sign-in' },
      });
      window.location.assign(url);
    } catch (err) {
      setErrors(toErrors(err));
    }
  }

  return (
    <AuthCard>
      <PageHeading title="Sign in" />
      {oauthError ? (
        <Alert>
          The sign-in with the other provider did not complete ({oauthError.replace(/_/g, ' ').toLowerCase()}). If you
          already have a password account with this email, sign in with your password.
        </Alert>
      ) : null}
      {errors.form ? <Alert>{errors.form}</Alert> : null}
      {unverified ? (
        <Alert>
          Your email is not verified yet. Open the link in the verification email, or{' '}
          <Link to={`/check-email?email=${encodeURIComponent(email.trim())}`}>send a new link</Link>.
        </Alert>
      ) : null}
      <form onSubmit={submit} noValidate>
        <EmailField value={email} onChange={setEmail} error={errors.email} />
        <PasswordField label="Password" value={password} onChange={setPassword} error={errors.password} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      {providers.length > 0 ? (
        <div className="providers">
          <p className="divider">or</p>
          {providers.map((p) => (
            <button key={p.id} type="button" className="secondary wide" onClick={() => social(p.id)}>
              Sign in with {p.name}
            </button>
          ))}
        </div>
      ) : null}
      <p className="auth-links">
        <Link to="/forgot-password">Forgot your password?</Link>
        <span>
          New here? <Link to="/sign-up">Create an account</Link>
        </span>
      </p>
    </AuthCard>
  );
}

export function SignUpPage() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<FormErrors>({});
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    const next: FormErrors = {};
    if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email.trim())) next.email = 'Enter an email address, like you@example.com.';
    if (password.length < 10) next.password = `Use at least 10 characters (this has ${password.length}).`;
    setErrors(next);
    if (next.email || next.password) return;
    setBusy(true);
    try {
      await api('/control/v1/auth/sign-up/email', {
        body: { email: email.trim(), password, callbackURL: consoleUrl('/verified') },
      });
      navigate(`/check-email?email=${encodeURIComponent(email.trim())}`);
    } catch (err) {
      setErrors(toErrors(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <AuthCard>
      <PageHeading title="Create your account" />
      {errors.form ? <Alert>{errors.form}</Alert> : null}
      <form onSubmit={submit} noValidate>
        <EmailField value={email} onChange={setEmail} error={errors.email} />
        <PasswordField
          isNew
          label="Password"
          hint="At least 10 characters, with at least 4 different ones; not your email."
          value={password}
          onChange={setPassword}
          error={errors.password}
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Create account'}
        </button>
      </form>
      <p className="auth-links">
        <span>
          Already have an account? <Link to="/sign-in">Sign in</Link>
        </span>
      </p>
    </AuthCard>
  );
}

export function CheckEmailPage() {
  const { query } = useLocation();
  const email = query.get('email') ?? '';
  const [status, setStatus] = useState<{ kind: 'success' | 'error'; text: string } | null>(null);
  const [busy, setBusy] = useState(false);

  async function resend() {
    setBusy(true);
    setStatus(null);
    try {
      await api('/control/v1/auth/send-verification-email', { body: { email, callbackURL: consoleUrl('/verified') } });
      setStatus({ kind: 'success', text: `If ${email} has an unverified account, a new link is on its way.` });
    } catch (err) {
      const e = toErrors(err);
      setStatus({ kind: 'error', text: e.form ?? e.email ?? 'could not send the email' });
    } finally {
      setBusy(false);
    }
  }

  return (
    <AuthCard>
      <PageHeading title="Check your email" />
      <p>
        We sent a verification link to <strong>{email || 'your address'}</strong>. Open it within 24 hours to activate
        your account; the link works once.
      </p>
      <LinkInServerLog />
      {status ? <Alert kind={status.kind}>{status.text}</Alert> : null}
      {email ? (
        <button type="button" className="secondary" onClick={resend} disabled={busy}>
          {busy ? 'Sending…' : 'Resend the email'}
        </button>
      ) : null}
      <p className="auth-links">
        <Link to="/sign-in">Back to sign in</Link>
      </p>
    </AuthCard>
  );
}

/** The `error` a used verification link lands with (src/routes/control/auth/route.ts). */
export const LINK_ALREADY_USED = 'LINK_ALREADY_USED';

export function VerifiedPage() {
  const { query } = useLocation();
  const error = query.get('error');
  const used = error === LINK_ALREADY_USED;
  return (
    <AuthCard>
      <PageHeading title={used ? 'This link was already used' : error ? 'This link did not work' : 'Email verified'} />
      {used ? (
        <Alert kind="info">
          This verification link was already used, so your email is verified: a link works once. Sign in with your
          password.
        </Alert>
      ) : error ? (
        <Alert>
          The verification link is invalid or has expired ({error.replace(/_/g, ' ').toLowerCase()}). Sign in to ask for
          a new one.
        </Alert>
      ) : (
        <Alert kind="success">Your email is verified. You can sign in now.</Alert>
      )}
      <p>
        <Link to="/sign-in" className="button">
          Sign in
        </Link>
      </p>
    </AuthCard>
  );
}

export function ForgotPasswordPage() {
  const [email, setEmail] = useState('');
  const [errors, setErrors] = useState<FormErrors>({});
  const [sent, setSent] = useState(false);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!email.trim()) {
      setErrors({ email: 'Enter your email address.' });
      return;
    }
    setBusy(true);
    setErrors({});
    try {
      await api('/control/v1/auth/request-password-reset', {
        body: { email: email.trim(), redirectTo: consoleUrl('/reset-password') },
      });
      setSent(true);
    } catch (err) {
      setErrors(toErrors(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <AuthCard>
      <PageHeading title="Reset your password" />
      {sent ? (
        <>
          <Alert kind="success">
            If {email.trim()} has an account, we sent it a link to choose a new password. It works for an hour.
          </Alert>
          <LinkInServerLog />
        </>
      ) : (
        <form onSubmit={submit} noValidate>
          {errors.form ? <Alert>{errors.form}</Alert> : null}
          <EmailField value={email} onChange={setEmail} error={errors.email} />
          <button type="submit" disabled={busy}>
            {busy ? 'Sending…' : 'Send the reset link'}
          </button>
        </form>
      )}
      <p className="auth-links">
        <Link to="/sign-in">Back to sign in</Link>
      </p>
    </AuthCard>
  );
}

export function ResetPasswordPage() {
  const { query } = useLocation();
  const token = query.get('token') ?? '';
  const linkError = query.get('error');
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<FormErrors>({});
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (password.length < 10) {
      setErrors({ password: `Use at least 10 characters (this has ${password.length}).` });
      return;
    }
    setBusy(true);
    setErrors({});
    try {
      await api('/control/v1/auth/reset-password', { body: { token, newPassword: password } });
      setDone(true);
    } catch (err) {
      setErrors(toErrors(err, 'newPassword'));
    } finally {
      setBusy(false);
    }
  }

  return (
    <AuthCard>
      <PageHeading title="Choose a new password" />
      {linkError || !token ? (
        <Alert>
          This reset link is invalid or has expired. <Link to="/forgot-password">Ask for a new one</Link>.
        </Alert>
      ) : done ? (
        <Alert kind="success">
          Your password is changed and your other sessions are signed out. <Link to="/sign-in">Sign in</Link>
        </Alert>
      ) : (
        <form onSubmit={submit} noValidate>
          {errors.form ? <Alert>{errors.form}</Alert> : null}
          <PasswordField
            isNew
            label="New password"
            hint="At least 10 characters."
            value={password}
            onChange={setPassword}
            error={errors.password}
          />
          <button type="submit" disabled={busy}>
            {busy ? 'Saving…' : 'Save the new password'}
          </button>
        </form>
      )}
    </AuthCard>
  );
}

function EmailField(props: { value: string; onChange: (value: string) => void; error: string | undefined }) {
  return (
    <Field label="Email" error={props.error}>
      {(a) => (
        <input
          {...a}
          type="email"
          name="email"
          autoComplete="email"
          value={props.value}
          onChange={(e) => props.onChange(e.target.value)}
        />
      )}
    </Field>
  );
}

/** A password input: the account's current password, or (isNew) a new one the browser may suggest. */
function PasswordField(props: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  error: string | undefined;
  hint?: string;
  isNew?: boolean;
}) {
  return (
    <Field label={props.label} error={props.error} hint={props.hint}>
      {(a) => (
        <input
          {...a}
          type="password"
          name={props.isNew ? 'new-password' : 'password'}
          autoComplete={props.isNew ? 'new-password' : 'current-password'}
          value={props.value}
          onChange={(e) => props.onChange(e.target.value)}
        />
      )}
    </Field>
  );
}
