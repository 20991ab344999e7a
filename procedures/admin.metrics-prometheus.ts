import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { citusNodes, nodesPrometheus } from '../src/services/status/nodes.ts';

export default defineProcedure({
  name: 'admin.metricsPrometheus',
  summary: 'Operator: the same timings in Prometheus text format, with the process metrics',
  description:
    'Prometheus text format 0.0.4, cumulative since the process started (a reset of GET /v1/memory/admin/metrics does ' +
    'not touch it): orgmem_request_duration_seconds (histogram; labels method, route as the path template, status_class), ' +
    'orgmem_stage_duration_seconds (histogram; label stage), orgmem_search_cache_hits_total and ' +
    "orgmem_search_cache_misses_total, Node's process metrics (process_*, nodejs_*) and, on a Citus coordinator, " +
    'orgmem_citus_node_up (gauge, 1 when the node answered a probe now; labels host, port, role, active). Scrape it with the admin key as a ' +
    'bearer token. With ORGMEM_METRICS=0 the answer is empty.',
  rest: { method: 'GET', path: '/v1/memory/admin/metrics/prometheus', status: 200 },
  access: 'admin',
  input: z.object({}),
  output: z.string().describe('Prometheus text exposition format'),
  handler: async (ctx) => (ctx.app.metrics.enabled ? (await ctx.app.metrics.prometheus()) + nodesPrometheus(await citusNodes(ctx.app.platform)) : ''),
});
