/**
 * Ingestion soak: file bombs among ordinary files for a fixed time, against `orgmem serve` (the
 * compiled CLI, its worker in the same process, as the embedded default runs), while a probe
 * measures the API and a sampler the process's memory.
 *
 *   npm run build:js && node --import tsx bench/ingest-soak/run.ts [--minutes 10] [--port 18301] [--embedder hash|local] [--postgres]
 *
 * Two feeders loop until the time is up. The sync feeder drops the bombs with ordinary files
 * (`C/drop`) and hands over a mail whose HTML body is nested 200,000 deep; the async feeder drops
 * the bombs, a 9.9 MB text and ordinary files with `async_ingest=true` and waits for the batch.
 * The bombs: a PDF of 100,000 empty pages (10.28 MB), HTML nested 200,000 deep, a .docx whose
 * document part inflates to 1.1 GB. The probe (probe.ts, a process of its own so the feeders'
 * work never delays its clock) calls health and a search in turn, every 250 ms;
 * the sampler reads the server's resident memory from /proc every 250 ms (Linux), and its peak
 * (VmHWM) at the end. Every bomb must fail with its limit named and every ordinary file must be
 * stored, or the run exits 1. A request that gets no answer (a reset connection) is sent again and
 * counted (`connection_resets`). The embedded database lives in a temporary directory; with
 * --postgres, a fresh database `orgmem_soak` at BENCH_DATABASE_URL
 * (default postgres://postgres@127.0.0.1:5432/postgres). Results go to bench/results/.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { manyPagePdf, nestedHtml, zipBombDocx } from '../../test/support/bombs.ts';
import { html } from '../../test/support/documents.ts';
import { postForm, type JsonFile } from '../../test/support/transports.ts';
import { createDatabase, createTenantKey, startOrgmem } from '../lib/server.ts';
import { round, summary } from '../lib/stats.ts';

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    port: { type: 'string', default: '18301' },
    embedder: { type: 'string', default: 'hash' },
    postgres: { type: 'boolean', default: false },
  },
});
const MINUTES = Number(args.minutes);
const SECRET = 'ingest-soak-inbound-secret-0123456789';

const as = (filename: string, content_type: string, data: Buffer | string): JsonFile => ({
  filename,
  content_type,
  data: Buffer.from(data).toString('base64'),
});
const prose = (bytes: number) => {
  const parts: string[] = [];
  for (let i = 0, size = 0; size < bytes; i++) {
    const p = `Paragraph ${i}: the ferry timetable changes on the ${i % 28} of the month, and the harbour office answers questions until six.\n\n`;
    parts.push(p);
    size += p.length;
  }
  return parts.join('').slice(0, bytes);
};

const bombs = [
  { file: as('pages.pdf', 'application/pdf', manyPagePdf(100_000)), limit: 'ORGMEM_PARSE_MAX_PAGES' },
  { file: as('deep.html', 'text/html', nestedHtml(200_000)), limit: 'ORGMEM_PARSE_MAX_DEPTH' },
  {
    file: as('bomb.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', await zipBombDocx(1100)),
    limit: 'ORGMEM_PARSE_MAX_UNZIPPED_MB',
  },
];
const ordinary = (round: number) => [
  as(`notes-${round}.md`, 'text/markdown', `# Notes ${round}\n\nThe pilot boards at buoy ${round}.`),
  as(`page-${round}.html`, 'text/html', html(`<h1>Tides ${round}</h1><p>High water at 06:${String(round % 60).padStart(2, '0')}.</p>`)),
  as(`memo-${round}.txt`, 'text/plain', `Memo ${round}: the crane on berth 4 is back in service.`),
];
const bigText = as('big.txt', 'text/plain', prose(9_900_000));
/** Refused whole before any delivery, so the same message serves every round. */
const deepMail = (await new MailComposer({ from: 'soak@localhost', to: 'x@soak.test', subject: 'Deep', html: nestedHtml(200_000) }).compile().build()).toString(
  'base64',
);

