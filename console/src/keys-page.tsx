import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { type ApiKey, api, type CreatedKey, isApiError } from './api.ts';
import { Alert, CopyButton, Dialog, Field, formatDate, Link, navigate, PageHeading, useLocation } from './ui.tsx';

export const KEY_LIMIT = 3;

export function KeysPage() {
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [nameError, setNameError] = useState<string | undefined>();
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const landing = useLocation().query.get('verified');
  const verifiedLanding = landing === '1' || landing === 'again';
  const [notice, setNotice] = useState<string | null>(() =>
    verifiedLanding
      ? `${landing === 'again' ? 'This verification link was already used (a link works once). ' : ''}Your email is verified and you are signed in. Create a key to call the API.`
      : null,
  );

  // The landing notice is shown once: the address loses ?verified, so a reload does not repeat it.
  useEffect(() => {
    if (verifiedLanding) navigate('/keys', { replace: true });
  }, [verifiedLanding]);

  const load = useCallback(async () => {
    try {
      const { data } = await api<{ data: ApiKey[] }>('/control/v1/keys');
      setKeys(data);
      setLoadError(null);
    } catch (err) {
      setLoadError(isApiError(err) ? err.message : 'could not load the keys');
    }
  }, []);

  useEffect(() => {
    void load();
  }, [load]);

  const atLimit = keys !== null && keys.length >= KEY_LIMIT;

  async function create(e: FormEvent) {
    e.preventDefault();
    if (!name.trim()) {
      setNameError('Give the key a name, such as the app that will use it.');
      return;
    }
    setBusy(true);
    setNameError(undefined);
    setFormError(null);
    setNotice(null);
    try {
      const key = await api<CreatedKey>('/control/v1/keys', { body: { name: name.trim() } });
      setCreated(key);
      setName('');
      await load();
    } catch (err) {
      if (isApiError(err) && err.field === 'name') setNameError(err.message.replace(/^[a-z.]+: /, ''));
      else setFormError(isApiError(err) ? err.message : 'could not create the key');
      await load();
    } finally {
      setBusy(false);
    }
  }

  async function revoke(key: ApiKey) {
    try {
      await api(`/control/v1/keys/${encodeURIComponent(key.id)}`, { method: 'DELETE' });
      setNotice(`Key “${key.name}” (${key.prefix}…) is revoked; requests with it now fail.`);
    } catch (err) {
      setFormError(isApiError(err) ? err.message : 'could not revoke the key');
    } finally {
      setRevoking(null);
      await load();
    }
  }

  return (
    <section>
      <PageHeading title="API keys">
        <p className="lead">
          Keys authenticate calls to <code>/v1/systemone</code> with <code>Authorization: Bearer …</code>. An account
          has at most {KEY_LIMIT} active keys.
        </p>
      </PageHeading>
      {notice ? <Alert kind="success">{notice}</Alert> : null}
      {formError ? <Alert>{formError}</Alert> : null}
      {loadError ? <Alert>{loadError}</Alert> : null}

      {atLimit ? (
        <Alert kind="info">
          You have {KEY_LIMIT} active keys, the limit per account. Revoke one you no longer use to create another.
        </Alert>
      ) : (
        <form className="inline-form" onSubmit={create} noValidate aria-label="Create an API key">
          <Field label="Key name" error={nameError} hint="Only you see it: name the app or environment.">
            {(a) => (
              <input {...a} name="key-name" value={name} maxLength={100} onChange={(e) => setName(e.target.value)} />
            )}
          </Field>
          <button type="submit" disabled={busy || keys === null}>
            {busy ? 'Creating…' : 'Create key'}
          </button>
        </form>
      )}

      {keys === null && !loadError ? <p aria-busy="true">Loading keys…</p> : null}
      {keys !== null && keys.length === 0 ? (
        <div className="empty">
          <p>
            No keys yet. Create one above, or try the model first in the <Link to="/playground">playground</Link>.
          </p>
        </div>
      ) : null}
      {keys !== null && keys.length > 0 ? (
        <div className="table-wrap">
          <table className="keys-table">
            <caption className="sr-only">Active API keys</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col" className="wide-only">
                  Key
                </th>
                <th scope="col" className="wide-only">
                  Created
                </th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
                <tr key={k.id}>
                  <td className="key-name">
                    {k.name}
                    {/* On a phone the Key and Created columns fold in here, so that Revoke stays on screen. */}
                    <span className="narrow-only muted">
                      <code>{k.prefix}…</code> · created {formatDate(k.created_at)}
                    </span>
                  </td>
                  <td className="wide-only">
                    <code>{k.prefix}…</code>
                  </td>
                  <td className="wide-only">{formatDate(k.created_at)}</td>
                  <td>{formatDate(k.last_used_at)}</td>
                  <td className="actions">
                    <button
                      type="button"
                      className="danger"
                      onClick={() => setRevoking(k)}
                      aria-label={`Revoke key ${k.name}`}
                    >
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}

      <Dialog open={created !== null} title="Your new API key" onClose={() => setCreated(null)}>
        {created ? (
          <>
            <Alert kind="info">
              Copy it now: this is the only time it is shown. Brier stores only a hash and cannot show it again.
            </Alert>
            <label htmlFor="new-key-value" className="sr-only">
              API key value
            </label>
            <input
              id="new-key-value"
              className="key-value"
              readOnly
              value={created.key}
              onFocus={(e) => e.target.select()}
            />
            <div className="dialog-actions">
              <CopyButton text={created.key} label="Copy key" />
              <button type="button" onClick={() => setCreated(null)}>
                I have copied it
              </button>
            </div>
          </>
        ) : null}
      </Dialog>

      <Dialog open={revoking !== null} title="Revoke this key?" onClose={() => setRevoking(null)}>
        {revoking ? (
          <>
            <p>
              Requests with <strong>{revoking.name}</strong> (<code>{revoking.prefix}…</code>) will fail at once. This
              cannot be undone.
            </p>
            <div className="dialog-actions">
              <button type="button" className="secondary" onClick={() => setRevoking(null)}>
                Cancel
              </button>
              <button type="button" className="danger" onClick={() => revoke(revoking)}>
                Revoke key
              </button>
            </div>
          </>
        ) : null}
      </Dialog>
    </section>
  );
}
