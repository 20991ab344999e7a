import { useSearchParams } from 'react-router';
import { rpc } from '../api.ts';
import { ConnectionCard } from '../components/ConnectionCard.tsx';
import { ConnectionCreateForm } from '../components/ConnectionCreateForm.tsx';
import { useConnectionProviders } from '../components/ConnectionProviders.ts';
import { Busy, ErrorNote } from '../components/ui.tsx';
import { useApi } from '../components/use-api.ts';
import { useSession } from '../session.tsx';

/** Providers synced into collections: connect one, sync it, read its runs, remove it. */
export function Connections() {
  const { canWrite } = useSession();
  const list = useApi(() => rpc.connections.list.query(), []);
  const labels = useConnectionProviders().data?.map((p) => p.label);
  return (
    <>
      <h1>Connections</h1>
      <ConnectionOAuthReturn />
      <p className="muted">A connection reads one provider{labels && ` (${labels.join(', ')})`} into one collection, then again every hour by default.</p>
      {canWrite && <ConnectionCreateForm onCreated={list.reload} />}
      <h2>Your connections</h2>
      <ErrorNote error={list.error} />
      {list.loading && !list.data && <Busy label="Loading connections…" />}
      {list.data?.length === 0 && <p className="muted">No connections yet.</p>}
      {list.data?.map((c) => (
        <ConnectionCard key={c.id} c={c} onChanged={list.reload} />
      ))}
    </>
  );
}

/**
 * After an OAuth consent the service sends the browser to the dashboard with `?connection=<id>`
 * or `?oauth_error=<reason>` (to /connections when the operator sets ORGMEM_DASHBOARD_URL so).
 */
function ConnectionOAuthReturn() {
  const [params] = useSearchParams();
  const id = params.get('connection');
  const error = params.get('oauth_error');
  const provider = params.get('provider');
  if (error)
    return (
      <p className="error" role="alert">
        Connecting {provider ?? 'the provider'} with OAuth did not complete: {error}
      </p>
    );
  if (id)
    return (
      <p className="ok" role="status">
        Connected {provider ?? ''} with OAuth: the new connection ({id}) is listed below; its first sync runs within a minute.
      </p>
    );
  return null;
}
