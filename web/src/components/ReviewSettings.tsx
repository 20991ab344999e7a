import { useState, type FormEvent } from 'react';
import type { ChangeKind } from '../../../src/schemas/consolidation.ts';
import { rpc, type ApiInput } from '../api.ts';
import { useSession } from '../session.tsx';
import { KeyCheckbox } from './KeyCheckbox.tsx';
import { REVIEW_KINDS, reviewKind } from './ReviewChange.tsx';
import { SettingFacts } from './SettingFacts.tsx';
import { Busy, ErrorNote, when } from './ui.tsx';
import { useAction, useApi } from './use-api.ts';

type ReviewConfig = Pick<ApiInput['consolidation']['putConfig'], 'schedule' | 'auto_apply'>;

/** The schedules in words, keyed by the API's own values (the compiler holds this to its list). */
const SCHEDULE_NAMES: Record<NonNullable<ReviewConfig['schedule']>, string> = { off: 'off', daily: 'every day', weekly: 'every week' };
const SCHEDULES = Object.keys(SCHEDULE_NAMES) as Array<keyof typeof SCHEDULE_NAMES>;

/**
 * A collection's consolidation settings: how often a run starts on its own, and the kinds of change
 * a run applies at once instead of leaving them for review. Any key that reads the collection sees
 * them; only an admin key changes them (docs/access.md, "Key roles").
 */
export function ReviewSettings({ collection }: { collection: string }) {
  const { canAdmin } = useSession();
  const config = useApi(() => rpc.consolidation.getConfig.query({ collection }), [collection]);
  // The form starts from the saved settings; a change is a draft until saved.
  const [draft, setDraft] = useState<ReviewConfig | null>(null);
  const action = useAction();
  const c = config.data;
  const form = draft ?? (c ? { schedule: c.schedule, auto_apply: c.auto_apply } : null);

  async function save(e: FormEvent) {
    e.preventDefault();
    if (!form) return;
    const saved = await action.run(() => rpc.consolidation.putConfig.mutate({ collection, ...form }));
    if (!saved) return;
    setDraft(null);
    config.reload();
  }

  const toggle = (kind: ChangeKind, on: boolean) =>
    form && setDraft({ ...form, auto_apply: REVIEW_KINDS.filter((k) => (k === kind ? on : form.auto_apply?.includes(k))) });

  return (
    <section aria-labelledby="review-settings" className="card">
      <h2 id="review-settings" style={{ marginTop: 0 }}>
        Consolidation settings
      </h2>
      <ErrorNote error={config.error} />
      {config.loading && !c && <Busy label="Loading settings…" />}
      {c && (
        <SettingFacts
          items={[
            ['Schedule', c.schedule],
            ['Applied at once', c.auto_apply.length ? c.auto_apply.map(reviewKind).join(', ') : 'nothing: every change waits for review'],
            ['Next run', c.next_run_at ? when(c.next_run_at) : '—'],
          ]}
        />
      )}
      {canAdmin && form && (
        <form onSubmit={save} aria-label="Consolidation settings">
          <div className="field" style={{ maxWidth: '16rem' }}>
            <label htmlFor="review-schedule">Schedule</label>
            <select id="review-schedule" value={form.schedule} onChange={(e) => setDraft({ ...form, schedule: e.target.value as ReviewConfig['schedule'] })}>
              {SCHEDULES.map((s) => (
                <option key={s} value={s}>
                  {SCHEDULE_NAMES[s]}
                </option>
              ))}
            </select>
          </div>
          <fieldset>
            <legend>Apply at once, without review</legend>
            {REVIEW_KINDS.map((k) => (
              <KeyCheckbox key={k} id={`review-auto-${k}`} checked={!!form.auto_apply?.includes(k)} onChange={(on) => toggle(k, on)}>
                {reviewKind(k)}
              </KeyCheckbox>
            ))}
            <span className="muted">Applied changes are still recorded in their change set, and each can be undone.</span>
          </fieldset>
          <button type="submit" className="primary" disabled={action.busy || !draft}>
            Save settings
          </button>
        </form>
      )}
      {action.busy && <Busy label="Saving…" />}
      <ErrorNote error={action.error} />
    </section>
  );
}
