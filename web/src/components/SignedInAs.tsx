import type { ApiOutput } from '../api.ts';

/**
 * Who the dashboard is signed in as: the account (the tenant, with its email as the name's title,
 * or written out with `withEmail`) and the key's label, marked when it is read-only or an agent
 * key. The frame's header and the OAuth consent page show it.
 */
export function SignedInAs({ me, withEmail = false }: { me: ApiOutput['admin']['me']; withEmail?: boolean }) {
  return (
    <>
      <span title={me.email}>{me.name}</span>
      {withEmail && <span className="muted"> ({me.email})</span>} · <span>{me.key.label}</span>
      {me.key.read_only && <span className="badge">read-only</span>}
      {me.key.role === 'agent' && <span className="badge">agent key</span>}
    </>
  );
}
