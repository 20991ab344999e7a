import { useEffect, useState } from 'react';
import { rpc, type ApiInput } from '../api.ts';
import { useSession } from '../session.tsx';
import { SettingFacts } from './SettingFacts.tsx';
import { Busy, ConfirmButton, ErrorNote } from './ui.tsx';
import { useAction, useApi } from './use-api.ts';

type Role = ApiInput['identity']['putConfig']['default_role'];

/** A list typed one a line or separated by commas. */
const listOf = (text: string) =>
  text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * The organization's OpenID Connect provider (docs/sign-in.md): where its people sign in, and who
 * may be made a member at a first sign-in. Admins only: the service answers 403 to anyone else,
 * so the section is not shown to them. The client secret is written, never read back.
 */
export function SettingIdentity() {
  const { canAdmin } = useSession();
  return canAdmin ? <IdentityForm /> : null;
}

function IdentityForm() {
  const { me } = useSession();
  const config = useApi(() => rpc.identity.getConfig.query(), []);
  const [issuer, setIssuer] = useState('');
  const [clientId, setClientId] = useState('');
  const [secret, setSecret] = useState('');
  const [domains, setDomains] = useState('');
  const [groups, setGroups] = useState('');
  const [role, setRole] = useState<Role>('member');
  const { busy, error, run } = useAction();
  const c = config.data;

  useEffect(() => {
    if (!c?.configured) return;
    setIssuer(c.issuer ?? '');
    setClientId(c.client_id ?? '');
    setDomains(c.allowed_domains.join('\n'));
    setGroups(c.allowed_groups.join('\n'));
    setRole(c.default_role);
  }, [c]);

  async function save() {
    const saved = await run(() =>
      rpc.identity.putConfig.mutate({
        issuer: issuer.trim(),
        client_id: clientId.trim(),
        ...(secret && { client_secret: secret }),
        allowed_domains: listOf(domains),
        allowed_groups: listOf(groups),
        default_role: role,
      }),
    );
    if (!saved) return;
    setSecret('');
    config.reload();
  }

  async function remove() {
    if (await run(() => rpc.identity.deleteConfig.mutate({}).then(() => true))) config.reload();
  }

  return (
    <section className="card" aria-labelledby="identity-title">
      <h2 id="identity-title">Identity provider</h2>
      <p className="muted">
        People sign in to the dashboard, and approve MCP clients, through your organization's OpenID Connect provider. Its redirect URI is{' '}
        <code className="wrap">{`${window.location.origin}/v1/auth/oidc/callback`}</code>.
      </p>
      <ErrorNote error={config.error} />
      {config.loading && !c && <Busy label="Loading…" />}
      {c && (
        <SettingFacts
          items={[
            ['Provider', c.configured ? c.issuer : 'None: people sign in with API keys'],
            c.configured && ['Client secret', c.client_secret_set ? 'Set' : 'None (a public client)'],
            // What people type to sign in when no allowed domain finds the organization for them.
            c.configured && ['Organization id', <code key="id">{me!.id}</code>],
          ]}
        />
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <div className="field">
          <label htmlFor="identity-issuer">Issuer URL</label>
          <input
            id="identity-issuer"
            type="url"
            placeholder="https://accounts.google.com"
            value={issuer}
            onChange={(e) => setIssuer(e.target.value)}
            required
          />
        </div>
        <div className="field">
          <label htmlFor="identity-client-id">Client id</label>
          <input id="identity-client-id" value={clientId} onChange={(e) => setClientId(e.target.value)} required />
        </div>
        <div className="field">
          <label htmlFor="identity-secret">Client secret</label>
          <input
            id="identity-secret"
            type="password"
            autoComplete="off"
            placeholder={c?.client_secret_set ? 'Stored: leave empty to keep it' : ''}
            value={secret}
            onChange={(e) => setSecret(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="identity-domains">Allowed e-mail domains (one a line)</label>
          <textarea id="identity-domains" rows={2} value={domains} onChange={(e) => setDomains(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="identity-groups">Allowed groups (one a line)</label>
          <textarea id="identity-groups" rows={2} value={groups} onChange={(e) => setGroups(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="identity-role">Role of a new member</label>
          <select id="identity-role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
            <option value="member">member</option>
            <option value="viewer">viewer</option>
            <option value="admin">admin</option>
          </select>
        </div>
        <div className="row">
          <button type="submit" className="primary" disabled={busy}>
            Save provider
          </button>
          {c?.configured && (
            <ConfirmButton label="Remove provider" title="Remove the identity provider?" onConfirm={remove} disabled={busy}>
              <p>Nobody signs in through it any more; sessions already open run to their end.</p>
            </ConfirmButton>
          )}
        </div>
      </form>
      {busy && <Busy label="Checking the provider…" />}
      <ErrorNote error={error} />
    </section>
  );
}
