import type { Memory } from '../../schemas/memory.ts';

type Provenance = Memory['provenance'];

const text = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
const int = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);

/**
 * Where a memory came from, read from what each way in stores on it (docs/time.md,
 * "Provenance"): connector pages put the connection and record in the metadata, files their key
 * and chunk (and a PDF's pages, a deck's slides or a workbook's sheets), mail its Message-ID, remember's facts the raw memory they came from, imports from another store
 * the record's key there. Undefined
 * fields are left out of the answer.
 */
export function provenanceOf(r: { id: string; source: string; metadata: Record<string, unknown> }): Provenance {
  const m = r.metadata;
  const defined = (p: Provenance) => Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined)) as Provenance;
  if (text(m.connection_id)) return defined({ kind: 'connector', connection_id: text(m.connection_id), record_id: text(m.record_id), url: text(m.url) });
  if (text(m.key))
    return defined({
      kind: 'file',
      file_key: text(m.key),
      file_name: text(m.file),
      chunk: int(m.chunk),
      page: int(m.page),
      last_page: int(m.last_page),
      slide: int(m.slide),
      last_slide: int(m.last_slide),
      sheet: text(m.sheet),
      last_sheet: text(m.last_sheet),
    });
  if (r.source === 'email') return defined({ kind: 'mail', message_id: text(m.message_id) });
  if (r.source === 'remember') return { kind: 'remember', memory_id: text(m.remembered_from) ?? r.id };
  if (r.source === 'import') return defined({ kind: 'import', import_source: text(m.import_source) });
  return { kind: 'api' };
}
