import { useParams } from 'react-router';
import { CollectionNav } from '../components/CollectionNav.tsx';
import { HygieneDedup } from '../components/HygieneDedup.tsx';
import { HygieneForget } from '../components/HygieneForget.tsx';
import { HygieneStale } from '../components/HygieneStale.tsx';
import { useSession } from '../session.tsx';

/**
 * Cleaning a collection up: each action shows its dry run first and runs only after a
 * confirmation. A read-only key sees the dry runs (the service allows them) and no run buttons.
 */
export function Hygiene() {
  const { name = '' } = useParams();
  const { canWrite } = useSession();
  return (
    <>
      <CollectionNav name={name} />
      {!canWrite && <p className="muted">This key is read-only: it can see what each action would change, but not run it.</p>}
      <div style={{ display: 'grid', gap: '1rem' }}>
        <HygieneDedup collection={name} />
        <HygieneStale collection={name} />
        <HygieneForget collection={name} />
      </div>
    </>
  );
}
