import { rpc } from '../api.ts';
import { useApi } from './use-api.ts';

/**
 * A collection name: pick one of the collections the key can see, or type a new name (dropping
 * files or connecting a source into a new name creates the collection).
 */
export function FileCollectionInput({ id, value, onChange, label = 'Collection' }: { id: string; value: string; onChange(v: string): void; label?: string }) {
  const collections = useApi(() => rpc.collections.list.query(), []);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        list={`${id}-names`}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        required
        autoComplete="off"
        aria-describedby={`${id}-hint`}
      />
      <datalist id={`${id}-names`}>
        {collections.data?.map((c) => (
          <option key={c.name} value={c.name}>
            {c.memory_count} memories
          </option>
        ))}
      </datalist>
      <span id={`${id}-hint`} className="muted">
        Pick one of your collections or type a new name.
      </span>
    </div>
  );
}
