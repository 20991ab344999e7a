import type { AuthedCtx } from '../../core/context.ts';
import { iso } from '../../core/ids.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { SCHEDULES, type ChangeKind } from '../../schemas/consolidation.ts';
import { getCollection } from '../memory/collections.ts';

/** A collection's consolidation settings (docs/consolidation.md, "Schedule"): off, with nothing applied at once, until set. */

type Schedule = (typeof SCHEDULES)[number];
const EVERY_DAYS: Record<Schedule, number | null> = { off: null, daily: 1, weekly: 7 };
const scheduleOf = (days: number | null): Schedule => (Object.entries(EVERY_DAYS).find(([, d]) => d === days)?.[0] as Schedule | undefined) ?? 'off';

interface SettingsRow {
  every_days: number | null;
  auto_apply: ChangeKind[];
  next_run_at: Date | null;
}

export async function settingsRow(q: Queryable, tenantId: string, collection: string): Promise<SettingsRow | undefined> {
  const [row] = await q.query<SettingsRow>('select every_days, auto_apply, next_run_at from consolidation_settings where tenant_id = $1 and collection = $2', [
    tenantId,
    collection,
  ]);
  return row;
}

const view = (row: SettingsRow | undefined) => ({
  schedule: scheduleOf(row?.every_days ?? null),
  auto_apply: row?.auto_apply ?? [],
  next_run_at: iso(row?.next_run_at ?? null),
});

export async function getSettings(ctx: AuthedCtx, collection: string) {
  await getCollection(ctx.app.db, ctx.tenant.id, collection);
  return view(await settingsRow(ctx.app.db, ctx.tenant.id, collection));
}

/** Sets both; a schedule's first run is one period from now (the same schedule again keeps its next run). */
export async function putSettings(ctx: AuthedCtx, collection: string, input: { schedule: Schedule; auto_apply: ChangeKind[] }) {
  await getCollection(ctx.app.db, ctx.tenant.id, collection);
  const days = EVERY_DAYS[input.schedule];
  const [row] = await ctx.app.db.query<SettingsRow>(
    `insert into consolidation_settings (tenant_id, collection, every_days, auto_apply, next_run_at)
     values ($1, $2, $3::int, $4::text[], $5::timestamptz)
     on conflict (tenant_id, collection) do update
       set auto_apply = excluded.auto_apply, every_days = excluded.every_days,
           next_run_at = case when consolidation_settings.every_days is not distinct from excluded.every_days then consolidation_settings.next_run_at
                              else excluded.next_run_at end
     returning every_days, auto_apply, next_run_at`,
    // The first run's time is worked out here: Citus refuses now() inside a CASE of a distributed write.
    [ctx.tenant.id, collection, days, [...new Set(input.auto_apply)], days === null ? null : new Date(Date.now() + days * 86_400_000)],
  );
  return view(row);
}
