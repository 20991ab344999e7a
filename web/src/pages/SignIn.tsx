import { useState } from 'react';
import { Navigate, useLocation } from 'react-router';
import { signinStart } from '../api.ts';
import { ErrorNote } from '../components/ui.tsx';
import { useAction } from '../components/use-api.ts';
import { useSession } from '../session.tsx';

/**
 * Sign in through the organization's identity provider (docs/sign-in.md), or paste an API key (the
 * one `orgmem serve` printed, or any `mv_` key): a single-user install, or an organization with no
 * provider configured.
 */
export function SignIn() {
  const { me } = useSession();
  const { search } = useLocation();
  // The connector OAuth callback lands on `/` with ?connection= or ?oauth_error=: that news belongs on the connections page.
  const fromOAuth = /[?&](connection|oauth_error)=/.test(search);
  if (me) return <Navigate to={fromOAuth ? `/connections${search}` : '/collections'} replace />;
  return (
    <main className="signin">
      <h1>orgmem</h1>
      <p>What your agents remember, in one place.</p>
      <OrgSignInForm returnTo="/collections" />
      <p className="muted">Or paste an API key:</p>
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

/**
 * "Sign in with your organization": a work e-mail (which finds the organization) or the
 * organization's id starts the sign-in at its provider, which comes back to `returnTo`. A refused
 * sign-in comes back to the sign-in page with its reason (`signin_error`), shown here.
 */
export function OrgSignInForm({ returnTo }: { returnTo: string }) {
  const [who, setWho] = useState('');
  const refused = new URLSearchParams(useLocation().search).get('signin_error');
  return (
    <>
      {/* The button says "Continue": "Sign in" is the key form's, which tests and people find by that name. */}
      <h2 style={{ fontSize: '1rem', margin: '0.5rem 0 0' }}>Sign in with your organization</h2>
      <form
        className="signin-form"
        aria-label="Sign in with your organization"
        onSubmit={(e) => {
          e.preventDefault();
          window.location.assign(signinStart(who.trim(), returnTo));
        }}
      >
        <label htmlFor="org-who">Work e-mail or organization id</label>
        <input id="org-who" type="text" autoComplete="email" placeholder="you@company.com" value={who} onChange={(e) => setWho(e.target.value)} required />
        <button type="submit" className="primary" disabled={!who.trim()}>
          Continue with your organization
        </button>
      </form>
      {refused && (
        <p className="error" role="alert">
          Sign-in refused: {refused}
        </p>
      )}
    </>
  );
}
