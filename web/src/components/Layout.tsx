import { Suspense, useEffect, useState } from 'react';
import { NavLink, Outlet, useLocation, useNavigate } from 'react-router';
import { useSession } from '../session.tsx';
import { SignedInAs } from './SignedInAs.tsx';

const LINKS: Array<[string, string, (admin: boolean) => boolean]> = [
  ['/collections', 'Collections', () => true],
  ['/search', 'Search', () => true],
  ['/review', 'Review', () => true],
  ['/files', 'Files', () => true],
  ['/connections', 'Connections', () => true],
  ['/keys', 'Keys & agents', () => true],
  // Everyone reads the tenant's people and teams; only an admin's page has controls (pages/People.tsx).
  ['/people', 'People', () => true],
  ['/settings', 'Settings', () => true],
  ['/usage', 'Usage', () => true],
  ['/operator', 'Operator', (admin) => admin],
];

/** The signed-in frame: the navigation, who is signed in with which key, and the page. */
export function Layout() {
  const { me, signOut } = useSession();
  const navigate = useNavigate();
  const { pathname } = useLocation();
  // On a phone the links are folded under the Menu button (styles.css); opening a page folds them again.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [pathname]);
  return (
    <div className="layout">
      <header>
        <a className="brand" href="/collections">
          orgmem
        </a>
        <button type="button" className="menu-button" aria-expanded={menuOpen} aria-controls="main-nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <nav id="main-nav" aria-label="Main" className={menuOpen ? 'main-nav open' : 'main-nav'}>
          {LINKS.filter(([, , show]) => show(!!me?.is_admin)).map(([to, label]) => (
            <NavLink key={to} to={to}>
              {label}
            </NavLink>
          ))}
          <NavLink to="/status">Status</NavLink>
        </nav>
        <div className="who">
          {me && <SignedInAs me={me} />}
          <button
            type="button"
            onClick={() => {
              signOut();
              navigate('/');
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      <main>
        {/* A view's chunk loads under the navigation, which stays in place. */}
        <Suspense fallback={<p className="muted">Loading…</p>}>
          <Outlet />
        </Suspense>
      </main>
    </div>
  );
}
