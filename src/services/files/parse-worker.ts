import { parentPort } from 'node:worker_threads';
import { readDocument } from './formats.ts';
import { readMailParts } from './mail-parts.ts';
import type { ParseReply, ParseRequest } from './parse-runner.ts';
import { FileLimitError } from './unreadable.ts';

/**
 * The bounded runner's worker (parse-runner.ts): reads one document per message and answers its
 * text or the reader's error. It is a second entry point of the bundle (package.json `build:js`).
 */
parentPort!.on('message', async ({ kind, input, limits }: ParseRequest) => {
  let reply: ParseReply;
  try {
    // A Buffer arrives as a plain Uint8Array.
    const data = typeof input === 'string' ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    reply = { value: kind === 'mail-parts' ? await readMailParts(data) : await readDocument(kind, data, limits) };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    reply = { error: { name: e.name, message: e.message, limit: err instanceof FileLimitError } };
  }
  parentPort!.postMessage(reply);
});
