import type { Memory } from '../../../src/schemas/memory.ts';
import { when } from './ui.tsx';

type Times = Pick<Memory, 'valid_to' | 'superseded_at' | 'retraction'>;

/** Where a memory stands now (docs/time.md): retracted, superseded, ended or current. */
export function memoryState(m: Times): string {
  if (m.retraction) return m.retraction.how === 'wrong' ? 'retracted: never true' : 'retracted: ended';
  if (m.superseded_at) return 'superseded';
  if (m.valid_to && Date.parse(m.valid_to) <= Date.now()) return 'ended';
  return 'current';
}

export function StateBadge({ memory }: { memory: Times }) {
  const state = memoryState(memory);
  return (
    <span className={state === 'current' ? 'badge' : 'badge warn'} data-testid="memory-state">
      {state}
    </span>
  );
}

/** When it held, in words: "from A until B", "from A, still open". */
export function validity(m: Pick<Memory, 'valid_from' | 'valid_to'>): string {
  return m.valid_to ? `${when(m.valid_from)} until ${when(m.valid_to)}` : `${when(m.valid_from)}, still open`;
}

/** The rows of a memory's times for its details list: event time, validity and the store's own times. */
export function memoryTimeRows(m: Memory): Array<[string, string]> {
  const rows: Array<[string, string]> = [
    ['Observed', when(m.observed_at)],
    ['Holds', validity(m)],
    ['Recorded', when(m.created_at)],
    ['Updated', when(m.updated_at)],
  ];
  if (m.superseded_at) rows.push(['Superseded', when(m.superseded_at)]);
  if (m.retraction) {
    const { how, at, reason, retracted_at } = m.retraction;
    const what = how === 'wrong' ? 'never true' : `ended ${when(at)}`;
    rows.push(['Retracted', `${what} (recorded ${when(retracted_at)})${reason ? `: ${reason}` : ''}`]);
  }
  return rows;
}
