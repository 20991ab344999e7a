import { rng } from '../lib/stats.ts';

/**
 * The clients of the fault-and-load run and the ledger of what the service acknowledged to them.
 * A write counts as acknowledged only on its 2xx; a request without an answer (connection
 * refused or reset by a killed process, or timed out) is not retried where the API has no
 * idempotency key: what such a write left behind is judged separately (at most once, and a bulk
 * all or nothing). An import is sent with an Idempotency-Key and sent again until it is answered,
 * as a client that knows the key would.
 */
export interface Reply {
  /** 0: no answer at all. */
  status: number;
  /** No answer because the connection was refused: the request never reached a process. */
  refused?: boolean;
  body: any;
  headers: Headers;
}

export async function request(url: string, key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  try {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: kept as text for the report
    }
    return { status: res.status, body: parsed, headers: res.headers };
  } catch (err) {
    const refused = (err as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED';
    return { status: 0, refused, body: null, headers: new Headers() };
  }
}

export interface CreateRecord {
  marker: string;
  collection: string;
  acked: boolean;
  id?: string;
  /** A delete of this memory was sent: acknowledged (204) or left without an answer. */
  deleted?: 'acked' | 'unknown';
}
export interface BulkRecord {
  markers: string[];
  acked: boolean;
  ids?: string[];
}
export interface RememberRecord {
  content: string;
  sentences: string[];
  acked: boolean;
  jobId?: string;
}
export interface ImportRecord {
  key: string;
  markers: string[];
  acked: boolean;
  /** Times it was sent (more than 1: retried after no answer or a 409). */
  sends: number;
}
export type ProbeOutcome = 'fresh' | 'stale' | 'inconclusive';

export class Ledger {
  creates: CreateRecord[] = [];
  bulks: BulkRecord[] = [];
  remembers: RememberRecord[] = [];
  imports: ImportRecord[] = [];
  /** Sync drops sent, and those left without an answer (cut short by a kill). */
  drops = { sent: 0, unanswered: 0 };
  probes: Array<{ outcome: ProbeOutcome; warm: boolean; detail?: string }> = [];
  /** Requests per operation, and answers by status (0: none). */
  requests = new Map<string, number>();
  statuses = new Map<number, number>();
  /** Requests refused by a dead process and sent to the other one instead. */
  refused = 0;
  /** The 5xx answers, with when they came (Date.now()). */
  serverErrors: Array<{ status: number; at: number; line: string }> = [];

  count(op: string, method: string, path: string, r: Reply): void {
    this.requests.set(op, (this.requests.get(op) ?? 0) + 1);
    this.statuses.set(r.status, (this.statuses.get(r.status) ?? 0) + 1);
    if (r.status >= 500)
      this.serverErrors.push({ status: r.status, at: Date.now(), line: `${r.status} ${method} ${path}: ${JSON.stringify(r.body).slice(0, 300)}` });
  }

  get totalRequests(): number {
    return [...this.requests.values()].reduce((a, b) => a + b, 0);
  }
}

export const COLLECTIONS = ['fl-0', 'fl-1', 'fl-2', 'fl-3'];
const WORDS = ['budget', 'invoice', 'meeting', 'roadmap', 'customer', 'release', 'incident', 'contract', 'hiring', 'pricing', 'security', 'migration'];
const THINGS = ['green tea', 'espresso', 'hiking', 'jazz', 'chess', 'sailing', 'sushi', 'opera'];
const CITIES = ['Lisbon', 'Oslo', 'Lyon', 'Turin', 'Ghent', 'Porto', 'Bergen', 'Kyoto'];

export interface Target {
  url: string;
}

/** Where a client sends one request: either API process, picked at random each time. */
export class Client {
  private seq = 0;
  private readonly r;
  private readonly mine: CreateRecord[] = [];

  constructor(
    private readonly index: number,
    private readonly apis: Target[],
    private readonly key: string,
    private readonly ledger: Ledger,
    seed: number,
  ) {
    this.r = rng(seed * 1000 + index);
  }

  private marker() {
    return `c${this.index}n${this.seq++}`;
  }

