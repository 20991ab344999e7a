import { OperatorConnectors } from '../components/OperatorConnectors.tsx';
import { OperatorMetrics } from '../components/OperatorMetrics.tsx';
import { useSession } from '../session.tsx';

/** The operator's view across tenants (aggregates only); for admin tenants. */
export function Operator() {
  const { me } = useSession();
  if (!me?.is_admin)
    return (
      <>
        <h1>Operator</h1>
        <p className="muted">The operator view is for admin tenants; this key's tenant is not one.</p>
      </>
    );
  return (
    <>
      <h1>Operator</h1>
      <p className="muted">Across all tenants, with no tenant content.</p>
      <OperatorConnectors />
      <OperatorMetrics />
    </>
  );
}
