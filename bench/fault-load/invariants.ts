import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import type postgres from 'postgres';
import { request, type Ledger, type Target } from './workload.ts';

/** What the database holds after the run, judged against what the service acknowledged. */
export interface Findings {
  checked: { creates: number; bulkItems: number; deletes: number; remembers: number; facts: number; importItems: number; files: number };
  losses: string[];
  duplicates: string[];
  /** Unacknowledged writes that landed all the same (allowed: the answer was lost, not the write). */
  landedWithoutAck: number;
  partialBulks: string[];
  notTerminal: Array<{ id: string; state: string; attempts: number; error: string | null; updated_at: Date }>;
  jobs: { done: number; failed: number; skipped: number };
  /** Other broken promises: a done job without its facts, a raw memory without its job. */
  broken: string[];
  /** Stored files no batch row accounts for, and batch files left neither done nor failed. */
  unaccountedFiles: string[];
}

/** The tenants of the run, each with the ledger of what the service acknowledged to its clients. */
export interface TenantLedger {
  id: string;
  ledger: Ledger;
}

export async function checkDatabase(sql: postgres.Sql, tenants: TenantLedger[], filesDir: string): Promise<Findings> {
  const f: Findings = {
    checked: { creates: 0, bulkItems: 0, deletes: 0, remembers: 0, facts: 0, importItems: 0, files: 0 },
    losses: [],
    duplicates: [],
    landedWithoutAck: 0,
    partialBulks: [],
    notTerminal: [],
    jobs: { done: 0, failed: 0, skipped: 0 },
    broken: [],
    unaccountedFiles: [],
  };
  for (const t of tenants) await checkTenant(sql, t, f);

  // Every stored file is a row of a batch, and every row ended done (its memories there, once) or failed.
  const files = await sql<{ key: string; state: string; chunks: number; n: number }[]>`
    select f.key, f.state, f.chunks, (select count(*)::int from memories m where m.tenant_id = f.tenant_id and m.metadata->>'key' = f.key) as n
      from ingest_files f where f.tenant_id = any(${tenants.map((t) => t.id)}::uuid[])`;
  const rows = new Set(files.map((r) => r.key));
  for (const r of files) {
    f.checked.files++;
    if (r.state !== 'done' && r.state !== 'failed') f.unaccountedFiles.push(`file ${r.key} left ${r.state}`);
    if (r.state === 'done' && r.n !== r.chunks) (r.n > r.chunks ? f.duplicates : f.losses).push(`file ${r.key}: ${r.chunks} chunks, ${r.n} memories`);
  }
  for (const key of storedKeys(join(filesDir, 'objects'))) if (!rows.has(key)) f.unaccountedFiles.push(`stored file ${key} is in no batch`);
  return f;
}

