import { useState } from 'react';
import { rpc } from '../api.ts';
import { useSession } from '../session.tsx';
import { SettingFacts } from './SettingFacts.tsx';
import { Busy, ConfirmButton, ErrorNote } from './ui.tsx';
import { useAction, useApi } from './use-api.ts';

const usd = (n: number) => n.toLocaleString(undefined, { style: 'currency', currency: 'USD', maximumFractionDigits: 4 });

/** The monthly cap on the platform's LLM spend for this account. */
export function SettingSpendCap() {
  const { canAdmin } = useSession();
  const cap = useApi(() => rpc.spendCap.get.query(), []);
  const [amount, setAmount] = useState('');
  const { busy, error, run } = useAction();

  async function put(monthly_usd: number | null) {
    const result = await run(() => rpc.spendCap.put.mutate({ monthly_usd }));
    if (!result) return;
    setAmount('');
    cap.reload();
  }

  const c = cap.data;
  return (
    <section className="card" aria-labelledby="spend-cap-title">
      <h2 id="spend-cap-title">Spend cap</h2>
      <p className="muted">
        At the cap, remember keeps the raw text and skips extraction, and summaries, profiles and search rewrite/rerank work without the LLM until the month
        turns. Your own extraction endpoint is never capped.
      </p>
      <ErrorNote error={cap.error} />
      {cap.loading && !c && <Busy label="Loading…" />}
      {c && (
        <SettingFacts
          items={[
            ['Monthly cap', c.monthly_usd === null ? 'No cap' : usd(c.monthly_usd)],
            [
              'Spent this month',
              <>
                {usd(c.spent_this_month_usd)}
                {c.over_cap && <span className="badge warn">over the cap</span>}
              </>,
            ],
          ]}
        />
      )}
      {canAdmin && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void put(Number(amount));
          }}
        >
          <div className="field">
            <label htmlFor="spend-cap-usd">Monthly cap (USD)</label>
            <input
              id="spend-cap-usd"
              type="number"
              min="0"
              step="0.01"
              inputMode="decimal"
              value={amount}
              onChange={(e) => setAmount(e.target.value)}
              required
            />
          </div>
          <div className="row">
            <button type="submit" className="primary" disabled={busy || amount === ''}>
              Save cap
            </button>
            {c?.monthly_usd != null && (
              <ConfirmButton label="Remove cap" title="Remove the spend cap?" onConfirm={() => put(null)} disabled={busy}>
                <p>The platform's LLM calls for this account are no longer limited each month.</p>
              </ConfirmButton>
            )}
          </div>
        </form>
      )}
      {busy && <Busy label="Saving…" />}
      <ErrorNote error={error} />
    </section>
  );
}
