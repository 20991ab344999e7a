/**
 * Consolidation quality and cost (docs/consolidation.md): how well a run's merges find planted
 * near-duplicates, how long a run takes, and what applying its merges does to LoCoMo retrieval.
 *
 * Planted set (the default): a fresh PostgreSQL database and a real server (the API and its worker,
 * as `npm start` runs), one collection of `--total` memories from templates: `--clusters` clusters
 * of 2 to 4 near-copies (the original and one to three variants: case and
 * punctuation, one word for a synonym, a word added, a word dropped), whose membership is known,
 * and distinct memories for the rest.
 * For each `--similarity`, a run (`POST C/consolidate`, the change set polled until open), then
 * against the planted truth:
 *
 * - merge precision: of the pairs a merge proposes (the keeper with each memory it replaces), the
 *   share that are two members of one planted cluster;
 * - merge recall: of the planted same-cluster pairs, the share inside one proposed merge (any two
 *   of its memories, keeper or not);
 * - the change set's `took_ms`, the wall time from the request to the open change set, the changes
 *   of each kind;
 * - why each missed pair was missed, the pairs the merge rule links at the threshold, the share of
 *   planted pairs at least that alike that the run's hashing compares (docs/consolidation.md,
 *   "Finding near-duplicates").
 *
 *   node --import tsx bench/consolidation.ts [--embedder local|hash] [--similarity 0.9,0.85,0.95]
 *       [--total 10000] [--clusters 500] [--db orgmem_bench_consolidation] [--keep] [--skip-load] [--show 8] [--dry]
 *
 * LoCoMo (`--locomo DB`): the database bench/locomo/run.ts loaded and kept (`--db DB --keep`; its
 * key is in /tmp/DB.key, where that script writes it): a run over each of its collections, every
 * merge applied (`POST C/changesets/{id}/apply` with the merge changes' ids), the counts printed.
 * run.ts with `--skip-load` then measures the table again over the same memories
 * (bench/README.md, "Consolidation").
 *
 *   node --import tsx bench/consolidation.ts --locomo orgmem_bench_consolidation_locomo
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { nearPairs } from '../src/services/consolidation/near-pairs.ts';
import { sameValues, valueChanged } from '../src/services/consolidation/proposals.ts';
import { api, at, createDatabase, createTenantKey, dropDatabase, startOrgmem } from './lib/server.ts';
import { pool, rng, round } from './lib/stats.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'orgmem_bench_consolidation' },
    base: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    port: { type: 'string', default: '18952' },
    embedder: { type: 'string', default: 'local' },
    similarity: { type: 'string', default: '0.9,0.85,0.95' },
    total: { type: 'string', default: '10000' },
    clusters: { type: 'string', default: '500' },
    keep: { type: 'boolean', default: false },
    'skip-load': { type: 'boolean', default: false },
    // How many wrong and missed pairs to print, per threshold.
    show: { type: 'string', default: '8' },
    locomo: { type: 'string' },
    // Prints the planted corpus's counts and a few clusters, and stops: no database, no server.
    dry: { type: 'boolean', default: false },
  },
});
const log = (msg: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const COLLECTION = 'planted';

// ---------------------------------------------------------------------------------------------
// The planted corpus. Each template has slots; two distinct memories of one template differ in at
// least two slots (checked below), so that no two distinct ones are one value apart. Lowercase
// words in `{{a|b}}` are the places a synonym may replace; `[word]` is a word a variant may drop;
// `^` is where a variant may add a word. The base text keeps the first synonym, keeps the bracketed
// word and adds nothing.
// ---------------------------------------------------------------------------------------------

/** A pool written as one string: its values, `|` between them. */
const list = (values: string) => values.split('|');

