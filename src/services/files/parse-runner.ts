import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Config } from '../../core/config.ts';
import { countRunnerKill, type RunnerKill } from '../../ports/metrics.ts';
import type { NewMemory } from '../memory/memories.ts';
import type { Steering } from '../trust/steering.ts';
import type { DocumentKind, ReadDocument } from './formats.ts';
import type { MailParts } from './mail-parts.ts';
import { FileLimitError, type ReadLimits } from './unreadable.ts';

/**
 * The bounded runner: every heavy read (PDF, office files, HTML, mail) runs in a worker thread
 * with a heap cap (ORGMEM_PARSE_MAX_MEMORY_MB) and a deadline (ORGMEM_PARSE_TIMEOUT_SECONDS), at
 * most ORGMEM_PARSE_CONCURRENCY at a time per process. A file that exhausts either ends its worker,
 * never the process: it fails with a FileLimitError naming the setting, and the next read gets a
 * fresh worker. Workers are reused while they live and end after a while idle, so a large read's
 * memory goes back to the system. docs/contract.md, "Limits", lists what each limit refuses.
 *
 * A file's other CPU work runs here too, under the same limits: cutting its text into chunks
 * (`chunkFile`) and, a step of chunks at a time, the steering detector and the hash embedder
 * (`prepareStep`). A 10 MB text is seconds of that work, which on the event loop every request
 * of every tenant would wait behind (bench/README.md, "Noisy neighbours").
 */
export type ParseLimits = Config['parse'];

/** A file's read text and what its chunks are labelled with (file-memories.ts, fileMemories). */
export interface ChunkInput {
  file: { key: string; filename: string; content_type: string };
  read: Pick<ReadDocument, 'text' | 'written' | 'parts'>;
  source: string;
}
/** A step of chunks to store: their texts, and the hash embedder's dimensions when the app embeds with it (`Embedder.hashed`). */
export interface StepInput {
  texts: string[];
  hashed?: { dimensions: number };
}
/** The detector's verdict on each text and, when asked, its hash embedding. */
export interface PreparedStep {
  steering: Steering[];
  embeddings?: number[][];
}

/** What a worker answers: the text and the document's date (a mail's parts, a file's chunks, a prepared step), or the reader's error (its name keeps pdf.js' PasswordException). */
export type ParseReply = { value: ReadDocument | MailParts | NewMemory[] | PreparedStep } | { error: { name: string; message: string; limit: boolean } };
export type ParseRequest = (
  | {
      /** A document to read as text, or `mail-parts`: a received message's parts for the mail drop (mail-parts.ts). */
      kind: DocumentKind | 'mail-parts';
      input: Buffer | string;
    }
  | { kind: 'chunks'; input: ChunkInput }
  | { kind: 'step'; input: StepInput }
) & { limits: ReadLimits };

const IDLE_MS = 30_000;

interface Runner {
  worker: Worker;
  memoryMb: number;
  idle?: NodeJS.Timeout;
  /** While idle: takes it off the idle list should it end. */
  gone?: () => void;
}

const idle: Runner[] = [];
const waiting: Array<() => void> = [];
let active = 0;

/**
 * The raw text of a document and when it says it was written, read by a runner under the limits;
 * what the reader throws comes back as an Error of the same name and message.
 */
export async function parseDocument(kind: DocumentKind, input: Buffer | string, limits: ParseLimits): Promise<ReadDocument> {
  return (await run({ kind, input }, limits)) as ReadDocument;
}

/** A file's read text as memories, one per chunk (file-memories.ts, fileMemories), cut by a runner. */
export async function chunkFile(input: ChunkInput, limits: ParseLimits): Promise<NewMemory[]> {
  return (await run({ kind: 'chunks', input }, limits)) as NewMemory[];
}

/** A step of a file's chunks screened (trust/steering.ts) and, with the hash embedder, embedded, by a runner. */
export async function prepareStep(input: StepInput, limits: ParseLimits): Promise<PreparedStep> {
  return (await run({ kind: 'step', input }, limits)) as PreparedStep;
}

/** A received message's parts (mail-parts.ts), read by a runner as documents are. */
export async function parseMail(raw: Buffer, limits: ParseLimits): Promise<MailParts> {
  const parts = (await run({ kind: 'mail-parts', input: raw }, limits)) as MailParts;
  // A Buffer arrives as a plain Uint8Array.
  for (const a of parts.attachments) a.content = Buffer.from(a.content.buffer, a.content.byteOffset, a.content.byteLength);
  return parts;
}

type Work = DistributiveOmit<ParseRequest, 'limits'>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
type Value = Extract<ParseReply, { value: unknown }>['value'];

