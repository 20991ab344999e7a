import { createRequire } from 'node:module';
import path from 'node:path';
import type { Worker } from 'tesseract.js';
import { FileLimitError } from './unreadable.ts';

/**
 * Text in images, read offline by tesseract.js from the English model shipped in
 * `@tesseract.js-data/eng` (`4.0.0_best_int`: the LSTM-only integer model, as accurate as
 * `4.0.0` on printed text and about 15% faster). Nothing is downloaded at run time: in Node the
 * engine itself is required from `tesseract.js-core`, and no traineddata cache is read or written.
 * One worker per process, made on first use and reused; recognitions take turns on it.
 */

/**
 * Lines read with less confidence (0-100) are dropped: in photos without text tesseract reads
 * shapes as junk lines scoring 20-55, while printed text scores above 90.
 */
const MIN_LINE_CONFIDENCE = 60;

const require = createRequire(import.meta.url);
const LANG_PATH = path.join(path.dirname(require.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int');

let worker: Promise<Worker> | null = null;
let queue: Promise<unknown> = Promise.resolve();

/**
 * The text tesseract reads with confidence in the image, by lines and paragraphs; '' when none.
 * Tesseract runs in its own worker thread; a recognition past `timeoutMs` (ORGMEM_PARSE_TIMEOUT_SECONDS)
 * ends that worker and fails with a FileLimitError, and the next image starts a new one.
 */
export function ocrImage(image: Buffer, timeoutMs: number): Promise<string> {
  const turn = queue.then(async () => {
    const recognition = (await ocrWorker()).recognize(image, {}, { blocks: true, text: false });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        void closeOcr();
        reject(new FileLimitError(`reading its text took longer than the limit of ${timeoutMs / 1000} s (ORGMEM_PARSE_TIMEOUT_SECONDS)`));
      }, timeoutMs);
    });
    recognition.catch(() => undefined);
    const { data } = await Promise.race([recognition, late]).finally(() => clearTimeout(timer));
    const paragraphs = (data.blocks ?? []).flatMap((b) => b.paragraphs);
    return paragraphs
      .map((p) =>
        p.lines
          .filter((l) => l.confidence >= MIN_LINE_CONFIDENCE)
          .map((l) => l.text.trim())
          .join('\n'),
      )
      .filter(Boolean)
      .join('\n\n');
  });
  queue = turn.catch(() => undefined);
  return turn;
}

/** Ends the worker (at shutdown); the next recognition starts a new one. */
export async function closeOcr(): Promise<void> {
  const current = worker;
  worker = null;
  if (current) await (await current.catch(() => null))?.terminate();
}

function ocrWorker(): Promise<Worker> {
  if (worker) return worker;
  const starting = (async () => {
    const { createWorker, OEM } = await import('tesseract.js');
    // Without an errorHandler a failed job (an unreadable image) is also thrown out of the
    // worker's message handler, which ends the process; the job's promise rejects either way.
    return createWorker('eng', OEM.LSTM_ONLY, { langPath: LANG_PATH, gzip: true, cacheMethod: 'none', errorHandler: () => undefined });
  })();
  // A failed start is not kept: the next image tries again.
  starting.catch(() => {
    if (worker === starting) worker = null;
  });
  worker = starting;
  return starting;
}
