import { useState, type FormEvent } from 'react';
import type { PolicyAction, TrustClass, TrustPolicy } from '../../../src/schemas/trust.ts';
import { rpc } from '../api.ts';
import { useSession } from '../session.tsx';
import { SettingFacts } from './SettingFacts.tsx';
import { POLICY_CHOICES, POLICY_NAMES, POLICY_CLASSES, TRUST_NAMES } from './TrustNames.ts';
import { Busy, ErrorNote } from './ui.tsx';
import { useAction, useApi } from './use-api.ts';

/**
 * What happens, per trust class, to text that tries to instruct an agent (docs/trust.md): held,
 * flagged or let through. Any key reads it; a writable admin key changes it, one select per class.
 */
export function QuarantinePolicy() {
  const { canAdmin } = useSession();
  const policy = useApi(() => rpc.quarantine.getPolicy.query(), []);
  // The classes changed and not yet saved; the others show the saved policy.
  const [draft, setDraft] = useState<Partial<TrustPolicy>>({});
  // The policy a save answered: shown at once, rather than the one loaded before it until a reload comes back.
  const [saved, setSaved] = useState<TrustPolicy | null>(null);
  const action = useAction();
  const p = saved ?? policy.data;
  const changed = Object.keys(draft).length > 0;

  async function save(e: FormEvent) {
    e.preventDefault();
    // Only the changed classes are sent: a class another admin changed meanwhile keeps its new action.
    const answer = await action.run(() => rpc.quarantine.putPolicy.mutate(draft));
    if (!answer) return;
    setDraft({});
    setSaved(answer);
  }

  const set = (c: TrustClass, a: PolicyAction) => {
    // Set back to what is saved, a class is no change.
    setDraft((d) => {
      const next = { ...d };
      if (p?.[c] === a) delete next[c];
      else next[c] = a;
      return next;
    });
  };

  return (
    <section aria-labelledby="quarantine-policy" className="card">
      <h2 id="quarantine-policy" style={{ marginTop: 0 }}>
        Quarantine policy
      </h2>
      <p className="muted">
        Each memory's trust class says how it was written. A change applies to what is written from then on; memories already held stay held until decided.
      </p>
      <ErrorNote error={policy.error} />
      {policy.loading && !p && <Busy label="Loading the policy…" />}
      {p && !canAdmin && <SettingFacts items={POLICY_CLASSES.map((c) => [c, POLICY_NAMES[p[c]]])} />}
      {p && canAdmin && (
        <form onSubmit={save} aria-label="Quarantine policy">
          <div className="grid">
            {POLICY_CLASSES.map((c) => (
              <div className="field" key={c}>
                <label htmlFor={`policy-${c}`}>{c}</label>
                <select
                  id={`policy-${c}`}
                  aria-describedby={`policy-${c}-what`}
                  value={draft[c] ?? p[c]}
                  onChange={(e) => set(c, e.target.value as PolicyAction)}
                >
                  {POLICY_CHOICES.map((a) => (
                    <option key={a} value={a}>
                      {POLICY_NAMES[a]}
                    </option>
                  ))}
                </select>
                <span id={`policy-${c}-what`} className="muted" style={{ fontSize: '0.85rem' }}>
                  {TRUST_NAMES[c]}
                </span>
              </div>
            ))}
          </div>
          <button type="submit" className="primary" disabled={action.busy || !changed}>
            Save policy
          </button>
        </form>
      )}
      {action.busy && <Busy label="Saving…" />}
      {saved && !changed && !action.busy && (
        <p className="ok" role="status">
          Policy saved.
        </p>
      )}
      <ErrorNote error={action.error} />
    </section>
  );
}
