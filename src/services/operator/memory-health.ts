import type { App } from '../../core/context.ts';
import { healthCounts } from '../graph/reports.ts';

/** Collection health (docs/graph.md, "Reports and hygiene") summed over every collection of every tenant: counts only. */
export async function memoryHealth(app: App, staleDays: number) {
  const c = await healthCounts(app.platform, null, staleDays);
  const { total, current, archived, stale, expired, supersessions, needs_attention } = c;
  return { stale_days: staleDays, total, current, archived, stale, expired, supersessions, needs_attention };
}
