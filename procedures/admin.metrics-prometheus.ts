import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';

export default defineProcedure({
  name: 'admin.metricsPrometheus',
  summary: 'Operator: the same timings in Prometheus text format, with the process metrics',
  description:
    'Prometheus text format 0.0.4, cumulative since the process started (a reset of GET /v1/memory/admin/metrics does ' +
    'not touch it): orgmem_request_duration_seconds (histogram; labels method, route as the path template, status_class), ' +
    'orgmem_stage_duration_seconds (histogram; label stage), orgmem_search_cache_hits_total and ' +
    "orgmem_search_cache_misses_total, and Node's process metrics (process_*, nodejs_*). Scrape it with the admin key as a " +
    'bearer token. With ORGMEM_METRICS=0 the answer is empty.',
  rest: { method: 'GET', path: '/v1/memory/admin/metrics/prometheus', status: 200 },
  access: 'admin',
  input: z.object({}),
  output: z.string().describe('Prometheus text exposition format'),
  handler: (ctx) => ctx.app.metrics.prometheus(),
});
