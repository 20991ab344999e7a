import { useSearchParams } from 'react-router';
import { api, rpc, seg, type ApiOutput } from '../api.ts';
import { SearchForm, searchBody, searchStateFromUrl, searchStateToUrl } from '../components/SearchForm.tsx';
import { SearchResultList, type SearchRun } from '../components/SearchResults.tsx';
import { Busy, ErrorNote } from '../components/ui.tsx';
import { useApi } from '../components/use-api.ts';

/**
 * The search playground: every field of the search request, over all collections (POST
 * /v1/memory/search) or one (POST C/search), with the server's timing figures. It shows the REST
 * request it sent, as a client would send it. The request is kept in the page address, so each
 * search is a page of its own.
 */
export function Search() {
  const [params, setParams] = useSearchParams();
  const address = params.toString();
  const state = searchStateFromUrl(params);
  const collections = useApi(() => rpc.collections.list.query(), []);

  const run = useApi<SearchRun | null>(async () => {
    if (!state.q) return null;
    const body = searchBody(state);
    const path = state.collection ? `/v1/memory/collections/${seg(state.collection)}/search` : '/v1/memory/search';
    const started = performance.now();
    const response = await api<ApiOutput['search']['all']>('POST', path, { body });
    return { state, method: 'POST', path, body, response, roundTripMs: performance.now() - started };
  }, [address]);

  // The same search again is sent again (it shows the cache at work) rather than ignored.
  const search = (s: ReturnType<typeof searchStateFromUrl>) => {
    const next = searchStateToUrl(s);
    if (next.toString() === address) run.reload();
    else setParams(next);
  };

  return (
    <>
      <h1>Search</h1>
      <ErrorNote error={collections.error} />
      {/* Keyed by the address: walking back through searches puts each one's fields back in the form. */}
      <SearchForm key={address} initial={state} collections={(collections.data ?? []).map((c) => c.name)} onSearch={search} />
      {state.q && run.loading && <Busy label="Searching…" />}
      <ErrorNote error={state.q ? run.error : null} />
      {state.q && !run.loading && !run.error && run.data && <SearchResultList run={run.data} />}
    </>
  );
}
