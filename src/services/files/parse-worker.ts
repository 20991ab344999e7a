import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { hashEmbedder } from '../../ports/embedder/hash.ts';
import { detectSteering } from '../trust/steering.ts';
import { fileMemories } from './file-memories.ts';
import { readDocument } from './formats.ts';
import { readMailParts } from './mail-parts.ts';
import type { ParseReply, ParseRequest, PreparedStep, StepInput } from './parse-runner.ts';
import { FileLimitError } from './unreadable.ts';

/**
 * The bounded runner's worker (parse-runner.ts): does one piece of work per message (reads a
 * document, cuts a file's text into chunks, or prepares a step of chunks) and answers its result
 * or the error. It is a second entry point of the bundle (package.json `build:js`).
 */
/**
 * The runner's CPU priority: below the event loop's and the database's, so that on a machine of
 * few cores a tenant's large file takes the CPU they leave, and other tenants' requests go first
 * (bench/README.md, "Noisy neighbours"). Linux gives a thread's id in /proc/thread-self, and
 * `setpriority` on it changes that thread alone; elsewhere the thread keeps the process's.
 */
const BACKGROUND_NICE = 10;
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), BACKGROUND_NICE);
} catch {
  // Not Linux, or no /proc: the same work at the process's priority.
}

parentPort!.on('message', async (request: ParseRequest) => {
  let reply: ParseReply;
  try {
    reply = { value: await work(request) };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    reply = { error: { name: e.name, message: e.message, limit: err instanceof FileLimitError } };
  }
  parentPort!.postMessage(reply);
});

async function work(request: ParseRequest): Promise<Extract<ParseReply, { value: unknown }>['value']> {
  if (request.kind === 'chunks') return fileMemories(request.input.file, request.input.read, request.input.source);
  if (request.kind === 'step') return prepare(request.input);
  const { kind, input, limits } = request;
  // A Buffer arrives as a plain Uint8Array.
  const data = typeof input === 'string' ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  return kind === 'mail-parts' ? readMailParts(data) : readDocument(kind, data, limits);
}

/** The steering detector's verdicts (trust/screen.ts screens with them), and the hash embeddings when asked. */
async function prepare({ texts, hashed }: StepInput): Promise<PreparedStep> {
  const steering = texts.map((text) => detectSteering(text));
  return hashed ? { steering, embeddings: await hashEmbedder(hashed.dimensions).embed(texts) } : { steering };
}
