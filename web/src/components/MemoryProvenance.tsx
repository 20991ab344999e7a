import { Link } from 'react-router';
import type { Memory } from '../../../src/schemas/memory.ts';
import { seg } from '../api.ts';

type Kind = Memory['provenance']['kind'];
/** Each way in, as a person names it (docs/time.md, "Provenance"), keyed by the API's own kinds. */
const KIND: Record<Kind, string> = {
  api: 'Written through the API',
  remember: 'Extracted by remember',
  file: 'Read from a file',
  mail: 'Received by mail',
  connector: 'Synced by a connection',
  import: 'Imported',
};

/** The pages (slides, sheets) a part of a file is on: "page 3", "pages 3–4", "sheets Prices–Notes". */
const parts = (unit: string, first: number | string, last: number | string | undefined) => (last ? `${unit}s ${first}–${last}` : `${unit} ${first}`);

/** Only web addresses open: a record's url is the provider's (or a client's metadata), never a script. */
const webAddress = (url: string) => /^https?:\/\//i.test(url);

/** Where a memory came from, with links that open the source: the file, the raw memory, the connection and its record. */
export function MemoryProvenance({ memory }: { memory: Memory }) {
  const p = memory.provenance;
  return (
    <section aria-labelledby="provenance-title">
      <h2 id="provenance-title">Where from</h2>
      <p data-testid="provenance-kind">
        <span className="badge">{p.kind}</span> {KIND[p.kind]}
      </p>
      <ul aria-label="Source">
        {p.kind === 'file' && (
          <li>
            File{' '}
            {p.file_url ? (
              // A browser's PDF viewer opens a link ending in #page=N at that page.
              <a href={p.page ? `${p.file_url}#page=${p.page}` : p.file_url} target="_blank" rel="noreferrer">
                {p.file_name ?? p.file_key}
              </a>
            ) : (
              <code>{p.file_name ?? p.file_key}</code>
            )}
            {p.chunk !== undefined && <span className="muted"> · part {p.chunk}</span>}
            {p.page !== undefined && <span className="muted"> · {parts('page', p.page, p.last_page)}</span>}
            {p.slide !== undefined && <span className="muted"> · {parts('slide', p.slide, p.last_slide)}</span>}
            {p.sheet !== undefined && <span className="muted"> · {parts('sheet', p.sheet, p.last_sheet)}</span>}
          </li>
        )}
        {p.kind === 'remember' && p.memory_id && p.memory_id !== memory.id && (
          <li>
            <Link to={`/collections/${seg(memory.collection)}/memories/${seg(p.memory_id)}`}>The text it was remembered from</Link>
          </li>
        )}
        {p.kind === 'remember' && p.memory_id === memory.id && <li className="muted">This is the text remember was given.</li>}
        {p.kind === 'connector' && p.connection_id && (
          <li>
            <Link to={`/connections#conn-${seg(p.connection_id)}`}>The connection</Link>
            {p.record_id && <span className="muted"> · record {p.record_id}</span>}
          </li>
        )}
        {p.kind === 'connector' && p.url && webAddress(p.url) && (
          <li>
            <a href={p.url} target="_blank" rel="noreferrer">
              The record at the provider
            </a>
          </li>
        )}
        {p.kind === 'mail' && (
          <li>
            Message-ID <code>{p.message_id ?? 'not given'}</code>
          </li>
        )}
      </ul>
    </section>
  );
}
