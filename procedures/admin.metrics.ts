import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { queryBool } from '../src/schemas/fields.ts';
import { citusNodes } from '../src/services/status/nodes.ts';

const ms = z.number().describe('milliseconds');
const timing = z.object({ count: z.number().int(), avg_ms: ms, p50_ms: ms, p95_ms: ms });

export default defineProcedure({
  name: 'admin.metrics',
  summary: 'Operator: request and stage timings of this server process since its start or the last reset',
  description:
    'Process scope: what this API process (and the jobs it runs) answered and did, not the cluster. routes: per procedure, ' +
    'named by its method and path template (never a filled path), calls through REST, tRPC and MCP alike, with their 4xx ' +
    'and 5xx counts and latency (avg, p50, p95; percentiles from log-scale buckets, within 5%). stages: embed (every ' +
    'embedder call), cache_get (search result cache lookups), search (retrieval, cache hits excluded), llm_extract ' +
    '(extract_facts LLM calls). counters: result cache hits and misses, and the file-reading workers ended by their memory cap or deadline or that died (docs/files.md). reset=true starts a new window after this reading ' +
    '(the reading itself is counted in the new one). With ORGMEM_METRICS=0 nothing is recorded and the lists are empty. ' +
    'citus_nodes: on a Citus coordinator, its primary nodes probed now (a select 1 on each, 3 s at most); empty elsewhere.',
  rest: { method: 'GET', path: '/v1/memory/admin/metrics', status: 200 },
  access: 'admin',
  input: z.object({ reset: queryBool.default(false).describe('true: clear the window after reading; default false') }),
  output: z.object({
    window_started_at: z.string(),
    routes: z.array(
      z.object({ route: z.string(), count: z.number().int(), status_4xx: z.number().int(), status_5xx: z.number().int(), avg_ms: ms, p50_ms: ms, p95_ms: ms }),
    ),
    stages: z.object({ embed: timing, cache_get: timing, search: timing, llm_extract: timing }),
    counters: z.object({ search_cache_hit: z.number().int(), search_cache_miss: z.number().int(), parse_runner_killed: z.number().int() }),
    citus_nodes: z.array(
      z.object({
        host: z.string(),
        port: z.number().int(),
        role: z.enum(['coordinator', 'worker']),
        active: z.boolean().describe("Active in the cluster's metadata"),
        reachable: z.boolean().describe('Answered the probe (an inactive node is not probed)'),
      }),
    ),
  }),
  handler: async (ctx, input) => ({ ...ctx.app.metrics.read(input.reset), citus_nodes: await citusNodes(ctx.app.platform) }),
});