  /**
   * One request to `api`, or to either process at random. A refused connection never reached a
   * process, so resending it elsewhere is safe, as a load balancer would; only a request given
   * to a process that then died is left without an answer.
   */
  private async send(op: string, method: string, path: string, body?: unknown, api?: Target): Promise<Reply> {
    const target = api ?? this.r.pick(this.apis);
    let reply = await request(target.url, this.key, method, path, body);
    if (reply.refused && !api) {
      this.ledger.refused++;
      reply = await request(this.apis.find((a) => a !== target)!.url, this.key, method, path, body);
    }
    this.ledger.count(op, method, path, reply);
    return reply;
  }

  private words(n: number) {
    return Array.from({ length: n }, () => this.r.pick(WORDS)).join(' ');
  }

  /** One acknowledged memory in the collection (retried until acknowledged), before any fault. */
  async seed(collection: string): Promise<void> {
    while (!(await this.create(collection)).acked);
  }

  async create(collection = this.r.pick(COLLECTIONS), text?: string, api?: Target): Promise<CreateRecord> {
    const marker = this.marker();
    const res = await this.send(
      'create',
      'POST',
      `/v1/memory/collections/${collection}/memories`,
      { text: text ?? `Note ${marker} about ${this.words(4)}.`, metadata: { fl_marker: marker } },
      api,
    );
    const record: CreateRecord = { marker, collection, acked: res.status === 201, id: res.status === 201 ? res.body.id : undefined };
    this.ledger.creates.push(record);
    if (record.acked) this.mine.push(record);
    return record;
  }

  async bulk(): Promise<void> {
    const markers = Array.from({ length: 5 + this.r.int(16) }, () => this.marker());
    const items = markers.map((m) => ({ text: `Bulk note ${m} on ${this.words(3)}.`, metadata: { fl_marker: m } }));
    const res = await this.send('bulk', 'POST', `/v1/memory/collections/${this.r.pick(COLLECTIONS)}/memories/bulk`, items);
    this.ledger.bulks.push({ markers, acked: res.status === 201, ids: res.status === 201 ? res.body.ids : undefined });
  }

  async search(): Promise<void> {
    const own = this.mine.length && this.r.next() < 0.3 ? this.r.pick(this.mine).marker : null;
    await this.send('search', 'POST', `/v1/memory/collections/${this.r.pick(COLLECTIONS)}/search`, {
      query: own ?? this.words(2),
      mode: this.r.pick(['hybrid', 'hybrid', 'vector', 'text']),
      limit: 10,
    });
  }

  /** Two sentences, so two facts, each carrying the marker: no two jobs can produce the same fact. */
  async remember(): Promise<void> {
    const m = this.marker();
    const sentences = [`Person${m} likes ${this.r.pick(THINGS)}.`, `Person${m} lives in ${this.r.pick(CITIES)}.`];
    const content = sentences.join(' ');
    const res = await this.send('remember', 'POST', `/v1/memory/collections/${this.r.pick(COLLECTIONS)}/remember`, { content });
    this.ledger.remembers.push({ content, sentences, acked: res.status === 202, jobId: res.status === 202 ? res.body.job_id : undefined });
  }

