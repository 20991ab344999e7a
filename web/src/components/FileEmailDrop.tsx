import { rpc } from '../api.ts';
import { useSession } from '../session.tsx';
import { ConfirmButton, ErrorNote } from './ui.tsx';
import { useAction, useApi } from './use-api.ts';

/** The tenant's email drop address; rotating it is destructive (the old address stops working). */
export function FileEmailDrop() {
  const { canAdmin } = useSession();
  const addr = useApi(() => rpc.email.address.query(), []);
  const rotate = useAction();
  return (
    <section aria-labelledby="email-title" className="card" style={{ marginBottom: '1rem' }}>
      <h2 id="email-title" style={{ marginTop: 0 }}>
        Email drop
      </h2>
      <ErrorNote error={addr.error} />
      {addr.data && (
        <>
          <p>
            Mail sent to <code data-testid="drop-address">{addr.data.address}</code> from an allowed sender becomes a memory in the collection{' '}
            <strong>{addr.data.collection}</strong>; its attachments are read as files.
          </p>
          <p className="muted">Allowed senders: the account's email and those set with PUT /v1/memory/email/senders.</p>
        </>
      )}
      {canAdmin && addr.data && (
        <ConfirmButton
          label="Rotate address"
          title="Rotate the drop address?"
          confirmLabel="Rotate"
          onConfirm={async () => {
            const res = await rotate.run(() => rpc.email.rotateAddress.mutate());
            if (res) addr.reload();
          }}
        >
          <p>
            A new address replaces <code>{addr.data.address}</code>. Mail sent to the old one is dropped from now on: tell your senders the new one.
          </p>
        </ConfirmButton>
      )}
      <ErrorNote error={rotate.error} />
    </section>
  );
}
