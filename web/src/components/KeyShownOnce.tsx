import { useRef, useState } from 'react';

/**
 * A secret the service shows only once (a new API key, a webhook's signing secret): shown in a
 * read-only field with a copy button and a warning, until the reader dismisses it. It lives only
 * in the component's state, so a reload shows it no more.
 */
export function KeyShownOnce({ id, label, value, what, onDone }: { id: string; label: string; value: string; what: string; onDone: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<string | null>(null);
  async function copy() {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('Copied to the clipboard.');
    } catch {
      // No clipboard access (an insecure origin, or refused): leave the text selected for Ctrl+C.
      field.current?.select();
      setCopied('Selected: press Ctrl+C (⌘C) to copy.');
    }
  }
  return (
    <div className="card" style={{ margin: '0.8rem 0' }}>
      <p>
        <strong>Copy {what} now: it will not be shown again.</strong> If it is lost, make a new one.
      </p>
      <div className="row">
        <label htmlFor={id}>{label}</label>
        <input id={id} ref={field} readOnly value={value} size={Math.min(60, value.length + 2)} onFocus={(e) => e.currentTarget.select()} />
      </div>
      <div className="row">
        <button type="button" className="primary" onClick={() => void copy()}>
          Copy
        </button>
        <button type="button" onClick={onDone}>
          I have copied it
        </button>
        <span className="muted" role="status">
          {copied}
        </span>
      </div>
    </div>
  );
}
