import { NavLink } from 'react-router';

/** People and Teams share one menu entry (the menu must fit one line at 1280 px): tabs between them. */
export function PeopleTabs() {
  return (
    <nav className="tabs" aria-label="People and teams">
      <NavLink to="/people" end>
        People
      </NavLink>
      <NavLink to="/teams" end>
        Teams
      </NavLink>
    </nav>
  );
}
