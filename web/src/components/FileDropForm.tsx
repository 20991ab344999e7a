import { useRef, useState } from 'react';
import { api, query, seg, type ApiOutput } from '../api.ts';
import { FileBatchProgress, FileResults, type FileOutcome, type FileRejected } from './FileBatchProgress.tsx';
import { FileCollectionInput } from './FileCollectionInput.tsx';
import { Busy, ErrorNote } from './ui.tsx';
import { useAction } from './use-api.ts';

type Outcome = { collection: string; files: FileOutcome[] } | { collection: string; batchId: string; rejected: FileRejected };

/** Drop files into a collection; in the background by default, so a large drop shows its progress. */
export function FileDropForm() {
  const [collection, setCollection] = useState('');
  const [background, setBackground] = useState(true);
  const [count, setCount] = useState(0);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const { busy, error, run } = useAction();

  async function drop() {
    const files = Array.from(input.current?.files ?? []);
    if (!files.length) return;
    const form = new FormData();
    for (const f of files) form.append('files', f, f.name);
    const name = collection.trim();
    setOutcome(null);
    // Multipart over REST (see `api`): drop.files answers the files at once, or a batch the worker reads (async_ingest).
    const res = await run(() =>
      api<ApiOutput['drop']['files']>('POST', `/v1/memory/collections/${seg(name)}/drop${query({ async_ingest: background || undefined })}`, { form }),
    );
    if (!res) return;
    setOutcome('files' in res ? { collection: name, files: res.files } : { collection: name, batchId: res.batch_id, rejected: res.failed });
    if (input.current) input.current.value = '';
    setCount(0);
  }

  return (
    <section aria-labelledby="drop-title" className="card" style={{ marginBottom: '1rem' }}>
      <h2 id="drop-title" style={{ marginTop: 0 }}>
        Drop files
      </h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void drop();
        }}
      >
        <FileCollectionInput id="drop-collection" value={collection} onChange={setCollection} />
        <div className="field">
          <label htmlFor="drop-files">Files</label>
          <input
            id="drop-files"
            ref={input}
            type="file"
            multiple
            required
            onChange={(e) => setCount(e.target.files?.length ?? 0)}
            aria-describedby="drop-files-hint"
          />
          <span id="drop-files-hint" className="muted">
            Up to 50 files of at most 10 MB: PDF, DOCX, PPTX, XLSX, ODT, HTML, Markdown, text, CSV, JSON, .eml, images, audio and video.
          </span>
        </div>
        <div className="field">
          <span className="row">
            <input id="drop-background" type="checkbox" checked={background} onChange={(e) => setBackground(e.target.checked)} />
            <label htmlFor="drop-background">Read in the background and show progress</label>
          </span>
        </div>
        <button type="submit" className="primary" disabled={busy || !count || !collection.trim()}>
          Drop {count ? `${count} file${count > 1 ? 's' : ''}` : 'files'}
        </button>
      </form>
      {busy && <Busy label={background ? 'Uploading…' : 'Uploading and reading the files…'} />}
      <ErrorNote error={error} />
      {outcome && 'batchId' in outcome && (
        <FileBatchProgress key={outcome.batchId} batchId={outcome.batchId} collection={outcome.collection} rejected={outcome.rejected} />
      )}
      {outcome && 'files' in outcome && (
        <>
          <h2>Result</h2>
          <p role="status">
            {outcome.files.filter((f) => f.status === 'stored').length} stored · {outcome.files.filter((f) => f.status === 'failed').length} failed
          </p>
          <FileResults collection={outcome.collection} files={outcome.files} />
        </>
      )}
    </section>
  );
}
