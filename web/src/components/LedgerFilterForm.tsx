import { useState, type FormEvent } from 'react';
import { ApiError, type ApiInput } from '../api.ts';
import type { AccountKey } from './KeyTypes.ts';

/** The ledger's filters as the form and the page address hold them (strings, as typed). */
export interface LedgerFilters {
  agent_id: string;
  session_id: string;
  memory_id: string;
  /** Moments in the reader's local time (datetime-local), or ''. */
  from: string;
  to: string;
}

const NO_FILTERS: LedgerFilters = { agent_id: '', session_id: '', memory_id: '', from: '', to: '' };
const FIELDS = Object.keys(NO_FILTERS) as Array<keyof LedgerFilters>;

/** The filters live in the page address, so that a filtered ledger (a memory's, from its page) can be linked to. */
export function ledgerFiltersFromUrl(p: URLSearchParams): LedgerFilters {
  const f = { ...NO_FILTERS };
  for (const k of FIELDS) f[k] = p.get(k) ?? '';
  return f;
}

export function ledgerFiltersToUrl(f: LedgerFilters): URLSearchParams {
  const p = new URLSearchParams();
  for (const k of FIELDS) if (f[k].trim()) p.set(k, f[k].trim());
  return p;
}

/** A moment typed in local time as the API's ISO 8601; a typo is pointed out before anything is sent. */
function instant(value: string, what: string): string {
  const moment = new Date(value);
  if (Number.isNaN(moment.getTime())) throw new ApiError(422, `The ${what} moment is not a date and time`);
  return moment.toISOString();
}

/** The ledger request's filters: only those filled in narrow it. */
export function ledgerQuery(f: LedgerFilters): Omit<ApiInput['ledger']['list'], 'limit' | 'cursor'> {
  return {
    agent_id: f.agent_id || undefined,
    session_id: f.session_id || undefined,
    memory_id: f.memory_id || undefined,
    from: f.from ? instant(f.from, '“from”') : undefined,
    to: f.to ? instant(f.to, '“to”') : undefined,
  };
}

/** Who (a key, revoked ones too: they were given memories before), which session or memory, and when. */
export function LedgerFilterForm(props: { initial: LedgerFilters; keys: AccountKey[]; onFilter(f: LedgerFilters): void }) {
  const [f, setF] = useState(props.initial);
  const [formError, setFormError] = useState<string | null>(null);
  const set = (k: keyof LedgerFilters, v: string) => setF((old) => ({ ...old, [k]: v }));
  // An agent from the address that the list does not hold (an OAuth client, a deleted key) still shows by its id.
  const known = props.keys.some((k) => k.id === f.agent_id);

  function submit(e: FormEvent) {
    e.preventDefault();
    try {
      ledgerQuery(f);
    } catch (err) {
      setFormError(err instanceof ApiError ? err.detail : String(err));
      return;
    }
    setFormError(null);
    props.onFilter(f);
  }

  return (
    <form onSubmit={submit} className="card" aria-label="Ledger filters">
      <div className="grid">
        <div className="field">
          <label htmlFor="ledger-agent">Agent</label>
          <select id="ledger-agent" value={f.agent_id} onChange={(e) => set('agent_id', e.target.value)}>
            <option value="">Every agent</option>
            {props.keys.map((k) => (
              <option key={k.id} value={k.id}>
                {k.label}
                {k.revoked_at ? ' (revoked)' : ''}
              </option>
            ))}
            {f.agent_id && !known && <option value={f.agent_id}>{f.agent_id}</option>}
          </select>
        </div>
        <div className="field">
          <label htmlFor="ledger-session">Session id</label>
          <input id="ledger-session" value={f.session_id} maxLength={200} onChange={(e) => set('session_id', e.target.value)} placeholder="any" />
        </div>
        <div className="field">
          <label htmlFor="ledger-memory">Memory id</label>
          <input id="ledger-memory" value={f.memory_id} maxLength={100} onChange={(e) => set('memory_id', e.target.value)} placeholder="any" />
        </div>
        <div className="field">
          <label htmlFor="ledger-from">From</label>
          <input id="ledger-from" type="datetime-local" step={1} value={f.from} onChange={(e) => set('from', e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="ledger-to">Before</label>
          <input id="ledger-to" type="datetime-local" step={1} value={f.to} onChange={(e) => set('to', e.target.value)} />
        </div>
      </div>
      {formError && (
        <p className="error" role="alert">
          {formError}
        </p>
      )}
      <div className="row">
        <button type="submit" className="primary">
          Show entries
        </button>
        <button
          type="button"
          onClick={() => {
            setF(NO_FILTERS);
            props.onFilter(NO_FILTERS);
          }}
        >
          Clear filters
        </button>
      </div>
    </form>
  );
}