const dir = mkdtempSync(join(tmpdir(), 'orgmem-soak-'));
const env: Record<string, string> = { ORGMEM_EMBEDDER: args.embedder, ORGMEM_INBOUND_SECRET: SECRET, ORGMEM_EMAIL_DOMAIN: 'soak.test' };
if (args.postgres)
  env.DATABASE_URL = await createDatabase(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', 'orgmem_soak', true);
else env.ORGMEM_DATA_DIR = join(dir, 'data');
const server = await startOrgmem(env, Number(args.port), { worker: true });
const key = createTenantKey(env, 'soak');
/**
 * A request that got no answer at all (the connection reset) is counted by route and sent again,
 * as a load balancer would, so the run goes on and the count is reported.
 */
const resets: Record<string, number> = {};
async function answered<T>(route: string, send: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await send();
    } catch (err) {
      const name = route.replace(/[0-9a-f-]{36}/g, ':id');
      resets[name] = (resets[name] ?? 0) + 1;
      if (!running()) throw err;
    }
  }
}
const call = (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> =>
  answered(`${method} ${path}`, async () => {
    const res = await fetch(server.url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  });
const form = (path: string, fields: Record<string, unknown>) => answered(`POST ${path}`, () => postForm(server.url, key, path, fields));

const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))![1]) / 1024;
const hwmMb = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))![1]) / 1024;
const startRss = rssMb();
const deadline = Date.now() + MINUTES * 60_000;
const running = () => Date.now() < deadline;
const problems: string[] = [];
const counts = { syncRounds: 0, asyncBatches: 0, mails: 0, bombsRefused: 0, ordinaryStored: 0, bigTextChunks: 0 };
let peakRss = startRss;

const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb())), 250);

/** The probe in its own process (probe.ts), for as long as the feeders run. */
function probe(): Promise<{ health: number[]; search: number[]; failures: number; resets: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/ingest-soak/probe.ts', server.url, key, String(MINUTES * 60)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  return new Promise((resolve) => child.on('exit', () => resolve(JSON.parse(out))));
}

function checkFiles(files: Array<{ filename: string; status?: string; state?: string; detail?: string; error?: string; chunks: number }>) {
  for (const f of files) {
    const bomb = bombs.find((b) => b.file.filename === f.filename);
    const ok = f.status === 'stored' || f.state === 'done';
    const reason = f.detail ?? f.error ?? '';
    if (bomb) {
      if (ok || !reason.includes(bomb.limit)) problems.push(`${f.filename}: expected a refusal naming ${bomb.limit}, got ${f.status ?? f.state} ${reason}`);
      else counts.bombsRefused++;
    } else if (!ok) problems.push(`${f.filename}: not stored: ${reason}`);
    else if (f.filename === 'big.txt') counts.bigTextChunks = f.chunks;
    else counts.ordinaryStored++;
  }
}

async function syncFeeder() {
  for (let round = 0; running(); round++) {
    const res = await form('/v1/memory/collections/soak-sync/drop', { files: [...bombs.map((b) => b.file), ...ordinary(round)] });
    if (res.status !== 201) problems.push(`sync drop answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
    else checkFiles(res.body.files);
    counts.syncRounds++;
    const to = (await call('GET', '/v1/memory/email/address')).body.address;
    const mail = await answered('POST /v1/memory/email/inbound', () =>
      fetch(`${server.url}/v1/memory/email/inbound`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-inbound-secret': SECRET },
        body: JSON.stringify({ to, from: 'soak@localhost', raw: deepMail }),
      }),
    );
    if (mail.status !== 422) problems.push(`nested mail answered ${mail.status}`);
    counts.mails++;
  }
}

async function asyncFeeder() {
  for (let round = 0; running(); round++) {
    const files = [...bombs.map((b) => b.file), ...ordinary(1000 + round), ...(round % 3 === 0 ? [bigText] : [])];
    const res = await form('/v1/memory/collections/soak-async/drop', { async_ingest: 'true', files });
    if (res.status !== 202) {
      problems.push(`async drop answered ${res.status}`);
      continue;
    }
    for (;;) {
      const batch = await call('GET', `/v1/memory/ingest/batch/${res.body.batch_id}`);
      if (batch.body.complete) {
        checkFiles(batch.body.files);
        break;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    counts.asyncBatches++;
  }
}

const started = Date.now();
const [latency] = await Promise.all([probe(), syncFeeder(), asyncFeeder()]);
clearInterval(sampler);
const result = {
  benchmark: 'ingest-soak',
  date: new Date().toISOString(),
  database: args.postgres ? 'postgres' : 'embedded',
  embedder: args.embedder,
  minutes: round((Date.now() - started) / 60_000, 2),
  ...counts,
  health_ms: summary(latency.health),
  search_ms: summary(latency.search),
  probe_failures: latency.failures,
  probe_resets: latency.resets,
  connection_resets: resets,
  rss_mb: { start: round(startRss), peak_sampled: round(peakRss), peak_hwm: round(hwmMb()), end: round(rssMb()) },
  problems,
};
await server.stop();
rmSync(dir, { recursive: true, force: true });
mkdirSync('bench/results', { recursive: true });
writeFileSync(`bench/results/ingest-soak-${Date.now()}.json`, JSON.stringify(result, null, 2));
console.log(JSON.stringify(result, null, 2));
if (problems.length) process.exit(1);
