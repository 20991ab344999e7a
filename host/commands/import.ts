import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { HELP, UsageError, type Command } from './command.ts';

const IMPORT = '/v1/memory/admin/import';
const POLL_MS = 1000;

interface ImportStatus {
  import_id: string;
  complete: boolean;
  total: number;
  imported: number;
  skipped: number;
  already_imported: number;
  pending: number;
  errors: Array<{ index: number; detail: string }>;
}

const progress = (s: ImportStatus) => `imported ${s.imported} of ${s.total} (skipped ${s.skipped}, already imported ${s.already_imported})`;

/**
 * Sends the file to the server's import (docs/import.md) with an idempotency key made from the
 * file and the options, so that running the same command again after a crash or a dropped
 * connection resumes the import instead of starting another; prints how far it got while it runs.
 */
async function runImport(file: string, values: Record<string, string | boolean | undefined>) {
  const key = process.env.ORGMEM_API_KEY;
  if (!key) throw new UsageError('ORGMEM_API_KEY is not set: set it to an admin API key of the server');
  const base = process.env.ORGMEM_URL ?? 'http://127.0.0.1:8080';
  if (!URL.canParse(base) || !/^https?:$/.test(new URL(base).protocol)) throw new UsageError(`ORGMEM_URL is not an http(s) URL: "${base}"`);
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
  const idempotencyKey = `file-${createHash('sha256').update(bytes).update(JSON.stringify(options)).digest('hex').slice(0, 48)}`;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey };
  const url = new URL(IMPORT, base);

  let last = '';
  const poll = setInterval(() => {
    fetch(new URL(`${IMPORT}/${idempotencyKey}`, base), { headers })
      .then(async (res) => {
        if (!res.ok) return;
        const line = progress((await res.json()) as ImportStatus);
        if (line !== last) process.stderr.write(`${line}\n`);
        last = line;
      })
      .catch(() => {});
  }, POLL_MS);
  try {
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ data, ...options }) });
    const body = (await res.json().catch(() => null)) as (ImportStatus & { detail?: string }) | null;
    if (!res.ok) throw new Error(`the server answered ${res.status}: ${body?.detail ?? res.statusText}`);
    const status = body!;
    process.stdout.write(`${progress(status)}: import ${status.import_id}${status.complete ? '' : ' (not complete: run the same command again to resume)'}\n`);
    for (const e of status.errors) process.stdout.write(`  record ${e.index}: ${e.detail}\n`);
    if (status.skipped > status.errors.length) process.stdout.write(`  and ${status.skipped - status.errors.length} more skipped\n`);
  } finally {
    clearInterval(poll);
  }
}

export const importCommand: Command = {
  usage: `Usage: orgmem import FILE [--format F] [--into COLLECTION] [--include-messages]

Imports a JSON file into a running orgmem server (POST /v1/memory/admin/import): an orgmem
export, or a file of mem0, supermemory, Letta (.af), Zep or Portable AI Memory, its format
detected unless --format names it (docs/import.md). Progress goes to stderr while it runs; the
summary and each skipped record to stdout. Running the same command again resumes an import that
was cut short, and a file imported before stores nothing twice.

Options:
  --format F          orgmem, mem0, supermemory, letta, zep or pam
  --into COLLECTION   every memory into this collection
  --include-messages  Letta: the agents' messages too, not only their memory blocks
${HELP}
Environment:
  ORGMEM_API_KEY      an admin API key of the server (required)
  ORGMEM_URL          the server's address (default http://127.0.0.1:8080)
`,
  options: { format: { type: 'string' }, into: { type: 'string' }, 'include-messages': { type: 'boolean' } },
  positionals: 1,
  run: (values, [file]) => runImport(file!, values),
};
