import { Link, useSearchParams } from 'react-router';
import { rpc } from '../api.ts';
import { LedgerEntries } from '../components/LedgerEntries.tsx';
import { LedgerFilterForm, ledgerFiltersFromUrl, ledgerFiltersToUrl } from '../components/LedgerFilterForm.tsx';
import { ErrorNote } from '../components/ui.tsx';
import { useApi } from '../components/use-api.ts';

/**
 * The influence ledger (docs/trust.md): what memories were handed to which agent, through which
 * front end, in which session, newest first. Under Usage, as the audit log is: it is a record of
 * use, read with an admin key (the service answers any other with its refusal, shown as it is).
 */
export function Ledger() {
  const [params, setParams] = useSearchParams();
  const address = params.toString();
  const filters = ledgerFiltersFromUrl(params);
  const keys = useApi(() => rpc.keys.list.query(), []);

  return (
    <>
      <nav aria-label="Breadcrumb" className="muted" style={{ marginBottom: '0.3rem' }}>
        <Link to="/usage">Usage</Link> / ledger
      </nav>
      <h1>Ledger</h1>
      <p className="muted">
        Every time memories are handed to an agent (search, context, reads by id, lists, and through them the proxies, hooks and MCP), one entry records which,
        with the text as it was then and what each memory is now. An entry shows within seconds and is kept 30 days unless the service is set to keep them
        longer or shorter.
      </p>
      <ErrorNote error={keys.error} />
      {/* Keyed by the address: walking back through filters puts each one's fields back in the form. */}
      <LedgerFilterForm key={`form/${address}`} initial={filters} keys={keys.data ?? []} onFilter={(f) => setParams(ledgerFiltersToUrl(f))} />
      <LedgerEntries key={address} filters={filters} />
    </>
  );
}