/** One tenant's acknowledged writes and jobs, judged into `f`. */
async function checkTenant(sql: postgres.Sql, { id: tenantId, ledger }: TenantLedger, f: Findings): Promise<void> {
  const byMarker = new Map<string, string[]>();
  for (const row of await sql<{ marker: string; ids: string[] }[]>`
    select metadata->>'fl_marker' as marker, array_agg(id::text) as ids from memories
     where tenant_id = ${tenantId} and metadata ? 'fl_marker' group by 1`)
    byMarker.set(row.marker, row.ids);
  const found = (m: string) => byMarker.get(m) ?? [];

  for (const c of ledger.creates) {
    const ids = found(c.marker);
    if (ids.length > 1) f.duplicates.push(`memory ${c.marker} stored ${ids.length} times: ${ids.join(', ')}`);
    if (!c.acked) {
      if (ids.length) f.landedWithoutAck++;
      continue;
    }
    if (c.deleted === 'acked') {
      f.checked.deletes++;
      if (ids.length) f.losses.push(`memory ${c.marker} (${c.id}) still present after its acknowledged delete`);
      continue;
    }
    // A delete without an answer may or may not have happened: either state is right.
    if (c.deleted === 'unknown') continue;
    f.checked.creates++;
    if (!ids.length) f.losses.push(`acknowledged memory ${c.marker} (${c.id}) is missing`);
    else if (ids.length === 1 && ids[0] !== c.id) f.losses.push(`memory ${c.marker} was acknowledged as ${c.id} but is stored as ${ids[0]}`);
  }

  for (const b of ledger.bulks) {
    const present = b.markers.filter((m) => found(m).length);
    for (const m of b.markers) if (found(m).length > 1) f.duplicates.push(`bulk item ${m} stored ${found(m).length} times`);
    if (!b.acked) {
      if (present.length && present.length !== b.markers.length)
        f.partialBulks.push(`bulk ${b.markers[0]}..: ${present.length} of ${b.markers.length} items stored`);
      if (present.length) f.landedWithoutAck++;
      continue;
    }
    f.checked.bulkItems += b.markers.length;
    for (const [i, m] of b.markers.entries()) {
      const ids = found(m);
      if (!ids.length) f.losses.push(`acknowledged bulk item ${m} (${b.ids?.[i]}) is missing`);
      else if (ids.length === 1 && ids[0] !== b.ids?.[i]) f.losses.push(`bulk item ${m} was acknowledged as ${b.ids?.[i]} but is stored as ${ids[0]}`);
    }
  }

  // An import sent again with its key stores each item once; an acknowledged one has every item.
  for (const imp of ledger.imports) {
    const present = imp.markers.filter((m) => found(m).length);
    for (const m of imp.markers)
      if (found(m).length > 1) f.duplicates.push(`import item ${m} (${imp.key}, sent ${imp.sends} times) stored ${found(m).length} times`);
    if (!imp.acked) continue;
    f.checked.importItems += imp.markers.length;
    if (present.length !== imp.markers.length) f.losses.push(`acknowledged import ${imp.key}: ${present.length} of ${imp.markers.length} items stored`);
  }

  const jobs = new Map(
    (
      await sql<{ id: string; memory_id: string; state: string; skipped: string | null; facts: Array<{ id: string; text: string; relation: string }> }[]>`
      select id::text, memory_id::text, state, skipped, facts from extraction_jobs where tenant_id = ${tenantId}`
    ).map((j) => [j.id, j]),
  );
  const raws = new Map<string, string[]>();
  for (const r of await sql<{ text: string; ids: string[] }[]>`
    select text, array_agg(id::text) as ids from memories
     where tenant_id = ${tenantId} and source = 'remember' and not metadata ? 'remembered_from' group by text`)
    raws.set(r.text, r.ids);
  const facts = new Map<string, Array<{ id: string; text: string; archived: boolean }>>();
  for (const r of await sql<{ raw: string; id: string; text: string; archived: boolean }[]>`
    select metadata->>'remembered_from' as raw, id::text, text, archived from memories
     where tenant_id = ${tenantId} and metadata ? 'remembered_from'`)
    facts.set(r.raw, [...(facts.get(r.raw) ?? []), r]);
  const rawJobs = new Map([...jobs.values()].map((j) => [j.memory_id, j]));

  for (const r of ledger.remembers) {
    const rawIds = raws.get(r.content) ?? [];
    if (rawIds.length > 1) f.duplicates.push(`remembered text of ${r.sentences[0]} stored ${rawIds.length} times`);
    if (!r.acked) {
      if (rawIds.length) f.landedWithoutAck++;
      for (const id of rawIds) if (!rawJobs.has(id)) f.broken.push(`raw memory ${id} was stored without its job`);
      continue;
    }
    f.checked.remembers++;
    const job = jobs.get(r.jobId!);
    if (!job) {
      f.losses.push(`acknowledged remember job ${r.jobId} is missing`);
      continue;
    }
    if (!rawIds.includes(job.memory_id)) f.losses.push(`the raw memory ${job.memory_id} of acknowledged job ${r.jobId} is missing`);
    const stored = facts.get(job.memory_id) ?? [];
    if (job.state === 'done' && !job.skipped) {
      for (const s of r.sentences) {
        f.checked.facts++;
        const copies = stored.filter((x) => x.text === s);
        if (copies.length > 1) f.duplicates.push(`fact "${s}" of job ${r.jobId} stored ${copies.length} times`);
        if (!copies.length) f.broken.push(`job ${r.jobId} is done but its fact "${s}" is missing`);
        else if (!job.facts.some((x) => x.id === copies[0]!.id)) f.broken.push(`job ${r.jobId} does not list its stored fact ${copies[0]!.id}`);
      }
    } else if (stored.length) f.broken.push(`job ${r.jobId} is ${job.state} yet ${stored.length} facts were stored from it`);
  }

  // Every job, acknowledged or not: none may be left queued or processing.
  for (const j of jobs.values()) {
    if (j.state === 'done') f.jobs.done++;
    if (j.state === 'failed') f.jobs.failed++;
    if (j.skipped) f.jobs.skipped++;
  }
  f.notTerminal.push(
    ...(await sql<Findings['notTerminal']>`
    select id::text, state, attempts, error, updated_at from extraction_jobs
     where tenant_id = ${tenantId} and state not in ('done', 'failed') order by created_at`),
  );
  // Duplicate facts across the whole tenant, whichever run of a job wrote them.
  for (const d of await sql<{ raw: string; text: string; n: number }[]>`
    select metadata->>'remembered_from' as raw, text, count(*)::int as n from memories
     where tenant_id = ${tenantId} and metadata ? 'remembered_from' group by 1, 2 having count(*) > 1`) {
    const line = `fact "${d.text}" from raw memory ${d.raw} stored ${d.n} times`;
    if (!f.duplicates.some((x) => x.includes(`"${d.text}"`))) f.duplicates.push(line);
  }
}

