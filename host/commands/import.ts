import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { HELP, UsageError, type Command } from './command.ts';

const IMPORT = '/v1/memory/admin/import';
const POLL_MS = 500;

interface ImportStatus {
  import_id: string;
  state: 'queued' | 'running' | 'done' | 'failed';
  complete: boolean;
  error: string | null;
  total: number;
  imported: number;
  skipped: number;
  already_imported: number;
  pending: number;
  errors: Array<{ index: number; detail: string }>;
}

const progress = (s: Pick<ImportStatus, 'total' | 'imported' | 'skipped' | 'already_imported'>) =>
  `imported ${s.imported} of ${s.total} (skipped ${s.skipped}, already imported ${s.already_imported})`;

/**
 * Where the formats keep their records (docs/import.md). A file with one of these lists (or a bare
 * list) can be sent in parts, each part the file with a slice of its list; a Letta file is never
 * cut, as its agents name blocks at its root.
 */
const RECORD_LISTS = ['results', 'memories', 'documents', 'messages', 'facts', 'edges', 'nodes', 'threads'];
/** Files up to this size go in one import (the server takes 64 MB); larger ones in parts of PART_RECORDS. */
const WHOLE_BYTES = 32 * 1024 * 1024;
const PART_RECORDS = 10_000;

const slices = <T>(list: T[], size: number) => Array.from({ length: Math.ceil(list.length / size) }, (_, i) => list.slice(i * size, (i + 1) * size));

function parts(data: unknown, perPart: number): unknown[] {
  if (Array.isArray(data)) return data.length > perPart ? slices(data, perPart) : [data];
  if (typeof data !== 'object' || data === null || 'agents' in data) return [data];
  const file = data as Record<string, unknown>;
  const lists = RECORD_LISTS.filter((k) => Array.isArray(file[k]));
  if (lists.length !== 1) return [data];
  const list = file[lists[0]!] as unknown[];
  return list.length > perPart ? slices(list, perPart).map((slice) => ({ ...file, [lists[0]!]: slice })) : [data];
}

/**
 * Sends the file to the server's import (docs/import.md), in parts when it is large, each with an
 * idempotency key made from the file, the options and the part, so that running the same command
 * again after a crash or a dropped connection resumes instead of starting again; prints how far
 * each part got while it runs.
 */
async function runImport(file: string, values: Record<string, string | boolean | undefined>) {
  const key = process.env.ORGMEM_API_KEY;
  if (!key) throw new UsageError('ORGMEM_API_KEY is not set: set it to an admin API key of the server');
  const base = process.env.ORGMEM_URL ?? 'http://127.0.0.1:8080';
  if (!URL.canParse(base) || !/^https?:$/.test(new URL(base).protocol)) throw new UsageError(`ORGMEM_URL is not an http(s) URL: "${base}"`);
  const perPartOption = values['part-records'];
  if (perPartOption !== undefined && (typeof perPartOption !== 'string' || !/^[1-9]\d{0,5}$/.test(perPartOption))) {
    throw new UsageError(`--part-records must be a number of records from 1 to 999999, not '${perPartOption}'`);
  }
  const bytes = await readFile(file).catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(`cannot read ${file}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
  });
  let data: unknown;
  try {
    data = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new UsageError(`${file} is not JSON: ${(err as Error).message}`);
  }
  const options = { format: values.format, include_messages: values['include-messages'] === true || undefined, into_collection: values.into };
  const perPart = perPartOption ? Number(perPartOption) : bytes.length > WHOLE_BYTES ? PART_RECORDS : Infinity;
  const pieces = parts(data, perPart);
  const fileKey = `file-${createHash('sha256').update(bytes).update(JSON.stringify(options)).digest('hex').slice(0, 40)}`;
  const sum = { total: 0, imported: 0, skipped: 0, already_imported: 0 };
  let incomplete = false;
  for (const [i, piece] of pieces.entries()) {
    const label = pieces.length > 1 ? `part ${i + 1} of ${pieces.length}: ` : '';
    const status = await sendPart(base, key, pieces.length > 1 ? `${fileKey}-${i + 1}-of-${pieces.length}` : fileKey, { data: piece, ...options }, label);
    for (const k of Object.keys(sum) as Array<keyof typeof sum>) sum[k] += status[k];
    incomplete ||= !status.complete;
    process.stdout.write(`${label}${progress(status)}: import ${status.import_id}\n`);
    if (status.error) process.stdout.write(`  failed: ${status.error}\n`);
    for (const e of status.errors) process.stdout.write(`  record ${e.index}: ${e.detail}\n`);
    if (status.skipped > status.errors.length) process.stdout.write(`  and ${status.skipped - status.errors.length} more skipped\n`);
  }
  if (pieces.length > 1) process.stdout.write(`in all: ${progress(sum)}\n`);
  // A failed import's records are left pending: the same command (the same keys) resumes it.
  if (incomplete) throw new Error('the import did not complete: run the same command again to resume it');
}

/**
 * One import: sent (the server answers at once and stores it in the background), then its status
 * read until its job is done or has failed, printed to stderr each time it moves.
 */
async function sendPart(base: string, key: string, idempotencyKey: string, body: unknown, label: string): Promise<ImportStatus> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey };
  const ask = async (res: Response) => {
    const answer = (await res.json().catch(() => null)) as (ImportStatus & { detail?: string }) | null;
    if (!res.ok) throw new Error(`the server answered ${res.status}: ${answer?.detail ?? res.statusText}`);
    return answer!;
  };
  let status = await ask(await fetch(new URL(IMPORT, base), { method: 'POST', headers, body: JSON.stringify(body) }));
  let last = '';
  while (status.state === 'queued' || status.state === 'running') {
    const line = `${label}${progress(status)}`;
    if (line !== last) process.stderr.write(`${line}\n`);
    last = line;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    status = await ask(await fetch(new URL(`${IMPORT}/${status.import_id}`, base), { headers }));
  }
  return status;
}

export const importCommand: Command = {
  usage: `Usage: orgmem import FILE [--format F] [--into COLLECTION] [--include-messages] [--part-records N]

Imports a JSON file into a running orgmem server (POST /v1/memory/admin/import): an orgmem
export, or a file of mem0, supermemory, Letta (.af), Zep or Portable AI Memory, its format
detected unless --format names it (docs/import.md). Progress goes to stderr while it runs; the
summary and each skipped record to stdout (record numbers count within their part). Running the
same command again resumes an import that was cut short, and a file imported before stores
nothing twice.

Options:
  --format F          orgmem, mem0, supermemory, letta, zep or pam
  --into COLLECTION   every memory into this collection
  --include-messages  Letta: the agents' messages too, not only their memory blocks
  --part-records N    send the file's records in imports of N each (default: the whole file up
                      to 32 MB, parts of 10000 records above; a Letta file goes whole)
${HELP}
Environment:
  ORGMEM_API_KEY      an admin API key of the server (required)
  ORGMEM_URL          the server's address (default http://127.0.0.1:8080)
`,
  options: { format: { type: 'string' }, into: { type: 'string' }, 'include-messages': { type: 'boolean' }, 'part-records': { type: 'string' } },
  positionals: 1,
  run: (values, [file]) => runImport(file!, values),
};
