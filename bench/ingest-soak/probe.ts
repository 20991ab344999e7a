/**
 * The soak's probe (bench/ingest-soak/run.ts), in a process of its own so the feeders' work
 * (building multipart bodies and mail) never delays its clock: health and a search in turn every
 * 250 ms for `seconds`, then the latencies in milliseconds as JSON on stdout.
 *
 *   node --import tsx bench/ingest-soak/probe.ts <url> <key> <seconds>
 */
const [url, key, seconds] = process.argv.slice(2) as [string, string, string];
const deadline = Date.now() + Number(seconds) * 1000;
const out = { health: [] as number[], search: [] as number[], failures: 0, resets: 0 };
for (let i = 0; Date.now() < deadline; i++) {
  const search = i % 2 === 1;
  const t0 = performance.now();
  try {
    const res = await fetch(`${url}${search ? '/v1/memory/search' : '/v1/memory/health'}`, {
      method: search ? 'POST' : 'GET',
      headers: { authorization: `Bearer ${key}`, ...(search ? { 'content-type': 'application/json' } : {}) },
      body: search ? JSON.stringify({ query: 'ferry timetable', limit: 5 }) : undefined,
    });
    await res.text();
    if (res.status !== 200) out.failures++;
    (search ? out.search : out.health).push(performance.now() - t0);
  } catch {
    out.resets++;
  }
  await new Promise((r) => setTimeout(r, 250));
}
process.stdout.write(JSON.stringify(out));
