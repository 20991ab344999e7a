/*
 * The lists of consolidation (docs/consolidation.md), apart from their zod shapes in
 * consolidation.ts: the dashboard reads them too, and importing zod for four lists would put all
 * of it in the dashboard's page.
 */

/** What a consolidation run may propose (docs/consolidation.md, "What a run proposes"). */
export const CHANGE_KINDS = ['merge', 'supersede', 'archive', 'fix_validity'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

export const CHANGESET_STATES = ['running', 'open', 'reviewed', 'failed'] as const;
export const CHANGE_STATES = ['proposed', 'applied', 'rejected', 'undone', 'failed'] as const;
export const SCHEDULES = ['off', 'daily', 'weekly'] as const;