  /**
   * An import of 100-600 memories (1 to 6 steps) with an Idempotency-Key, sent again with the
   * same key and body after no answer, up to 20 times; acknowledged once its job is done.
   */
  async importMany(): Promise<void> {
    const markers = Array.from({ length: 100 + this.r.int(501) }, () => this.marker());
    const record: ImportRecord = { key: `import-${markers[0]}`, markers, acked: false, sends: 0 };
    this.ledger.imports.push(record);
    const collection = this.r.pick(COLLECTIONS);
    const body = { memories: markers.map((m) => ({ text: `Imported note ${m} on ${this.words(3)}.`, collection, metadata: { fl_marker: m } })) };
    while (record.sends < 20) {
      record.sends++;
      const target = this.r.pick(this.apis);
      const res = await request(target.url, this.key, 'POST', '/v1/memory/admin/import', body, { 'idempotency-key': record.key });
      this.ledger.count('import', 'POST', '/v1/memory/admin/import', res);
      if (res.status === 202) return void (record.acked = await this.importDone(target.url, res.body.import_id, markers.length));
      if (res.status !== 0) return;
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  /** Whether the import's job stored every record: its status read until it is done or failed, or the process answers no more. */
  private async importDone(url: string, importId: string, records: number): Promise<boolean> {
    for (let i = 0; i < 600; i++) {
      const res = await request(url, this.key, 'GET', `/v1/memory/admin/import/${importId}`);
      if (res.status !== 200) return false;
      if (res.body.state === 'done') return res.body.imported === records;
      if (res.body.state === 'failed') return false;
      await new Promise((r) => setTimeout(r, 500));
    }
    return false;
  }

  /** A sync drop of 2-6 small text files (JSON with base64 files), each a marker of its own. */
  async drop(): Promise<void> {
    const files = Array.from({ length: 2 + this.r.int(5) }, () => {
      const m = this.marker();
      return { filename: `${m}.txt`, content_type: 'text/plain', data: Buffer.from(`Dropped file ${m} about ${this.words(5)}.`).toString('base64') };
    });
    this.ledger.drops.sent++;
    const res = await this.send('drop', 'POST', `/v1/memory/collections/${this.r.pick(COLLECTIONS)}/drop`, { files });
    if (res.status === 0) this.ledger.drops.unanswered++;
  }

  async remove(): Promise<void> {
    const live = this.mine.filter((c) => !c.deleted);
    if (!live.length) return;
    const victim = this.r.pick(live);
    const res = await this.send('delete', 'DELETE', `/v1/memory/collections/${victim.collection}/memories/${victim.id}`);
    if (res.status === 204) victim.deleted = 'acked';
    else if (res.status === 0) victim.deleted = 'unknown';
  }

  /**
   * Cross-process cache check: a query answered (and cached) by one API process, then a write
   * through the other, then the same query on the first again must show the write. The probe
   * collection is this client's own, so no other write moves its version under the cache.
   */
  async probe(): Promise<void> {
    const [reader, writer] = this.r.next() < 0.5 ? [this.apis[0]!, this.apis[1]!] : [this.apis[1]!, this.apis[0]!];
    const token = `probe${this.marker()}`;
    const path = `/v1/memory/collections/probe-${this.index}/search`;
    const query = { query: token, mode: 'text', limit: 5 };
    const before = await this.send('probe', 'POST', path, query, reader);
    const again = await this.send('probe', 'POST', path, query, reader);
    if (before.status !== 200 || again.status !== 200) return void this.ledger.probes.push({ outcome: 'inconclusive', warm: false });
    const written = await this.create(`probe-${this.index}`, `Probe ${token} written through the other process.`, writer);
    if (!written.acked) return void this.ledger.probes.push({ outcome: 'inconclusive', warm: again.body.cached });
    const after = await this.send('probe', 'POST', path, query, reader);
    if (after.status !== 200) return void this.ledger.probes.push({ outcome: 'inconclusive', warm: again.body.cached });
    const seen = (after.body.results as Array<{ id: string }>).some((r) => r.id === written.id);
    this.ledger.probes.push({
      outcome: seen ? 'fresh' : 'stale',
      warm: again.body.cached,
      detail: seen ? undefined : `${token}: written through ${writer.url}, ${reader.url} answered ${JSON.stringify(after.body).slice(0, 200)}`,
    });
  }

  /** Mixed operations until `deadline`, with `thinkMs` between them (longer after no answer). */
  async run(deadline: number, thinkMs: number): Promise<void> {
    while (Date.now() < deadline) {
      const x = this.r.next();
      const before = this.ledger.statuses.get(0) ?? 0;
      if (x < 0.3) await this.create();
      else if (x < 0.4) await this.bulk();
      else if (x < 0.64) await this.search();
      else if (x < 0.67) await this.importMany();
      else if (x < 0.7) await this.drop();
      else if (x < 0.87) await this.remember();
      else if (x < 0.93) await this.remove();
      else await this.probe();
      const unanswered = (this.ledger.statuses.get(0) ?? 0) > before;
      await new Promise((r) => setTimeout(r, unanswered ? 200 : thinkMs));
    }
  }
}
