import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { importance, instant, memoryText, queryBool } from '../src/schemas/fields.ts';
import { extractedFact, skipped } from '../src/schemas/graph.ts';
import { idempotencyKey } from '../src/schemas/memory.ts';
import { rememberNow, rememberQueued } from '../src/services/graph/remember.ts';
import { C, inCollection } from './collection-path.ts';

export default defineProcedure({
  name: 'graph.remember',
  summary: 'Remember free text: store it, extract typed facts, and supersede the facts they contradict',
  description:
    'Stores the raw content as a memory, then extracts discrete facts (category fact, preference or episode, source ' +
    '"remember") and judges each against the most similar current facts: duplicate (nothing stored), supersedes (the ' +
    'older fact leaves search and shows in contradictions) or new. Once its facts are stored the raw memory is archived ' +
    '(kept, listable with include_archived). By default a background job does the extraction (202, poll ' +
    '/v1/memory/extract/job/{job_id}); with sync=true the answer waits for it (200), and an LLM failure is a 502 that ' +
    'leaves the raw memory stored. Without an LLM a heuristic extracts one fact per sentence. Over the spend cap the raw ' +
    'memory is stored and extraction is skipped. An Idempotency-Key header (or idempotency_key) makes a retry safe: the same key ' +
    "with the same body answers the first request's job and stores nothing, with another body it is a 422.",
  rest: { method: 'POST', path: `${C}/remember`, status: 202 },
  access: 'write',
  // sync: the raw memory commits first and stays when the LLM then fails (a 502).
  commits: 'in-steps',
  collection: { field: 'collection', permission: 'write' },
  mcp: {
    tool: 'remember',
    title: 'Remember text',
    description:
      'Remember free text (a conversation turn, a note, what the user just told you): the service extracts discrete ' +
      'facts and preferences, stores them, and replaces older facts they contradict. Call it when you learn ' +
      'something worth keeping for later sessions. Answers a job to check with get_extraction_job, or with ' +
      'sync=true the stored facts.',
  },
  input: z
    .object({
      ...inCollection,
      content: memoryText.describe('The text to remember, 1 to 10000 characters'),
      importance: importance.default(0.5),
      observed_at: instant
        .optional()
        .describe('When the text was written or said (ISO 8601 with offset; now when left out): relative dates in it are resolved against this moment'),
      sync: queryBool.default(false).describe('Wait for the extraction and answer the facts (200) instead of a job (202)'),
      idempotency_key: idempotencyKey
        .optional()
        .describe('Names this remember (the Idempotency-Key header): the same key with the same body answers the first job and stores nothing'),
    })
    .refine((input) => !(input.sync && input.idempotency_key !== undefined), {
      message: 'An idempotency key names a queued remember: send it without sync=true',
      path: ['idempotency_key'],
    }),
  output: z.union([
    z.object({ job_id: z.string(), state: z.literal('queued') }),
    z.object({ created: z.number().int().describe('Facts stored (new and superseding)'), memories: z.array(extractedFact), skipped }),
  ]),
  errors: {
    BAD_GATEWAY: 'sync=true and the LLM failed or answered unusable output twice; the raw memory is stored',
    UNPROCESSABLE_CONTENT: 'The Idempotency-Key was used with another body',
  },
  handler: (ctx, { collection, sync, ...input }) => (sync ? rememberNow(ctx, collection, input) : rememberQueued(ctx, collection, input)),
});
