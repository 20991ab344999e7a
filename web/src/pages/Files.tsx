import { FileDropForm } from '../components/FileDropForm.tsx';
import { FileEmailDrop } from '../components/FileEmailDrop.tsx';
import { useSession } from '../session.tsx';

/** Files become memories: drop them here (each is read and split into chunks), or mail them in. */
export function Files() {
  const { canWrite } = useSession();
  return (
    <>
      <h1>Files</h1>
      <p className="muted">Each file is stored, read and split into chunks; each chunk becomes a memory (category document) in the collection.</p>
      {canWrite ? <FileDropForm /> : <p className="muted">This key is read-only: it cannot drop files.</p>}
      <FileEmailDrop />
    </>
  );
}
