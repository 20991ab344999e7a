/**
 * The dashboard's weight and first load: the built files (raw and gzip), then, in Debian's
 * chromium with a cold cache each time, the time from navigation to the sign-in form, and from
 * pressing "Sign in" to the collections list, against a server with an embedded database.
 *
 *   npm run build:web && npx tsx bench/web-load.ts [--runs 10]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { WEB_DIR } from '../host/web-routes.ts';
import { launchBrowser, openPage } from '../test/support/browser.ts';
import { startServer } from '../test/support/server.ts';
import { summary } from './lib/stats.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '10' } } });

const kb = (n: number) => `${(n / 1024).toFixed(1)} kB`.padStart(10);
let raw = 0;
let gz = 0;
for (const f of [...readdirSync(join(WEB_DIR, 'assets')).map((a) => join('assets', a)), 'index.html']) {
  const data = readFileSync(join(WEB_DIR, f));
  const zipped = gzipSync(data).length;
  raw += data.length;
  gz += zipped;
  console.log(`${f.padEnd(34)} ${kb(data.length)} ${kb(zipped)} gzip`);
}
console.log(`${'total'.padEnd(34)} ${kb(raw)} ${kb(gz)} gzip`);

const server = await startServer({ ORGMEM_EMBEDDER: 'hash' }, { worker: false });
const browser = await launchBrowser();
try {
  const toForm: number[] = [];
  const toList: number[] = [];
  let firstLoadBytes = 0;
  for (let i = 0; i < Number(values.runs); i++) {
    const page = await openPage(browser);
    const started = performance.now();
    await page.goto(`${server.url}/`);
    await page.getByLabel('API key').waitFor();
    toForm.push(performance.now() - started);
    // What the sign-in page fetched (the page, its script and stylesheet; views load when opened).
    firstLoadBytes = await page.evaluate(() =>
      (performance.getEntriesByType('navigation') as PerformanceResourceTiming[])
        .concat(performance.getEntriesByType('resource') as PerformanceResourceTiming[])
        .reduce((n, e) => n + e.encodedBodySize, 0),
    );
    await page.getByLabel('API key').fill(server.adminKey);
    const signIn = performance.now();
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Collections' }).waitFor();
    toList.push(performance.now() - signIn);
    await page.context().close();
  }
  console.log(`the sign-in page fetches ${kb(firstLoadBytes).trim()} (uncompressed: the server does not compress)`);
  console.log(`navigation to the sign-in form, cold cache (ms, ${toForm.length} runs):`, summary(toForm));
  console.log(`"Sign in" to the collections list (ms):`, summary(toList));
} finally {
  await browser.close();
  await server.close();
}