async function run(work: Work, limits: ParseLimits): Promise<Value> {
  while (active >= limits.concurrency) await new Promise<void>((wake) => waiting.push(wake));
  active++;
  try {
    return await runOnce(work, limits);
  } finally {
    active--;
    waiting.shift()?.();
  }
}

/** Ends the idle runners (at shutdown); a running read keeps its own until it settles. */
export async function closeParsers(): Promise<void> {
  await Promise.all(idle.splice(0).map((r) => (clearTimeout(r.idle), r.worker.terminate())));
}

function runOnce(work: Work, limits: ParseLimits): Promise<Value> {
  const runner = takeIdle(limits.memoryMb) ?? start(limits.memoryMb);
  return new Promise<Value>((resolve, reject) => {
    /** `killed`: the worker ended for its limits or died, counted in the operator's metrics (ports/metrics.ts). */
    const done = (settle: () => void, keep: boolean, killed?: RunnerKill) => {
      clearTimeout(deadline);
      runner.worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      if (keep) putIdle(runner);
      else void runner.worker.terminate();
      if (killed) countRunnerKill(killed);
      settle();
    };
    const deadline = setTimeout(
      () =>
        done(
          () => reject(new FileLimitError(`reading it took longer than the limit of ${limits.timeoutMs / 1000} s (ORGMEM_PARSE_TIMEOUT_SECONDS)`)),
          false,
          'time',
        ),
      limits.timeoutMs,
    );
    const onMessage = (reply: ParseReply) => {
      if ('value' in reply) return done(() => resolve(reply.value), true);
      const { name, message, limit } = reply.error;
      // A reader that failed may have left its heap full (a library's buffers): the worker goes.
      done(() => reject(limit ? new FileLimitError(message) : Object.assign(new Error(message), { name })), false);
    };
    const onError = (err: Error & { code?: string }) => {
      const memory = err.code === 'ERR_WORKER_OUT_OF_MEMORY';
      done(
        () =>
          reject(
            memory
              ? new FileLimitError(`reading it needed more memory than the limit of ${limits.memoryMb} MB (ORGMEM_PARSE_MAX_MEMORY_MB)`)
              : new FileLimitError(`its reader stopped: ${err.message}`),
          ),
        false,
        memory ? 'memory' : 'crash',
      );
    };
    const onExit = (code: number) => done(() => reject(new FileLimitError(`its reader stopped (exit code ${code})`)), false, 'crash');
    runner.worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    const read: ReadLimits = { pages: limits.pages, depth: limits.depth, unzippedBytes: limits.unzippedBytes, chars: limits.chars };
    runner.worker.postMessage({ ...work, limits: read } as ParseRequest);
  });
}

function takeIdle(memoryMb: number): Runner | undefined {
  const i = idle.findIndex((r) => r.memoryMb === memoryMb);
  if (i < 0) return undefined;
  const [runner] = idle.splice(i, 1);
  clearTimeout(runner!.idle);
  runner!.worker.off('exit', runner!.gone!);
  return runner;
}

function putIdle(runner: Runner): void {
  runner.gone = () => {
    clearTimeout(runner.idle);
    if (idle.includes(runner)) idle.splice(idle.indexOf(runner), 1);
  };
  runner.idle = setTimeout(() => void runner.worker.terminate(), IDLE_MS).unref();
  runner.worker.once('exit', runner.gone);
  idle.push(runner);
}

/**
 * A new worker. From the bundle (dist/, esbuild's second entry point, package.json `build:js`)
 * it is `parse-worker.js` beside the chunk holding this code; from the TypeScript sources (tests,
 * tsx) it is `parse-worker.ts`, loaded through tsx. Unreferenced: a command that has nothing
 * else left to do does not wait for an idle runner.
 */
function start(memoryMb: number): Runner {
  const resourceLimits = { maxOldGenerationSizeMb: memoryMb, maxYoungGenerationSizeMb: Math.min(64, Math.max(8, memoryMb / 8)) };
  const fromSources = import.meta.url.endsWith('.ts');
  const worker = fromSources
    ? new Worker(
        `import(${JSON.stringify(tsxApi())})` +
          `.then(({ tsImport }) => tsImport(${JSON.stringify(new URL('./parse-worker.ts', import.meta.url).href)}, ${JSON.stringify(import.meta.url)}))`,
        { eval: true, resourceLimits },
      )
    : new Worker(new URL('./parse-worker.js', import.meta.url), { resourceLimits });
  worker.unref();
  return { worker, memoryMb };
}

/** tsx's ESM API (`tsx/esm/api`, its `import` condition), found from its package: a worker's eval code resolves from the working directory. */
function tsxApi(): string {
  return pathToFileURL(path.join(path.dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;
}