/** The local store's files, as keys. */
function storedKeys(objects: string): string[] {
  const walk = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : [relative(objects, join(d, e.name))]));
  try {
    return walk(objects);
  } catch {
    return [];
  }
}

/** Jobs and batch files still queued or processing, for the bounded wait before the checks. */
export async function pendingJobs(sql: postgres.Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select (select count(*) from extraction_jobs where state not in ('done', 'failed'))::int
         + (select count(*) from ingest_files where state not in ('done', 'failed'))::int as n`;
  return row!.n;
}

/**
 * The shared rate limit: a fresh key of a tenant limited to `limit` requests a window, asked
 * alternately through both API processes, must be refused from request limit + 1 on, with one
 * RateLimit-Remaining count going down across both. A window that turns over in the middle makes
 * the attempt void; it is made again with another key.
 */
export async function checkRateLimit(apis: [Target, Target], ownerKey: string, limit: number): Promise<{ ok: boolean; detail: string }> {
  let detail = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const created = await request(apis[0].url, ownerKey, 'POST', '/v1/memory/keys', { label: `rate-${attempt}` });
    if (created.status !== 201) return { ok: false, detail: `key creation answered ${created.status}` };
    const key = created.body.api_key as string;
    const replies = [];
    for (let i = 0; i < limit + 4; i++) replies.push(await request(apis[i % 2]!.url, key, 'GET', '/v1/memory/collections'));
    const resets = new Set(replies.map((r) => r.headers.get('ratelimit-reset')));
    const statuses = replies.map((r) => r.status);
    const remaining = replies.map((r) => r.headers.get('ratelimit-remaining'));
    detail = `statuses ${statuses.join(',')}; remaining ${remaining.join(',')}`;
    if (resets.size > 1) continue;
    const expected = replies.map((_, i) => (i < limit ? 200 : 429));
    const expectedRemaining = replies.map((_, i) => String(Math.max(0, limit - 1 - i)));
    const ok = statuses.join() === expected.join() && remaining.join() === expectedRemaining.join();
    return { ok, detail: ok ? `${limit} answered across both processes, then 429 on both` : detail };
  }
  return { ok: false, detail: `the window turned over in each of 3 attempts: ${detail}` };
}

/** A key revoked through one process is refused by the other at once (no cached authentication). */
export async function checkRevocation(apis: [Target, Target], ownerKey: string): Promise<{ ok: boolean; detail: string }> {
  for (const [via, other] of [apis, [apis[1], apis[0]]] as const) {
    const created = await request(via.url, ownerKey, 'POST', '/v1/memory/keys', { label: 'revoke-me' });
    if (created.status !== 201) return { ok: false, detail: `key creation answered ${created.status}` };
    const usable = await request(other.url, created.body.api_key, 'GET', '/v1/memory/collections');
    const revoked = await request(via.url, ownerKey, 'DELETE', `/v1/memory/keys/${created.body.id}`);
    const refused = await request(other.url, created.body.api_key, 'GET', '/v1/memory/collections');
    if (usable.status !== 200 || revoked.status !== 204 || refused.status !== 401) {
      return { ok: false, detail: `new key ${usable.status} through ${other.url}, revoke ${revoked.status} through ${via.url}, then ${refused.status}` };
    }
  }
  return { ok: true, detail: 'revoked through either process, refused by the other on the next request' };
}
