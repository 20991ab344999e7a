import { useState } from 'react';
import { Navigate } from 'react-router';
import { ErrorNote } from '../components/ui.tsx';
import { useAction } from '../components/use-api.ts';
import { useSession } from '../session.tsx';

/** Paste an API key (the one `orgmem serve` printed, or any `mv_` key). */
export function SignIn() {
  const { me, signIn } = useSession();
  const [key, setKey] = useState('');
  const { busy, error, run } = useAction();
  if (me) return <Navigate to="/collections" replace />;
  return (
    <main className="signin">
      <h1>orgmem</h1>
      <p>What your agents remember, in one place. Paste an API key to sign in.</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run(() => signIn(key.trim()));
        }}
      >
        <label htmlFor="api-key">API key</label>
        <input id="api-key" type="password" autoComplete="off" placeholder="mv_…" value={key} onChange={(e) => setKey(e.target.value)} required />
        <button type="submit" disabled={busy || !key.trim()}>
          Sign in
        </button>
      </form>
      <ErrorNote error={error} />
      <p className="muted">
        The key stays in this tab's session storage and is sent only to this server. <a href="/status">Service status</a>
      </p>
    </main>
  );
}
