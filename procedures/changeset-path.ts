import { z } from 'zod';
import { C, inCollection } from './collection-path.ts';

/** `CS`: one change set of a collection, under which its review lives (docs/consolidation.md). */
export const CS = `${C}/changesets/{id}`;
export const inChangeset = { ...inCollection, id: z.string().describe('The change set id (UUID)') };
export const MISSING_CHANGESET = 'The collection or the change set does not exist';
/** Review changes memories the way an admin decides (docs/access.md, "Key roles"). */
export const changeIds = z.array(z.uuid()).min(1).max(1000).optional().describe('The changes to act on (their ids); every proposed change when omitted');
