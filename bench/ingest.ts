/**
 * Ingestion throughput of a 50-file batch of mixed documents, and OCR time per page.
 *
 *   npx tsx bench/ingest.ts [--files 50] [--embedder local|hash] [--ocr-pages 5]
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/orgmem_test npx tsx bench/ingest.ts
 *
 * A real server (embedded PGlite, or a fresh PostgreSQL database with TEST_DATABASE_URL) with its
 * worker and the local file store. The files (PDF, DOCX, PPTX, HTML, CSV, Markdown, each a few
 * pages of text) are generated once, dropped with async_ingest=true in one multipart request,
 * and the batch is polled until complete: files/s and MB/s are over that whole span (upload,
 * store, queue, read, chunk, embed, insert). OCR is timed separately on page-sized images (A4 at
 * 150 dpi is 1240 px wide) of 40 lines, after one warm-up page.
 */
import { parseArgs } from 'node:util';
import { ocrImage } from '../src/services/files/ocr.ts';
import { newTenant } from '../test/support/client.ts';
import { csv, docx, html, pdf, png, pptx } from '../test/support/documents.ts';
import { startServer } from '../test/support/server.ts';
import { postForm, type JsonFile } from '../test/support/transports.ts';
import { round, summary } from './lib/stats.ts';

const { values } = parseArgs({
  options: { files: { type: 'string', default: '50' }, embedder: { type: 'string', default: 'local' }, 'ocr-pages': { type: 'string', default: '5' } },
});
const FILES = Number(values.files);

const WORDS = 'harbour tide ferry pilot buoy anchor survey dredging pier lighthouse budget schedule crane cargo berth'.split(' ');
/** Deterministic prose: `n` sentences of 12 words. */
const sentences = (seed: number, n: number) =>
  Array.from({ length: n }, (_, i) => `${Array.from({ length: 12 }, (_, k) => WORDS[(seed * 7 + i * 3 + k * 5) % WORDS.length]).join(' ')}.`);
const page = (seed: number) => sentences(seed, 40);

async function makeFile(i: number): Promise<JsonFile> {
  const text = page(i);
  const as = (filename: string, content_type: string, data: Buffer | string): JsonFile => ({
    filename,
    content_type,
    data: Buffer.from(data).toString('base64'),
  });
  switch (i % 6) {
    case 0:
      return as(`f${i}.pdf`, 'application/pdf', await pdf([...text, ...page(i + 1), ...page(i + 2)]));
    case 1:
      return as(`f${i}.docx`, 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', await docx(text));
    case 2:
      return as(
        `f${i}.pptx`,
        'application/vnd.openxmlformats-officedocument.presentationml.presentation',
        await pptx([text.slice(0, 10), text.slice(10, 20), text.slice(20, 30)]),
      );
    case 3:
      return as(`f${i}.html`, 'text/html', html(text.map((s) => `<p>${s}</p>`).join('')));
    case 4:
      return as(`f${i}.csv`, 'text/csv', csv(text.map((s, k) => [String(k), s])));
    default:
      return as(`f${i}.md`, 'text/markdown', `# Notes ${i}\n\n${text.join('\n\n')}`);
  }
}

const files = await Promise.all(Array.from({ length: FILES }, (_, i) => makeFile(i)));
const bytes = files.reduce((n, f) => n + Buffer.from(f.data, 'base64').length, 0);
const server = await startServer({ ORGMEM_EMBEDDER: values.embedder! });
try {
  const t = await newTenant(server.url, server.adminKey);
  const started = performance.now();
  const drop = await postForm(server.url, t.key, '/v1/memory/collections/bench/drop?async_ingest=true', { files });
  if (drop.status !== 202) throw new Error(`drop answered ${drop.status}: ${JSON.stringify(drop.body)}`);
  let batch;
  do {
    await new Promise((r) => setTimeout(r, 100));
    batch = (await t.api('GET', `/v1/memory/ingest/batch/${drop.body.batch_id}`)).body;
  } while (!batch.complete);
  const seconds = (performance.now() - started) / 1000;
  const chunks = batch.files.reduce((n: number, f: { chunks: number }) => n + f.chunks, 0);
  console.log(
    JSON.stringify({
      database: server.app.db.kind,
      embedder: values.embedder,
      files: FILES,
      mb: round(bytes / 1e6, 2),
      done: batch.done,
      failed: batch.failed,
      chunks,
      seconds: round(seconds, 2),
      files_per_s: round(FILES / seconds, 2),
      mb_per_s: round(bytes / 1e6 / seconds, 3),
    }),
  );
} finally {
  await server.close();
}

// 40 lines of ten words in 25 px type on 1240 px (A4 at 150 dpi): about what a scanned page of prose holds.
const ocrLines = (seed: number) => page(seed).map((s) => s.split(' ').slice(0, 10).join(' '));
const pages = Array.from({ length: Number(values['ocr-pages']) + 1 }, (_, i) => png(ocrLines(i), { width: 1240, lineHeight: 40, fontPx: 25 }));
const times: number[] = [];
for (const [i, png] of pages.entries()) {
  const t0 = performance.now();
  const text = await ocrImage(png, 600_000);
  if (i > 0) times.push(performance.now() - t0);
  if (!text.includes('harbour')) throw new Error('OCR did not read the page');
}
console.log(JSON.stringify({ ocr_ms_per_page: summary(times), pages: times.length, page: '1240x1700 px, 40 lines of 10 words in 25 px type' }));
process.exit(0);