const POOLS: Record<string, string[]> = {
  P: list(
    'Ana|Bruno|Chen|Dmitri|Elena|Farah|Gustavo|Hana|Ibrahim|Julia|Kenji|Lena|Marco|Nadia|Omar|Priya|Quentin|Rosa|Sven|Tariq|Uma|Viktor|Wen|Yusuf|Zoe|Amara|Bilal|Carmen|Diego|Eva|Felix|Greta|Hugo|Ines|Jonas|Kira|Luca|Maya|Nikolai|Olga|Pablo|Rhea|Samir|Tomas|Ulla|Vera|Walter|Ximena|Yara|Zane|Aiko|Bea|Cyrus|Dalia|Emil|Freya|Goran|Helga|Ivo',
  ),
  TEAM: list(
    'billing|payments|search|mobile|data platform|security|growth|onboarding|infrastructure|support tooling|identity|analytics|checkout|notifications|machine learning|design systems|compliance|logistics|pricing|partner integrations',
  ),
  SVC: list(
    'invoice exporter|auth gateway|ledger service|image resizer|email relay|feature flag store|session cache|report builder|webhook dispatcher|tax calculator|search indexer|audit logger|rate limiter|fraud scorer|catalog API|shipping quoter|payout scheduler|metrics collector|consent registry|document renderer|inventory sync|push gateway|billing cron|export worker|translation proxy',
  ),
  CITY: list(
    'Lisbon|Porto|Berlin|Munich|Warsaw|Krakow|Madrid|Valencia|Lyon|Toulouse|Oslo|Bergen|Dublin|Cork|Vienna|Graz|Prague|Brno|Milan|Turin|Athens|Tallinn|Riga|Vilnius|Helsinki|Zagreb|Ljubljana|Seville|Bilbao|Rotterdam|Utrecht|Ghent|Antwerp|Basel|Zurich|Geneva|Nairobi|Lagos|Osaka|Seoul',
  ),
  DAY: list('Monday|Tuesday|Wednesday|Thursday|Friday'),
  TIME: list('9 am|10 am|11 am|noon|2 pm|3 pm|4 pm|5 pm'),
  DRINK: list('oat milk lattes|green tea|black coffee|sparkling water|chai|espresso|hot chocolate|mint tea|cold brew|orange juice|rooibos|flat whites'),
  FOOD: list('sushi|ramen|vegetarian curry|tapas|pizza|falafel wraps|pho|dumplings|grilled fish|lentil soup|burritos|pad thai|salads|pastries'),
  HOBBY: list(
    'bouldering|sailing|chess|pottery|trail running|birdwatching|jazz piano|woodworking|salsa dancing|astronomy|rowing|baking sourdough|cycling|photography|gardening',
  ),
  LANG: list('Rust|Go|Python|TypeScript|Kotlin|Elixir|Scala|Java|Swift|Haskell|Ruby|C sharp'),
  TOOL: list('Grafana|Jira|Linear|Sentry|Datadog|Terraform|Kibana|PagerDuty|Notion|Figma|Metabase|Airflow|Vault|Buildkite|Honeycomb'),
  CUST: list(
    'Acme Corp|Globex|Initech|Umbrella Health|Stark Logistics|Wayne Foods|Hooli|Vandelay Imports|Soylent Labs|Tyrell Energy|Cyberdyne Retail|Wonka Sweets|Oscorp Media|Gringotts Bank|Monarch Travel',
  ),
  NUM: list('3|4|5|6|8|10|12|15|20|25|30|45|60|90'),
  YEAR: list('2015|2016|2017|2018|2019|2020|2021|2022|2023|2024'),
  DOC: list('runbook|postmortem|design doc|onboarding guide|release checklist|security review|budget sheet|roadmap|style guide|API reference'),
  PET: list('a beagle|two cats|a parrot|a rescue greyhound|a tortoise|a border collie|three goldfish|a Maine Coon|a pair of rabbits'),
  SPORT: list('football|basketball|tennis|volleyball|handball|cricket|rugby|ice hockey|padel|badminton'),
  MONTH: list('January|February|March|April|May|June|July|August|September|October|November|December'),
  DB: list('PostgreSQL|MySQL|Redis|Cassandra|MongoDB|ClickHouse|Elasticsearch|DynamoDB|SQLite|Kafka'),
  CLOUD: list('AWS|Google Cloud|Azure|Hetzner|OVH|DigitalOcean|Scaleway|Fly.io'),
  BOOK: list('Dune|Middlemarch|The Left Hand of Darkness|Moby Dick|Beloved|Neuromancer|Persepolis|The Remains of the Day|Pachinko|Solaris'),
};

