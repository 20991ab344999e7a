import { Link, useNavigate } from 'react-router';
import { rpc, seg } from '../api.ts';
import { CollectionCreateForm } from '../components/CollectionCreateForm.tsx';
import { ScopeBadge } from '../components/ScopeBadge.tsx';
import { Busy, ErrorNote, memories, when } from '../components/ui.tsx';
import { useApi } from '../components/use-api.ts';
import { useSession } from '../session.tsx';

/**
 * The collections the key can read (the list answers no others), each a card whose one action is
 * its link, with its counts; writing keys create them here and delete one on its own page.
 */
export function Collections() {
  const { canWrite } = useSession();
  const navigate = useNavigate();
  const list = useApi(() => rpc.collections.list.query(), []);
  // The scope badges name a team collection's teams and a personal one's owner.
  const teams = useApi(() => rpc.teams.list.query({}), []);
  const people = useApi(() => rpc.people.list.query({}), []);

  return (
    <>
      <h1>Collections</h1>
      <ErrorNote error={list.error} />
      {list.loading && <Busy label="Loading collections…" />}
      {list.data?.length === 0 && (
        <p className="muted">
          No collections yet.{canWrite && ' Create one below, or store a memory through the API: its collection is created on first write.'}
        </p>
      )}
      <ul aria-label="Collections" className="grid" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
        {list.data?.map((c) => (
          <li key={c.name} className="card">
            <h2 style={{ margin: '0 0 0.3rem', fontSize: '1.05rem', wordBreak: 'break-word' }}>
              <Link to={`/collections/${seg(c.name)}`}>{c.name}</Link>
              {c.restricted && (
                <span className="badge warn" title="Only granted keys can read or write it">
                  restricted
                </span>
              )}
              <ScopeBadge collection={c} people={people.data} teams={teams.data} />
            </h2>
            {/* The count its list shows; the archived ones, which that list hides, apart. */}
            <p style={{ margin: '0 0 0.3rem' }}>
              <strong>{memories(c.memory_count)}</strong>
              {c.archived_count > 0 && <span className="muted"> · {c.archived_count.toLocaleString()} archived</span>}
            </p>
            {c.description && <p style={{ margin: '0 0 0.3rem' }}>{c.description}</p>}
            <p className="muted" style={{ margin: 0, fontSize: '0.85rem' }}>
              Updated {when(c.updated_at)}
            </p>
          </li>
        ))}
      </ul>
      {canWrite && <CollectionCreateForm teams={teams.data ?? []} onCreated={(name) => navigate(`/collections/${seg(name)}`)} />}
    </>
  );
}
