import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { rpc } from '../api.ts';
import { SignedInAs } from '../components/SignedInAs.tsx';
import { Busy, ErrorNote } from '../components/ui.tsx';
import { useAction, useApi } from '../components/use-api.ts';
import { useSession } from '../session.tsx';
import { OrgSignInForm, SignInForm } from './SignIn.tsx';

/** What each scope lets the client do, as the person deciding reads it. */
const SCOPE_TEXT: Record<string, string> = {
  'memory:read': 'search and read your memories',
  'memory:write': 'store, change and delete memories',
};

/**
 * The consent page of orgmem's OAuth server (docs/mcp.md, "Remote MCP with OAuth"): an MCP client
 * (claude.ai, ChatGPT...) sent the browser here. Signed in (through the organization, or with a key), the user sees who asks,
 * where the answer goes and what for, and which account and key would approve, and approves
 * (read-only or read-write) or denies. Outside the signed-in frame: it is a step of another app's flow.
 */
export function OAuthConsent() {
  const { me } = useSession();
  const request = useSearchParams()[0].get('request') ?? '';
  return (
    <div className="layout">
      <header>
        <span className="brand">orgmem</span>
      </header>
      <main className="consent">
        <h1>Authorize an application</h1>
        {me ? (
          <Decision request={request} />
        ) : (
          <section className="card">
            <p style={{ marginTop: 0 }}>An application asks to use your memories. Sign in to see what it asks and decide.</p>
            <OrgSignInForm returnTo={`/oauth/consent?request=${encodeURIComponent(request)}`} />
            <p className="muted">Or paste an API key:</p>
            <SignInForm />
          </section>
        )}
      </main>
    </div>
  );
}

function Decision({ request }: { request: string }) {
  const { me, person, canAdmin, signOut } = useSession();
  const ask = useApi(() => rpc.oauth.consent.query({ request }), [request]);
  const collections = useApi(() => rpc.collections.list.query(), []);
  const [readWrite, setReadWrite] = useState(false);
  // null: every collection its grants allow; else only those ticked.
  const [only, setOnly] = useState<string[] | null>(null);
  const { busy, error, run } = useAction();
  const decide = (approve: boolean) =>
    void run(async () => {
      const { redirect_to } = await rpc.oauth.decide.mutate({ request, approve, read_write: readWrite, ...(only && { collections: only }) });
      window.location.assign(redirect_to);
    });
  // The account deciding, and a way to decide with another key (the page stays, signed out).
  const account = (
    <div className="consent-account row" role="group" aria-label="Signed in as">
      <span>
        <span className="muted">Signed in as </span>
        {person ? (
          <span>
            {person.name || person.email} <span className="muted">({person.email})</span> · {me!.name}
          </span>
        ) : (
          <SignedInAs me={me!} withEmail />
        )}
      </span>
      <button type="button" onClick={signOut}>
        {person ? 'Sign out' : 'Use another key'}
      </button>
    </div>
  );
  if (ask.loading && !ask.data) return <Busy label="Loading the request…" />;
  if (!ask.data)
    return (
      <>
        {account}
        <ErrorNote error={ask.error} />
      </>
    );
  const { client_name, redirect_host, scopes } = ask.data;
  const canWriteScope = scopes.includes('memory:write');
  return (
    <section aria-labelledby="consent-title" className="card">
      {account}
      <h2 id="consent-title">{client_name} wants to use your memories</h2>
      <p>
        It will be sent back to <strong>{redirect_host}</strong>. It asks to {scopes.map((s) => SCOPE_TEXT[s] ?? s).join(' and ')}.
      </p>
      <p className="muted">
        Approved, it becomes an agent of this account, listed under Keys &amp; agents: collection grants apply to it, its writes carry its name, and revoking it
        there ends its access at once.
      </p>
      {canAdmin ? (
        <>
          <fieldset>
            <legend>Access</legend>
            <label className="check">
              <input type="radio" name="access" checked={!readWrite} onChange={() => setReadWrite(false)} /> Read-only
            </label>
            {canWriteScope && (
              <label className="check">
                <input type="radio" name="access" checked={readWrite} onChange={() => setReadWrite(true)} /> Read and write
              </label>
            )}
          </fieldset>
          <fieldset>
            <legend>Collections</legend>
            <label className="check">
              <input type="radio" name="collections" checked={only === null} onChange={() => setOnly(null)} /> All collections (as its grants allow)
            </label>
            <label className="check">
              <input type="radio" name="collections" checked={only !== null} onChange={() => setOnly([])} /> Only these:
            </label>
            {only !== null &&
              (collections.data ?? []).map((c) => (
                <label key={c.name} className="check" style={{ marginLeft: '1.5rem' }}>
                  <input
                    type="checkbox"
                    checked={only.includes(c.name)}
                    onChange={(e) => setOnly(e.target.checked ? [...only, c.name] : only.filter((n) => n !== c.name))}
                  />{' '}
                  {c.name}
                </label>
              ))}
            <ErrorNote error={collections.error} />
          </fieldset>
          <div className="row">
            <button type="button" className="primary" disabled={busy || only?.length === 0} onClick={() => decide(true)}>
              Approve
            </button>
            <button type="button" disabled={busy} onClick={() => decide(false)}>
              Deny
            </button>
          </div>
        </>
      ) : (
        <p>Approving makes an agent of this account: use an admin key of this account to decide.</p>
      )}
      {busy && <Busy label="Sending your answer…" />}
      <ErrorNote error={error} />
    </section>
  );
}
