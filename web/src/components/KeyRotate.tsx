import { useState } from 'react';
import { apiError, rpc } from '../api.ts';
import { useSession } from '../session.tsx';
import { KeyShownOnce } from './KeyShownOnce.tsx';
import { Busy, ConfirmButton, ErrorNote } from './ui.tsx';
import { useAction } from './use-api.ts';

/**
 * Replaces the key the dashboard is signed in with. The old key stops working at once, so the
 * dashboard signs in with the new one straight away, and shows it once for the reader to keep.
 */
export function KeyRotate({ onRotated }: { onRotated: () => void }) {
  const { me, signIn } = useSession();
  const [fresh, setFresh] = useState<string | null>(null);
  const [signInError, setSignInError] = useState<string | null>(null);
  const { busy, error, run } = useAction();

  async function rotate() {
    const rotated = await run(() => rpc.admin.rotateKey.mutate());
    if (!rotated) return;
    setFresh(rotated.api_key);
    setSignInError(null);
    try {
      await signIn(rotated.api_key);
    } catch (err) {
      setSignInError(`Signing in with the new key failed (${apiError(err).detail}): copy it and sign in again.`);
    }
    onRotated();
  }

  return (
    <section className="card" aria-labelledby="key-rotate-title" style={{ marginTop: '1rem' }}>
      <h2 id="key-rotate-title">Rotate this dashboard's key</h2>
      <p className="muted">
        Replaces the key this dashboard is signed in with (“{me?.key.label}”) by a new one with the same label, access and collection grants. The current key
        stops working at once: do it when it may have leaked, and give the new key to whatever else used the old one.
      </p>
      <ConfirmButton label="Rotate key" title="Rotate this dashboard's key?" confirmLabel="Rotate" onConfirm={rotate} disabled={busy}>
        <p>The key “{me?.key.label}” stops working at once, everywhere it is used. The dashboard signs in with the new key, which is shown once.</p>
      </ConfirmButton>
      {busy && <Busy label="Rotating…" />}
      <ErrorNote error={error ?? signInError} />
      {fresh && <KeyShownOnce id="rotated-key" label="Rotated API key" what="the new key" value={fresh} onDone={() => setFresh(null)} />}
    </section>
  );
}
