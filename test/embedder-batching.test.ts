import { afterAll, describe, expect, it } from 'vitest';
import { microBatcher } from '../src/ports/embedder/batcher.ts';
import { closeLocalEmbedder, localUseEmbedder } from '../src/ports/embedder/local-use.ts';
import { runningModelThreads } from '../src/ports/embedder/model-threads.ts';
import { newTenant } from './support/client.ts';
import { startServer } from './support/server.ts';

/** A model stand-in that answers each text with its length, records its calls and finishes when told. */
function gatedModel() {
  const calls: string[][] = [];
  const gates: Array<() => void> = [];
  return {
    calls,
    /** Lets the oldest waiting model call finish. */
    release: () => gates.shift()?.(),
    run: async (texts: string[]) => {
      calls.push(texts);
      await new Promise<void>((r) => gates.push(r));
      if (texts.includes('bad')) throw new Error('model failed');
      return texts.map((t) => [t.length]);
    },
  };
}
const tick = () => new Promise((r) => setImmediate(r));

describe('micro-batcher', () => {
  it('coalesces calls that arrive while the model is busy into one model call, each caller getting its own vectors', async () => {
    const model = gatedModel();
    const b = microBatcher({ maxBatch: 32, slots: 1, run: model.run });
    const first = b.embed(['a']);
    const rest = [b.embed(['bb']), b.embed(['ccc', 'dddd']), b.embed(['eeeee'])];
    await tick();
    expect(model.calls).toEqual([['a']]);
    model.release();
    await tick();
    // The one-text calls first (see below), then the longer one.
    expect(model.calls).toEqual([['a'], ['bb', 'eeeee', 'ccc', 'dddd']]);
    model.release();
    expect(await first).toEqual([[1]]);
    expect(await Promise.all(rest)).toEqual([[[2]], [[3], [4]], [[5]]]);
  });

  it('puts one-text calls (a query) ahead of longer calls still waiting', async () => {
    const model = gatedModel();
    const b = microBatcher({ maxBatch: 2, slots: 1, run: model.run });
    const first = b.embed(['a']);
    const bulk = b.embed(['b1', 'b2', 'b3']);
    const query = b.embed(['q']);
    await tick();
    for (let i = 0; i < 3; i++) {
      model.release();
      await tick();
    }
    expect(model.calls).toEqual([['a'], ['q', 'b1'], ['b2', 'b3']]);
    expect(await Promise.all([first, query, bulk])).toEqual([[[1]], [[1]], [[2], [2], [2]]]);
  });

  it('never sends more than maxBatch texts at once, and keeps a long call in order across model calls', async () => {
    const calls: number[] = [];
    const b = microBatcher({ maxBatch: 32, slots: 2, run: async (texts) => (calls.push(texts.length), texts.map((t) => [Number(t)])) });
    const texts = Array.from({ length: 70 }, (_, i) => String(i));
    expect(await b.embed(texts)).toEqual(texts.map((t) => [Number(t)]));
    expect(calls.sort()).toEqual([32, 32, 6].sort());
  });

  it('gives a failed model call error to every caller in it, and goes on serving later calls', async () => {
    const model = gatedModel();
    const b = microBatcher({ maxBatch: 32, slots: 1, run: model.run });
    const first = b.embed(['ok']);
    const failing = [b.embed(['x']), b.embed(['bad']), b.embed(['y', 'z'])];
    await tick();
    model.release();
    await tick();
    model.release();
    expect(await first).toEqual([[2]]);
    for (const call of failing) await expect(call).rejects.toThrow('model failed');
    const later = b.embed(['after']);
    await tick();
    model.release();
    expect(await later).toEqual([[5]]);
  });
});

describe('bundled embedder in model threads', () => {
  afterAll(closeLocalEmbedder);

  it('gives concurrent calls, batched together, the same vectors as calls one at a time', async () => {
    const embedder = localUseEmbedder({ threads: 2 });
    const texts = [
      'Ana prefers green tea.',
      'The billing deploy failed on Friday.',
      'Call Ben by phone, never before 9am.',
      'Renew the SSO contract in May.',
      'Zoe lives in Oslo.',
    ];
    const alone: number[][] = [];
    for (const t of texts) alone.push((await embedder.embed([t]))[0]!);
    const together = await Promise.all([embedder.embed(texts.slice(0, 2)), embedder.embed(texts.slice(2))]);
    // Padding a text to its batch mates' length is masked: what differs is float32 rounding (about 1e-7).
    const differences = together.flat().flatMap((v, i) => v.map((x, j) => Math.abs(x - alone[i]![j]!)));
    expect(differences).toHaveLength(texts.length * 512);
    expect(Math.max(...differences)).toBeLessThan(1e-5);
  });

  it('closes its threads with the app', async () => {
    const server = await startServer({ ORGMEM_EMBEDDER: 'local', ORGMEM_EMBEDDER_THREADS: '2' }, { worker: false });
    const t = await newTenant(server.url, server.adminKey);
    expect((await t.api('POST', '/v1/memory/collections/c/memories', { text: 'embedded in a model thread' })).status).toBe(201);
    expect(runningModelThreads()).toBeGreaterThan(0);
    await server.close();
    expect(runningModelThreads()).toBe(0);
  });
});
