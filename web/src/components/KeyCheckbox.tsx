import type { ReactNode } from 'react';

/** A checkbox inside its label: the text wraps beside the box on a narrow screen instead of falling under it. */
export function KeyCheckbox({ id, checked, onChange, children }: { id: string; checked: boolean; onChange: (checked: boolean) => void; children: ReactNode }) {
  return (
    <label htmlFor={id} style={{ display: 'flex', gap: '0.4rem', alignItems: 'baseline', margin: '0.3rem 0' }}>
      <input id={id} type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} />
      <span>{children}</span>
    </label>
  );
}
