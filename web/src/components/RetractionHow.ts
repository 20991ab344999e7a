import type { Memory } from '../../../src/schemas/memory.ts';

export type How = NonNullable<Memory['retraction']>['how'];

/** The two ways a fact stops holding (docs/time.md, "Retraction"), keyed by the API's own values: the retract form's choices and the report's column. */
export const HOW: Record<How, string> = { ended: 'It stopped being true', wrong: 'It was never true' };
