import { NavLink } from 'react-router';
import { seg } from '../api.ts';
import { useSession } from '../session.tsx';

/** The tabs of one collection's pages. */
export function CollectionNav({ name }: { name: string }) {
  const { canWrite } = useSession();
  const base = `/collections/${seg(name)}`;
  const tabs: Array<[string, string, boolean]> = [
    [base, 'Memories', true],
    [`${base}/remember`, 'Remember', canWrite],
    [`${base}/health`, 'Health & reports', true],
    [`${base}/hygiene`, 'Hygiene', true],
    [`${base}/grants`, 'Grants', true],
  ];
  return (
    <>
      <h1>{name}</h1>
      <nav className="tabs" aria-label={`Collection ${name}`}>
        {tabs
          .filter(([, , shown]) => shown)
          .map(([to, label]) => (
            <NavLink key={to} to={to} end>
              {label}
            </NavLink>
          ))}
      </nav>
    </>
  );
}
