import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { statusReport } from '../src/services/status/checks.ts';

const health = z
  .enum(['operational', 'degraded', 'down'])
  .describe('down: the database fails; degraded: the database answers but the job queue, the file store or a Citus node fails; operational: all pass');
const database = z.object({ ok: z.boolean(), latency_ms: z.number().describe('One round trip') });
const queue = z.object({
  ok: z.boolean().describe('false when the oldest due job has waited over 60 s, or work has made no progress for 15 minutes'),
  latency_ms: z.number().describe('Time the queue check took'),
  lag_ms: z.number().nullable().describe('How long the oldest job that is due and not taken has waited (0 when none); null when it could not be read'),
});
const blobs = z.object({ ok: z.boolean().describe('A small object written, read back and deleted'), latency_ms: z.number() });

export default defineProcedure({
  name: 'system.status',
  summary: 'Service status: current state, 24 h uptime and recent self-checks (public, no tenant data)',
  description:
    'The server checks itself every minute: a database round trip, the job queue lag and a probe of the file store. ' +
    'The current state checks the database and the queue for this answer and takes the file store from the last check of the ' +
    'past 5 minutes (null when there is none). Checks are kept 7 days; errors are recorded but not shown here.',
  rest: { method: 'GET', path: '/v1/status', status: 200 },
  access: 'public',
  input: z.object({}),
  output: z.object({
    status: health,
    checked_at: z.string(),
    database_latency_ms: z.number(),
    components: z.object({
      database,
      queue,
      blobs: blobs.extend({ checked_at: z.string().describe('When the last check probed it') }).nullable(),
      nodes: z
        .object({
          ok: z.boolean().describe('Every node answered'),
          total: z.number().int().describe('The primary nodes in the metadata, the coordinator included'),
          reachable: z.number().int().describe('Those that answered a select 1 within 3 s'),
        })
        .nullable()
        .describe('On a Citus coordinator, its nodes probed now (a node not answering makes the status degraded); null elsewhere'),
    }),
    uptime_24h: z.number().nullable().describe('Percentage of self-checks in the last 24 h that passed (status operational); null before the first check'),
    recent_checks: z
      .array(
        z.object({
          checked_at: z.string(),
          ok: z.boolean().describe('The check passed: its status is operational'),
          status: health,
          latency_ms: z.number().describe('The database round trip'),
          components: z.object({
            database,
            queue: queue.nullable().describe('null on checks recorded before the queue was checked'),
            blobs: blobs.nullable().describe('null on checks recorded before the file store was probed'),
          }),
        }),
      )
      .describe('The last 20 checks, newest first'),
  }),
  handler: (ctx) => statusReport(ctx.app),
});
