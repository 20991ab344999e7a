import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { collectionProfile } from '../src/services/graph/digest.ts';
import { C, inCollection, MISSING_COLLECTION } from './collection-path.ts';

export default defineProcedure({
  name: 'graph.profile',
  summary: 'A profile of the subject built from the current, non-expired facts and preferences',
  description:
    'Reads up to 200 of the newest current facts and preferences. Written by the LLM when one is configured; otherwise ' +
    '(or when the LLM fails) a plain list of preferences and facts. Cached until the collection changes.',
  rest: { method: 'GET', path: `${C}/profile`, status: 200 },
  access: 'read',
  collection: { field: 'collection', permission: 'read' },
  mcp: {
    tool: 'get_profile',
    title: 'Get the profile',
    description:
      "Get a profile of the user (or the collection's subject) built from the stored facts and preferences. Call " +
      'it at the start of a personal task to tailor your answer.',
  },
  errors: { NOT_FOUND: MISSING_COLLECTION },
  input: z.object(inCollection),
  output: z.object({ profile: z.string(), based_on: z.number().int().describe('Facts and preferences read') }).openapi('Profile'),
  handler: (ctx, input) => collectionProfile(ctx, input.collection),
});
