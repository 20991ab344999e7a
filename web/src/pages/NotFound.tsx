import { Link, useLocation } from 'react-router';

/** An address the dashboard has no page for: shown in the signed-in frame, so the navigation stays. */
export function NotFound() {
  const { pathname } = useLocation();
  return (
    <>
      <h1>No such page</h1>
      <p>
        The dashboard has no page at <code style={{ overflowWrap: 'anywhere' }}>{pathname}</code>.
      </p>
      <p>
        <Link to="/collections">Back to your collections</Link>
      </p>
    </>
  );
}
