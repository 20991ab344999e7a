import { Suspense, useEffect, useRef } from 'react';
import { NavLink, Outlet, useLocation, useNavigate } from 'react-router';
import { useSession } from '../session.tsx';

const LINKS: Array<[string, string, (admin: boolean) => boolean]> = [
  ['/collections', 'Collections', () => true],
  ['/search', 'Search', () => true],
  ['/files', 'Files', () => true],
  ['/connections', 'Connections', () => true],
  ['/keys', 'Keys & agents', () => true],
  ['/settings', 'Settings', () => true],
  ['/usage', 'Usage', () => true],
  ['/operator', 'Operator', (admin) => admin],
];

/** The signed-in frame: the navigation, who is signed in with which key, and the page. */
export function Layout() {
  const { me, signOut } = useSession();
  const navigate = useNavigate();
  const nav = useRef<HTMLElement>(null);
  const { pathname } = useLocation();
  // On a phone the navigation is one row that scrolls sideways (styles.css): the current page's link is brought into sight.
  useEffect(() => {
    const row = nav.current;
    const active = row?.querySelector<HTMLElement>('a.active');
    if (!row || !active) return;
    row.scrollLeft += active.getBoundingClientRect().left - row.getBoundingClientRect().left - (row.clientWidth - active.offsetWidth) / 2;
  }, [pathname]);
  return (
    <div className="layout">
      <header>
        <a className="brand" href="/collections">
          orgmem
        </a>
        <nav aria-label="Main" ref={nav}>
          {LINKS.filter(([, , show]) => show(!!me?.is_admin)).map(([to, label]) => (
            <NavLink key={to} to={to}>
              {label}
            </NavLink>
          ))}
          <NavLink to="/status">Status</NavLink>
        </nav>
        <div className="who">
          <span title={me?.email}>{me?.name}</span> · <span>{me?.key.label}</span>
          {me?.key.read_only && <span className="badge">read-only</span>}
          {me?.key.role === 'agent' && <span className="badge">agent key</span>}
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
