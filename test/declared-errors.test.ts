import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { procedures } from '../procedures/index.ts';
import { restShape, successStatus } from '../rest-adapter/shape.ts';
import { answers } from '../src/pipeline/responses.ts';
import { newTenant, shared, type Tenant } from './support/client.ts';
import { VALID_BODIES } from './support/catalogue-calls.ts';
import { samples, type Fixture } from './support/samples.ts';
import { restCall } from './support/transports.ts';

/**
 * Generated from the catalogue and each procedure's declared errors: a procedure whose path
 * names something (a collection, memory, key, job or link) answers 404 for a name that does not
 * exist exactly when it declares NOT_FOUND; one that does not declare it succeeds (it creates
 * what it names, or reports it missing in its answer). Every other test checks the other half:
 * the test server fails on any error a procedure answers without declaring it.
 */
const { url, adminKey } = shared();
const pathParams = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
// A parameter that is one of a fixed set (an OAuth provider) names a kind, not a record that can be missing.
const addressed = procedures.filter((p) => pathParams(p.rest.path).some((k) => !(p.input.shape[k] instanceof z.ZodEnum)));

describe('a path naming nothing (generated from the declared errors)', () => {
  let t: Tenant;
  let n = 0;

  beforeAll(async () => {
    t = await newTenant(url, adminKey);
  });

  it('covers the procedures that take a path parameter', () => {
    expect(addressed.length).toBeGreaterThanOrEqual(25);
  });

  it.each(addressed.map((p) => [p.name, p] as const))('%s', async (_, proc) => {
    const missing: Fixture = {
      tenantId: t.id,
      collection: `missing-${++n}`,
      memoryId: randomUUID(),
      target: `missing-target-${n}`,
      agentKeyId: randomUUID(),
      otherKeyId: randomUUID(),
      connectionId: randomUUID(),
      jobId: randomUUID(),
      batchId: randomUUID(),
    };
    // Path parameters naming nothing, with a body that passes (catalogue-calls.ts), so the 404 is about the id.
    const input = samples[proc.name]?.input(missing) ?? {
      ...Object.fromEntries(pathParams(proc.rest.path).map((p) => [p, randomUUID()])),
      ...(VALID_BODIES[proc.name] as object | undefined),
    };
    const res = await restCall(url, t.key, proc, input);
    // Without NOT_FOUND, the call answers what it answers in an open collection that exists.
    const expected = answers(proc, 'NOT_FOUND') ? 404 : (samples[proc.name]?.allowedStatus?.('open') ?? successStatus(restShape(proc), input));
    expect(res.status, JSON.stringify(res.body)).toBe(expected);
  });
});
