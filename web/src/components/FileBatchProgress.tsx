import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { apiError, rpc, seg, type ApiOutput } from '../api.ts';
import { Busy, ErrorNote } from './ui.tsx';
import { useApi } from './use-api.ts';

/** The files an async drop refused at once (the rest are in the batch). */
export type FileRejected = Extract<ApiOutput['drop']['files'], { queued: number }>['failed'];

/** One file's outcome, whichever way it was read (the sync answer or an async batch). */
export interface FileOutcome {
  filename: string;
  status: 'stored' | 'failed' | 'queued' | 'processing';
  chunks: number;
  memory_ids: string[];
  /** Known at once for a sync drop; for a batch it is read from the file's first memory. */
  preview?: string;
  detail?: string | null;
}

const POLL_MS = 1000;

/** Polls an ingest batch until it is complete, showing its progress and each file's outcome. */
export function FileBatchProgress({ batchId, collection, rejected }: { batchId: string; collection: string; rejected: FileRejected }) {
  const [batch, setBatch] = useState<ApiOutput['ingest']['batch']>();
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      try {
        const b = await rpc.ingest.batch.query({ batch_id: batchId });
        if (!live) return;
        setBatch(b);
        setError(null);
        if (!b.complete) timer = setTimeout(tick, POLL_MS);
      } catch (err) {
        if (!live) return;
        const e = apiError(err);
        setError(e.detail);
        // The service down or busy: keep asking; a refusal (404, 403) will not change.
        if (e.status === 0 || e.status >= 500 || e.status === 429) timer = setTimeout(tick, POLL_MS * 3);
      }
    };
    void tick();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [batchId]);

  const files: FileOutcome[] = [
    ...(batch?.files ?? []).map((f) => ({
      filename: f.filename,
      status: f.state === 'done' ? ('stored' as const) : f.state,
      chunks: f.chunks,
      memory_ids: f.memory_ids,
      detail: f.error,
    })),
    ...rejected.map((r) => ({ filename: r.filename, status: 'failed' as const, chunks: 0, memory_ids: [], detail: r.detail })),
  ];
  return (
    <section aria-labelledby="batch-title">
      <h2 id="batch-title">Ingest batch</h2>
      <ErrorNote error={error} />
      {!batch && !error && <Busy label="Queued…" />}
      {batch && (
        <>
          <div className="row">
            <label htmlFor="batch-progress">Progress</label>
            <progress id="batch-progress" max={Math.max(1, batch.total)} value={batch.done + batch.failed} />
            <span role="status" aria-live="polite">
              {batch.complete ? 'Complete: ' : ''}
              {batch.done} done · {batch.failed} failed · {batch.pending} pending of {batch.total}
            </span>
          </div>
          {!batch.complete && <Busy label="Reading the files…" />}
        </>
      )}
      {files.length > 0 && <FileResults collection={collection} files={files} />}
    </section>
  );
}

/** Each file: stored or failed (with why), its chunks and the start of its text. */
export function FileResults({ collection, files }: { collection: string; files: FileOutcome[] }) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="muted" style={{ textAlign: 'left' }}>
          Files into <Link to={`/collections/${seg(collection)}`}>{collection}</Link>
        </caption>
        <thead>
          <tr>
            <th scope="col">File</th>
            <th scope="col">Result</th>
            <th scope="col">Chunks</th>
            <th scope="col">Preview or error</th>
          </tr>
        </thead>
        <tbody>
          {files.map((f, i) => (
            <tr key={`${f.filename}-${i}`} data-file={f.filename}>
              <td>{f.filename}</td>
              <td>
                <span className={f.status === 'failed' ? 'error' : f.status === 'stored' ? 'ok' : 'muted'}>{f.status}</span>
              </td>
              <td>{f.chunks}</td>
              <td>
                {f.status === 'failed' ? (
                  <span className="error">{f.detail}</span>
                ) : f.preview !== undefined ? (
                  <FilePreviewText text={f.preview} />
                ) : f.memory_ids[0] ? (
                  <FileMemoryPreview collection={collection} id={f.memory_ids[0]} />
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const FilePreviewText = ({ text }: { text: string }) => <span className="muted">{text.length > 200 ? `${text.slice(0, 200)}…` : text}</span>;

/** A batch does not carry the file's text: its first chunk (a memory) does. */
function FileMemoryPreview({ collection, id }: { collection: string; id: string }) {
  const memory = useApi(() => rpc.memories.get.query({ collection, id }), [collection, id]);
  if (memory.error) return <ErrorNote error={memory.error} />;
  if (!memory.data) return <span className="muted">…</span>;
  return (
    <Link to={`/collections/${seg(collection)}/memories/${seg(id)}`}>
      <FilePreviewText text={memory.data.text} />
    </Link>
  );
}
