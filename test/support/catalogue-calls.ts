/** A procedure's REST path with its parameters filled: the values given, and a well-formed id no record has for the rest. */
export function fill(path: string, values: Record<string, string>) {
  return path.replace(/\{(\w+)\}/g, (_, k: string) => values[k] ?? '00000000-0000-7000-8000-000000000000');
}

/** Inputs that make a procedure with `readWhen` (a dry run) the write it can also be. */
export const WRITE_BODIES: Record<string, unknown> = {
  'hygiene.dedup': { dry_run: false },
  'hygiene.archiveStale': { dry_run: false },
  'proxy.chatCompletions': { messages: [{ role: 'user', content: 'hello' }], store: true },
  'proxy.messages': { model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hello' }], store: true },
};

/** Bodies that pass validation for procedures addressing one memory, so a 404 is about the id. */
export const VALID_BODIES: Record<string, unknown> = {
  'memories.update': { text: 'changed' },
  'memories.move': { to_collection: 'elsewhere' },
  'memories.pin': { pinned: true },
  'memories.archive': { archived: true },
  'memories.retract': { how: 'wrong' },
  'promotions.reject': { reason: 'not for this team' },
  'memories.attach': { files: [{ filename: 'a.txt', content_type: 'text/plain', data: Buffer.from('a file').toString('base64') }] },
};
