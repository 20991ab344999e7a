import type { ReactNode } from 'react';

/** Labelled values in a wrapping grid (a description list: each label names its value). */
export function SettingFacts({ items }: { items: Array<[string, ReactNode] | false | null | undefined> }) {
  return (
    <dl className="grid" style={{ margin: '0.5rem 0' }}>
      {items
        .filter((i): i is [string, ReactNode] => !!i)
        .map(([label, value]) => (
          <div key={label}>
            <dt className="muted">{label}</dt>
            <dd style={{ margin: 0 }}>{value}</dd>
          </div>
        ))}
    </dl>
  );
}