const TEMPLATES: Array<{ category: string; text: string }> = [
  { category: 'preference', text: '{P} {{prefers|likes}} {DRINK} in the morning and ^ switches to {DRINK} [right] after lunch.' },
  { category: 'fact', text: 'The {TEAM} team {{deploys|ships}} the {SVC} every {DAY} at {TIME} from the [main] branch.' },
  { category: 'fact', text: '{P} moved from {CITY} to {CITY} in {YEAR} to {{join|work with}} the {TEAM} team.' },
  { category: 'procedure', text: 'Before paging {P}, ^ check the {SVC} dashboards in {TOOL} and the [latest] {DOC}.' },
  { category: 'fact', text: 'The {SVC} stores its state in {DB} on {CLOUD} and keeps [daily] backups for {NUM} days.' },
  { category: 'preference', text: '{P} {{enjoys|loves}} {HOBBY} on weekends and ^ cooks {FOOD} for friends on [most] Sundays.' },
  { category: 'fact', text: '{CUST} renewed its contract in {MONTH} and asked the {TEAM} team for a [quarterly] review.' },
  { category: 'episode', text: 'During the {MONTH} outage the {SVC} {{failed|broke}} for {NUM} minutes until {P} [finally] rolled it back.' },
  { category: 'fact', text: '{P} owns the {DOC} for the {SVC} and ^ reviews it with {P} [once] every quarter.' },
  { category: 'preference', text: '{P} {{wants|asks for}} code reviews in {LANG} to be short, ^ with [clear] test names.' },
  { category: 'fact', text: '{P} has {PET} and ^ walks to the {CITY} office [most] days.' },
  { category: 'fact', text: 'The {TEAM} team {{migrated|moved}} the {SVC} from {DB} to {DB} in {YEAR} to cut [query] latency.' },
  { category: 'episode', text: '{P} presented the {DOC} for {CUST} at the offsite in {CITY} ^ and got [useful] feedback.' },
  { category: 'preference', text: '{P} {{plays|watches}} {SPORT} on {DAY} evenings and ^ avoids meetings after {TIME}.' },
  { category: 'fact', text: '{CUST} pays through the {SVC} and needs invoices in {NUM} currencies ^ [well] before the fifth of the month.' },
  { category: 'procedure', text: 'To rotate the {SVC} credentials, ^ open {TOOL}, {{update|change}} the secret and tell {P} in the [team] channel.' },
  { category: 'fact', text: '{P} {{speaks|knows}} {LANG} well and is learning {LANG} for the [planned] {TEAM} rewrite.' },
  { category: 'preference', text: '{P} is reading {BOOK} and ^ {{recommends|suggests}} it to anyone who likes {HOBBY}.' },
  { category: 'fact', text: 'The {SVC} alerts go to {TOOL} and ^ page the {TEAM} on-call after {NUM} [failed] checks.' },
  { category: 'episode', text: 'In {MONTH} {YEAR} {P} and {P} hiked near {CITY} and ^ {{got|were}} caught in [heavy] rain.' },
  { category: 'fact', text: '{P} leads the {TEAM} team and ^ reports to {P}, who is based in {CITY}.' },
  { category: 'preference', text: 'For lunch {P} {{usually|normally}} orders {FOOD} and ^ never eats anything with peanuts [in it].' },
  { category: 'fact', text: 'The {TEAM} budget for {CLOUD} is capped at {NUM} thousand euros a month ^ since [last] {MONTH}.' },
  { category: 'procedure', text: 'When {CUST} reports a bug, ^ file it in {TOOL} with the {SVC} logs and {{assign|give}} it to {P}.' },
  { category: 'fact', text: '{P} {{studied|read}} physics in {CITY} before ^ joining the {TEAM} team in {YEAR}.' },
  { category: 'episode', text: '{P} fixed a memory leak in the {SVC} written in {LANG} ^ after a [long] night in {MONTH}.' },
  { category: 'preference', text: '{P} {{dislikes|hates}} video calls before {TIME} and ^ prefers written updates in {TOOL}.' },
  { category: 'fact', text: 'The {SVC} runs {NUM} replicas on {CLOUD} and ^ scales up [early] on {DAY} mornings.' },
  { category: 'fact', text: '{CUST} signed with us in {YEAR} after {P} {{demoed|showed}} the {SVC} in {CITY}.' },
  { category: 'episode', text: '{P} {{celebrated|marked}} {NUM} years at the company with the {TEAM} team at a [small] {FOOD} place in {CITY}.' },
  { category: 'preference', text: '{P} keeps {HOBBY} gear at the office and ^ {{trains|practises}} with {P} [early] on {DAY} mornings.' },
  { category: 'fact', text: 'The {DOC} for the {SVC} lives in {TOOL} and ^ was last {{updated|revised}} by {P} in {MONTH}.' },
  { category: 'fact', text: '{P} grew up in {CITY}, ^ supports the local {SPORT} club and {{visits|sees}} family every [single] summer.' },
  { category: 'procedure', text: 'New hires on the {TEAM} team {{read|study}} the {DOC} first and ^ pair with {P} for {NUM} days.' },
  { category: 'episode', text: '{CUST} escalated a {SVC} incident in {MONTH} and {P} ^ {{called|phoned}} them within [only] {NUM} minutes.' },
  { category: 'preference', text: '{P} {{likes|prefers}} to write {LANG} in a dark theme and ^ keeps the font size [quite] large.' },
];

