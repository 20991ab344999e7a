import { useEffect, useRef, useState, type ReactNode } from 'react';

/** An API error, shown as the service's `detail` text. */
export function ErrorNote({ error }: { error: string | null | undefined }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {error}
    </p>
  );
}

export function Busy({ label = 'Working…' }: { label?: string }) {
  return (
    <p className="muted" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> {label}
    </p>
  );
}

/**
 * A destructive action: the button opens a dialog that says what will happen, and only its
 * confirm button acts. Escape or Cancel closes it; focus starts on Cancel.
 */
export function ConfirmButton(props: {
  label: string;
  /** The button's accessible name when `label` alone is ambiguous (one per table row). */ ariaLabel?: string;
  title: string;
  children: ReactNode;
  confirmLabel?: string;
  onConfirm: () => void | Promise<unknown>;
  disabled?: boolean;
  className?: string;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [open, setOpen] = useState(false);
  useEffect(() => {
    if (open) dialog.current?.showModal();
    else dialog.current?.close();
  }, [open]);
  return (
    <>
      <button type="button" className={props.className ?? 'danger'} disabled={props.disabled} aria-label={props.ariaLabel} onClick={() => setOpen(true)}>
        {props.label}
      </button>
      {open && (
        <dialog ref={dialog} onClose={() => setOpen(false)} aria-labelledby="confirm-title">
          <h2 id="confirm-title">{props.title}</h2>
          <div>{props.children}</div>
          <div className="row">
            <button type="button" autoFocus onClick={() => setOpen(false)}>
              Cancel
            </button>
            <button
              type="button"
              className="danger"
              onClick={async () => {
                setOpen(false);
                await props.onConfirm();
              }}
            >
              {props.confirmLabel ?? props.label}
            </button>
          </div>
        </dialog>
      )}
    </>
  );
}

/** A number of memories, in words: "1 memory", "1,200 memories". */
export const memories = (n: number) => `${n.toLocaleString()} ${n === 1 ? 'memory' : 'memories'}`;

/** A date as the reader's local time. */
export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

/** Horizontal bars for a handful of labelled numbers (no chart library needed for this). */
export function Bars({ items, unit = '' }: { items: Array<{ label: string; value: number }>; unit?: string }) {
  const max = Math.max(1, ...items.map((i) => i.value));
  return (
    <ul className="bars">
      {items.map((i) => (
        <li key={i.label}>
          <span className="bar-label" title={i.label}>
            {i.label}
          </span>
          <span className="bar" style={{ width: `${(i.value / max) * 100}%` }} aria-hidden="true" />
          <span className="bar-value">
            {i.value.toLocaleString()}
            {unit}
          </span>
        </li>
      ))}
    </ul>
  );
}
