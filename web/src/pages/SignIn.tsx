import { useState } from 'react';
import { Navigate, useLocation } from 'react-router';
import { ErrorNote } from '../components/ui.tsx';
import { useAction } from '../components/use-api.ts';
import { useSession } from '../session.tsx';

/** Paste an API key (the one `orgmem serve` printed, or any `mv_` key). */
export function SignIn() {
  const { me } = useSession();
  const { search } = useLocation();
  // The connector OAuth callback lands on `/` with ?connection= or ?oauth_error=: that news belongs on the connections page.
  const fromOAuth = /[?&](connection|oauth_error)=/.test(search);
  if (me) return <Navigate to={fromOAuth ? `/connections${search}` : '/collections'} replace />;
  return (
    <main className="signin">
      <h1>orgmem</h1>
      <p>What your agents remember, in one place. Paste an API key to sign in.</p>
      <SignInForm />
      <p className="muted">
        The key stays in this tab's session storage and is sent only to this server. <a href="/status">Service status</a>
      </p>
    </main>
  );
}

/** The key field and its button; the page it is on stays once signed in (the consent page shows the request then). */
export function SignInForm() {
  const { signIn } = useSession();
  const [key, setKey] = useState('');
  const { busy, error, run } = useAction();
  return (
    <>
      <form
        className="signin-form"
        onSubmit={(e) => {
          e.preventDefault();
          void run(() => signIn(key.trim()));
        }}
      >
        <label htmlFor="api-key">API key</label>
        <input id="api-key" type="password" autoComplete="off" placeholder="mv_…" value={key} onChange={(e) => setKey(e.target.value)} required />
        <button type="submit" className="primary" disabled={busy || !key.trim()}>
          Sign in
        </button>
      </form>
      <ErrorNote error={error} />
    </>
  );
}