/** Words a variant may add; lowercase, so an added word is wording, never a new value. */
const ADDED = ['also', 'still', 'usually', 'always', 'now', 'often', 'really'];

interface Planted {
  text: string;
  category: string;
  cluster: number | null;
}

/** One template filled: the base text, its slot values, and the markers a variant uses. */
function fill(template: string, r: ReturnType<typeof rng>): { raw: string; values: string[] } {
  const values: string[] = [];
  const raw = template.replace(/\{([A-Z]+)\}/g, (_m, pool: string) => {
    // The same slot twice (two people, two cities) takes two different values.
    let v = r.pick(POOLS[pool]!);
    while (values.includes(v)) v = r.pick(POOLS[pool]!);
    values.push(v);
    return v;
  });
  return { raw, values };
}

/** The text of a filled template as written: the first synonym, bracketed words kept, nothing added. */
const base = (raw: string) =>
  raw
    .replace(/\{\{([^|}]+)\|[^}]+\}\}/g, '$1')
    .replace(/\[([^\]]+)\]/g, '$1')
    .replace(/\^ /g, '');

type Edit = 'case' | 'synonym' | 'add' | 'drop';

/** A near-copy of a filled template by one edit (null when the template has no place for it). */
function variant(raw: string, edit: Edit, r: ReturnType<typeof rng>): string | null {
  switch (edit) {
    case 'case': {
      // All lower case, no final full stop, "!" for it, or a comma before "and" and ";" for the full stop.
      const text = base(raw);
      const forms = [text.toLowerCase(), text.replace(/\.$/, ''), text.replace(/\.$/, '!'), text.replace(/ and /, ', and ').replace(/\.$/, ';')];
      return r.pick(forms);
    }
    case 'synonym':
      return /\{\{/.test(raw) ? base(raw.replace(/\{\{[^|}]+\|([^}]+)\}\}/g, '$1')) : null;
    case 'add':
      return raw.includes('^ ') ? base(raw.replace('^ ', `${r.pick(ADDED)} `)) : null;
    case 'drop':
      return /\[/.test(raw) ? base(raw.replace(/ ?\[[^\]]+\]/, '')) : null;
  }
}

const wordsKey = (text: string) =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .join(' ');

/** The corpus: distinct memories and clusters, shuffled (seeded: every run plants the same). */
function plant(total: number, clusters: number): Planted[] {
  const r = rng(20261207);
  const used = new Set<string>(); // "template: values with one left out": no two distinct texts one slot apart
  const texts = new Set<string>();
  const draw = () => {
    for (;;) {
      const t = r.int(TEMPLATES.length);
      const { raw, values } = fill(TEMPLATES[t]!.text, r);
      const keys = values.map((_, i) => `${t}:${values.filter((_, j) => j !== i).join('|')}`);
      if (keys.some((k) => used.has(k)) || texts.has(wordsKey(base(raw)))) continue;
      for (const k of keys) used.add(k);
      texts.add(wordsKey(base(raw)));
      return { raw, category: TEMPLATES[t]!.category };
    }
  };
  const out: Planted[] = [];
  for (let c = 0; c < clusters; c++) {
    const { raw, category } = draw();
    const size = 2 + (c % 3); // 2, 3, 4 in turn
    const members = [base(raw)];
    const edits = (['case', 'synonym', 'add', 'drop'] as Edit[]).sort(() => r.next() - 0.5);
    for (const edit of edits) {
      if (members.length === size) break;
      const v = variant(raw, edit, r);
      if (v && !members.includes(v)) members.push(v);
    }
    for (const text of members) out.push({ text, category, cluster: c });
  }
  // Distinct memories up to the total (a template without a place for an edit leaves a cluster smaller).
  while (out.length < total) {
    const { raw, category } = draw();
    out.push({ text: base(raw), category, cluster: null });
  }
  // Fisher-Yates, so that a cluster's members are not stored side by side.
  for (let i = out.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Runs
// ---------------------------------------------------------------------------------------------

interface Change {
  id: string;
  kind: string;
  state: string;
  proposal: { keep_id: string | null; memory_ids: string[] };
  evidence: { similarity: number | null; memories: Array<{ id: string; text: string }> };
}
interface ChangeSet {
  id: string;
  state: string;
  scanned: number;
  took_ms: number | null;
  error: string | null;
  changes: Change[];
}

/** A run over one collection, polled until its change set is no longer running: the set and the wall time. */
async function consolidate(url: string, key: string, collection: string, similarity?: number) {
  const started = performance.now();
  const res = await api<ChangeSet>(url, key, 'POST', `/v1/memory/collections/${collection}/consolidate`, similarity === undefined ? {} : { similarity });
  if (res.status !== 202) throw new Error(`consolidate: ${res.status} ${JSON.stringify(res.body)}`);
  let set = res.body;
  while (set.state === 'running') {
    await new Promise((r) => setTimeout(r, 200));
    const got = await api<ChangeSet>(url, key, 'GET', `/v1/memory/collections/${collection}/changesets/${res.body.id}`);
    if (got.status !== 200) throw new Error(`changeset: ${got.status} ${JSON.stringify(got.body)}`);
    set = got.body;
  }
  if (set.state !== 'open' && set.state !== 'reviewed') throw new Error(`run ${set.state}: ${set.error}`);
  return { set, wall_s: (performance.now() - started) / 1000 };
}

const kinds = (set: ChangeSet) =>
  Object.fromEntries(['merge', 'supersede', 'archive', 'fix_validity'].map((k) => [k, set.changes.filter((c) => c.kind === k).length]));

const cosine = (a: number[], b: number[]) => {
  let [ab, aa, bb] = [0, 0, 0];
  for (let i = 0; i < a.length; i++) [ab, aa, bb] = [ab + a[i]! * b[i]!, aa + a[i]! * a[i]!, bb + b[i]! * b[i]!];
  return ab / Math.sqrt(aa * bb);
};

async function plantedBench() {
  const thresholds = args.similarity!.split(',').map(Number);
  const dbUrl = await createDatabase(args.base!, args.db!, !args['skip-load']);
  const env = { DATABASE_URL: dbUrl, ORGMEM_EMBEDDER: args.embedder!, ORGMEM_DB_POOL: '6', ORGMEM_RATE_LIMIT: 'false' };
  const keyFile = `/tmp/${args.db}.key`;
  const key = args['skip-load'] ? readFileSync(keyFile, 'utf8') : createTenantKey(env, 'consolidation');
  writeFileSync(keyFile, key);
  // With its worker: a run is a background job.
  const server = await startOrgmem(env, Number(args.port), { worker: true });
  const sql = postgres(dbUrl, { max: 2, onnotice: () => {} });
  const report: Record<string, unknown> = { at: new Date().toISOString(), embedder: args.embedder === 'local' ? 'local USE-lite 512-d' : args.embedder };
  try {
    if (!args['skip-load']) {
      const corpus = plant(Number(args.total), Number(args.clusters));
      const started = performance.now();
      const batches = [];
      for (let i = 0; i < corpus.length; i += 100)
        batches.push(corpus.slice(i, i + 100).map((m) => ({ text: m.text, category: m.category, source: 'bench', metadata: { cluster: m.cluster } })));
      let done = 0;
      await pool(batches, 2, async (items) => {
        const res = await api(server.url, key, 'POST', `/v1/memory/collections/${COLLECTION}/memories/bulk`, items);
        if (res.status !== 201) throw new Error(`bulk: ${res.status} ${JSON.stringify(res.body)}`);
        done += items.length;
        if (done % 2000 === 0) log(`stored ${done}/${corpus.length}`);
      });
      report.load_s = round((performance.now() - started) / 1000);
      log(`stored ${corpus.length} memories in ${report.load_s} s`);
    }
    const rows = await sql<Array<{ id: string; text: string; importance: number; created_at: Date; cluster: number | null; embedding: string }>>`
      select id::text, text, importance, created_at, (metadata->>'cluster')::int as cluster, embedding::text as embedding
        from memories where collection = ${COLLECTION}`;
    const byId = new Map(rows.map((r) => [r.id, { ...r, vector: JSON.parse(r.embedding) as number[] }]));
    const members = new Map<number, string[]>();
    for (const r of rows) if (r.cluster !== null) members.set(r.cluster, [...(members.get(r.cluster) ?? []), r.id]);
    const planted = [...members.values()].flatMap((ids) => ids.flatMap((a, i) => ids.slice(i + 1).map((b) => [a, b] as const)));
    const pairKey = (a: string, b: string) => (a < b ? `${a}|${b}` : `${b}|${a}`);
    const sizes = [...members.values()].map((m) => m.length);
    report.corpus = {
      memories: rows.length,
      distinct: rows.filter((r) => r.cluster === null).length,
      clusters: members.size,
      cluster_sizes: Object.fromEntries([2, 3, 4].map((n) => [n, sizes.filter((s) => s === n).length])),
      planted_pairs: planted.length,
    };
    log(`corpus: ${JSON.stringify(report.corpus)}`);
    const cos = (a: string, b: string) => round(cosine(byId.get(a)!.vector, byId.get(b)!.vector), 3);
    // What the threshold alone decides, before keepers and the 1,000-change cap: the pairs the
    // run's own hashing finds at least that alike that the merge rule would link (the same values,
    // not a value change: src/services/consolidation/proposals.ts; every memory here has no container tag).
    const rowsList = [...byId.values()];
    const compared = await nearPairs(
      rowsList.map((r) => r.vector),
      Math.min(...thresholds),
    );
    const found = new Set(compared.map((p) => pairKey(rowsList[p.a]!.id, rowsList[p.b]!.id)));
    const linked = compared
      .map((p) => ({ a: rowsList[p.a]!, b: rowsList[p.b]!, similarity: p.similarity }))
      .filter((p) => sameValues(p.a.text, p.b.text) && !valueChanged(p.a.text, p.b.text));
    const runs = [];
    for (const similarity of thresholds) {
      const { set, wall_s } = await consolidate(server.url, key, COLLECTION, similarity);
      const merges = set.changes.filter((c) => c.kind === 'merge');
      const proposedPairs = merges.flatMap((c) => c.proposal.memory_ids.map((m) => [c.proposal.keep_id!, m] as const));
      const sameCluster = (a: string, b: string) => byId.get(a)!.cluster !== null && byId.get(a)!.cluster === byId.get(b)!.cluster;
      const right = proposedPairs.filter(([a, b]) => sameCluster(a, b));
      const covered = new Set(
        merges.flatMap((c) => {
          const ids = [c.proposal.keep_id!, ...c.proposal.memory_ids];
          return ids.flatMap((a, i) => ids.slice(i + 1).map((b) => pairKey(a, b)));
        }),
      );
      const missed = planted.filter(([a, b]) => !covered.has(pairKey(a, b)));
      const inChange = new Map(set.changes.flatMap((c) => [c.proposal.keep_id, ...c.proposal.memory_ids].filter(Boolean).map((id) => [id!, c.kind])));
      // Why each missed pair was missed: the rules of src/services/consolidation/proposals.ts.
      const why = ([a, b]: readonly [string, string]) => {
        const s = cosine(byId.get(a)!.vector, byId.get(b)!.vector);
        if (wordsKey(byId.get(a)!.text) !== wordsKey(byId.get(b)!.text) && s < similarity) return 'below the threshold';
        if (!sameValues(byId.get(a)!.text, byId.get(b)!.text)) return 'names other values';
        if (valueChanged(byId.get(a)!.text, byId.get(b)!.text)) return 'read as a value change';
        if (inChange.has(a) && inChange.has(b)) return 'in two different changes';
        // Keepers take only what is alike to themselves: one of the pair went to a keeper the other is not alike enough to.
        if (inChange.has(a) || inChange.has(b)) return 'one taken by a keeper the other is not alike to';
        return set.changes.length >= 1000 ? 'in no change (the run proposed its 1,000)' : 'in no change (not compared by the hashing)';
      };
      const reasons: Record<string, number> = {};
      for (const p of missed) reasons[why(p)] = (reasons[why(p)] ?? 0) + 1;
      const wrong = proposedPairs.filter(([a, b]) => !sameCluster(a, b));
      // Supersessions: a planted near-copy read as another value would be wrong; two distinct memories one span apart are the rule's to judge.
      const supersessions = set.changes.filter((c) => c.kind === 'supersede').map((c) => [c.proposal.keep_id!, c.proposal.memory_ids[0]!] as const);
      const above = linked.filter((p) => p.similarity >= similarity);
      const plantedAbove = planted.filter(([a, b]) => cosine(byId.get(a)!.vector, byId.get(b)!.vector) >= similarity);
      const run = {
        similarity,
        hashing: { planted_at_or_above: plantedAbove.length, compared: plantedAbove.filter(([a, b]) => found.has(pairKey(a, b))).length },
        linked_pairs: {
          same_cluster: above.filter((p) => p.a.cluster !== null && p.a.cluster === p.b.cluster).length,
          other: above.filter((p) => p.a.cluster === null || p.a.cluster !== p.b.cluster).length,
        },
        took_ms: set.took_ms,
        wall_s: round(wall_s, 2),
        scanned: set.scanned,
        changes: kinds(set),
        merge_pairs: proposedPairs.length,
        precision: round(right.length / (proposedPairs.length || 1), 4),
        recall: round((planted.length - missed.length) / planted.length, 4),
        wrong_pairs: wrong.length,
        missed_pairs: missed.length,
        supersede_within_cluster: supersessions.filter(([a, b]) => sameCluster(a, b)).length,
        supersede_examples: supersessions.slice(0, 3).map(([a, b]) => ({ cosine: cos(a, b), newer: byId.get(a)!.text, older: byId.get(b)!.text })),
        missed_by_reason: reasons,
        wrong_examples: wrong.slice(0, Number(args.show)).map(([a, b]) => ({ cosine: cos(a, b), keep: byId.get(a)!.text, merged: byId.get(b)!.text })),
        missed_examples: missed
          .slice(0, Number(args.show))
          .map(([a, b]) => ({ cosine: cos(a, b), why: why([a, b]), a: byId.get(a)!.text, b: byId.get(b)!.text })),
      };
      runs.push(run);
      log(
        `similarity ${similarity}: took_ms ${run.took_ms}, wall ${run.wall_s} s, ${JSON.stringify(run.changes)}, precision ${run.precision} (${wrong.length} wrong of ${proposedPairs.length}), recall ${run.recall} (${missed.length} missed: ${JSON.stringify(reasons)})`,
      );
      log(`  pairs the rule links at ${similarity}: ${run.linked_pairs.same_cluster} planted, ${run.linked_pairs.other} others`);
      log(`  planted pairs at least ${similarity} alike: ${run.hashing.planted_at_or_above}, compared by the hashing: ${run.hashing.compared}`);
      for (const w of run.wrong_examples) log(`  wrong ${w.cosine}: "${w.keep}" <- "${w.merged}"`);
      for (const m of run.missed_examples) log(`  missed ${m.cosine} (${m.why}): "${m.a}" / "${m.b}"`);
      log(`  supersessions ${supersessions.length}, ${run.supersede_within_cluster} of them between near-copies`);
      for (const e of run.supersede_examples) log(`  supersede ${e.cosine}: "${e.older}" -> "${e.newer}"`);
    }
    // The distribution of planted pairs' cosines: what a threshold decides over.
    const plantedCos = planted.map(([a, b]) => cos(a, b)).sort((x, y) => x - y);
    report.planted_cosine = Object.fromEntries([0, 0.05, 0.1, 0.25, 0.5].map((q) => [`p${q * 100}`, plantedCos[Math.floor(q * plantedCos.length)]]));
    report.runs = runs;
  } finally {
    await sql.end();
    await server.stop();
  }
  mkdirSync('bench/results', { recursive: true });
  const out = `bench/results/consolidation-${args.embedder}.json`;
  writeFileSync(out, JSON.stringify(report, null, 2));
  log(`wrote ${out}`);
  if (!args.keep) await dropDatabase(args.base!, args.db!);
}

/** A run over each collection of a kept LoCoMo database, every merge applied. */
async function locomoBench(db: string) {
  const dbUrl = at(args.base!, db);
  const key = readFileSync(`/tmp/${db}.key`, 'utf8');
  const env = { DATABASE_URL: dbUrl, ORGMEM_EMBEDDER: args.embedder!, ORGMEM_DB_POOL: '6', ORGMEM_RATE_LIMIT: 'false' };
  const server = await startOrgmem(env, Number(args.port), { worker: true });
  const totals = { collections: 0, scanned: 0, merge: 0, merged_memories: 0, applied: 0, failed: 0, supersede: 0, archive: 0, fix_validity: 0 };
  const examples: Array<{ similarity: number | null; texts: string[] }> = [];
  try {
    const list = await api<Array<{ name: string }> | { collections: Array<{ name: string }> }>(server.url, key, 'GET', '/v1/memory/collections');
    const names = (Array.isArray(list.body) ? list.body : list.body.collections).map((c) => c.name);
    for (const name of names) {
      const { set, wall_s } = await consolidate(server.url, key, name);
      const merges = set.changes.filter((c) => c.kind === 'merge');
      const applied = merges.length
        ? await api<ChangeSet>(server.url, key, 'POST', `/v1/memory/collections/${name}/changesets/${set.id}/apply`, { changes: merges.map((c) => c.id) })
        : null;
      if (applied && applied.status !== 200) throw new Error(`apply: ${applied.status} ${JSON.stringify(applied.body)}`);
      const states = applied ? applied.body.changes.filter((c) => c.kind === 'merge').map((c) => c.state) : [];
      const k = kinds(set);
      totals.collections++;
      totals.scanned += set.scanned;
      totals.merge += k.merge!;
      totals.merged_memories += merges.reduce((n, c) => n + c.proposal.memory_ids.length, 0);
      totals.applied += states.filter((s) => s === 'applied').length;
      totals.failed += states.filter((s) => s === 'failed').length;
      totals.supersede += k.supersede!;
      totals.archive += k.archive!;
      totals.fix_validity += k.fix_validity!;
      for (const c of merges)
        if (examples.length < Number(args.show)) examples.push({ similarity: c.evidence.similarity, texts: c.evidence.memories.map((m) => m.text) });
      log(
        `${name}: ${set.scanned} scanned, took_ms ${set.took_ms}, wall ${round(wall_s, 2)} s, ${JSON.stringify(k)}, merges applied ${states.filter((s) => s === 'applied').length}/${merges.length}`,
      );
    }
  } finally {
    await server.stop();
  }
  log(`totals: ${JSON.stringify(totals)}`);
  for (const e of examples) log(`  merged (cosine ${e.similarity}): ${e.texts.map((t) => JSON.stringify(t)).join(' | ')}`);
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/consolidation-locomo.json', JSON.stringify({ at: new Date().toISOString(), db, totals, examples }, null, 2));
}

if (args.dry) {
  const corpus = plant(Number(args.total), Number(args.clusters));
  const clustered = corpus.filter((m) => m.cluster !== null);
  log(`${corpus.length} memories, ${corpus.length - clustered.length} distinct, ${clustered.length} in clusters`);
  for (let c = 0; c < Number(args.show); c++)
    log(
      `cluster ${c}: ${clustered
        .filter((m) => m.cluster === c)
        .map((m) => JSON.stringify(m.text))
        .join(' | ')}`,
    );
  for (const m of corpus.filter((m) => m.cluster === null).slice(0, Number(args.show))) log(`distinct: ${m.text}`);
} else if (args.locomo) await locomoBench(args.locomo);
else await plantedBench();
