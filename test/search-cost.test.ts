import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/core/config.ts';
import type { App } from '../src/core/context.ts';
import type { Db } from '../src/ports/db/db.ts';
import { exactMax, readsExactly, walkEf } from '../src/services/search/exact-cost.ts';
import { NO_FILTERS, type Scope } from '../src/services/search/scope.ts';
import { textLimit } from '../src/services/search/text.ts';

// The cost decisions read only the App's configuration, the storage its database holds (the
// configured one here; halfvec unless a test says otherwise) and the database's kind (PostgreSQL
// unless a test says otherwise).
const appWith = (env: Record<string, string> = {}, kind: Db['kind'] = 'postgres') => {
  const config = loadConfig({ ORGMEM_DATA_DIR: 'memory://', ORGMEM_VECTOR_STORAGE: 'halfvec', ...env });
  return { config, vectorStorage: config.search.vectorIndex.storage, db: { kind } } as App;
};
// A tenant in the vector graph, whose rows are the whole table's (`graphRows` the graph's): the model's case.
const scope = (memoryCount: number, graphRows: number | null): Scope => ({
  tenantId: 't',
  collections: ['c'],
  memoryCount,
  tableRows: graphRows ?? memoryCount,
  graphRows,
});

describe('exact read or indexes (the cost model)', () => {
  const app = appWith();

  it('reads a collection row by row only while that costs less than the indexes', () => {
    // The benchmark's collections: 10k and 20k beside 8k others go to the indexes, the 2k ones of a 108k table are read.
    expect(readsExactly(app, scope(10_000, 18_000), NO_FILTERS, 20, 'hybrid')).toBe(false);
    expect(readsExactly(app, scope(20_000, 28_000), NO_FILTERS, 20, 'hybrid')).toBe(false);
    expect(readsExactly(app, scope(2_000, 108_000), NO_FILTERS, 20, 'hybrid')).toBe(true);
    expect(readsExactly(app, scope(500, 500), NO_FILTERS, 20, 'single')).toBe(true);
  });

  it('reads more rows before walking a graph that is mostly other memories', () => {
    const small = exactMax(app, scope(1_000, 30_000), 20, 'hybrid');
    const large = exactMax(app, scope(1_000, 1_000_000), 20, 'hybrid');
    expect(large).toBeGreaterThan(small);
    // More candidates wanted: more graph visits under a filter, so more rows are worth reading.
    expect(exactMax(app, scope(1_000, 1_000_000), 100, 'hybrid')).toBeGreaterThan(large);
    // An empty table (no statistics yet) still has a bound.
    expect(exactMax(app, scope(0, 0), 20, 'single')).toBeGreaterThan(0);
  });

  it('reads more rows before a longer graph walk (ORGMEM_VECTOR_EF_SEARCH), unless the scope is too small a share for it to matter', () => {
    const longer = appWith({ ORGMEM_VECTOR_EF_SEARCH: '1000' });
    expect(exactMax(longer, scope(1_000, 30_000), 20, 'hybrid')).toBeGreaterThan(exactMax(app, scope(1_000, 30_000), 20, 'hybrid'));
    // In a 1M table a scope at the bound is found after more visits than either walk keeps.
    expect(exactMax(longer, scope(1_000, 1_000_000), 20, 'hybrid')).toBe(exactMax(app, scope(1_000, 1_000_000), 20, 'hybrid'));
  });

  it("reads more rows before a binary graph's walk, which keeps the re-rank's candidates (ORGMEM_VECTOR_RERANK)", () => {
    const binary = appWith({ ORGMEM_VECTOR_STORAGE: 'binary-halfvec' });
    // 50 a result for k = 20: the walk keeps 1,000, as ORGMEM_VECTOR_EF_SEARCH 1000 does on a float graph.
    expect(walkEf(binary, false, 20)).toBe(1000);
    expect(walkEf(binary, true, 20)).toBe(1000);
    expect(walkEf(app, false, 20)).toBe(100);
    expect(walkEf(app, true, 20)).toBe(40);
    expect(exactMax(binary, scope(1_000, 30_000), 20, 'hybrid')).toBe(
      exactMax(appWith({ ORGMEM_VECTOR_EF_SEARCH: '1000' }), scope(1_000, 30_000), 20, 'hybrid'),
    );
    // A collection of 10k in an 18k table, which the float graph's walk serves, is read.
    expect(readsExactly(binary, scope(10_000, 18_000), NO_FILTERS, 20, 'hybrid')).toBe(true);
    expect(readsExactly(binary, scope(20_000, 28_000), NO_FILTERS, 20, 'hybrid')).toBe(false);
    // Fewer candidates a result, a shorter walk.
    expect(walkEf(appWith({ ORGMEM_VECTOR_STORAGE: 'binary-halfvec', ORGMEM_VECTOR_RERANK: '8' }), false, 20)).toBe(160);
  });

  it('reads fewer rows on PGlite, where a row read costs more and a graph step less than on PostgreSQL', () => {
    const binary = { ORGMEM_VECTOR_STORAGE: 'binary-halfvec' };
    const embedded = appWith(binary, 'pglite');
    // The embedded default's 10k collection walks the binary graph there; on PostgreSQL it is read.
    expect(readsExactly(embedded, scope(10_000, 12_000), NO_FILTERS, 20, 'hybrid')).toBe(false);
    expect(readsExactly(appWith(binary), scope(10_000, 12_000), NO_FILTERS, 20, 'hybrid')).toBe(true);
    for (const profile of ['hybrid', 'single'] as const) {
      expect(exactMax(embedded, scope(1_000, 12_000), 20, profile)).toBeLessThan(exactMax(appWith(binary), scope(1_000, 12_000), 20, profile));
      expect(exactMax(embedded, scope(1_000, 12_000), 20, profile)).toBeGreaterThan(1_000);
    }
  });

  it('reads a tenant not in the graph exactly, however large its scope, and ORGMEM_SEARCH_EXACT_MAX does not change that', () => {
    expect(exactMax(app, scope(5_000_000, null), 20, 'hybrid')).toBe(Infinity);
    expect(readsExactly(app, scope(5_000_000, null), NO_FILTERS, 20, 'hybrid')).toBe(true);
    expect(readsExactly(appWith({ ORGMEM_SEARCH_EXACT_MAX: '0' }), scope(50, null), NO_FILTERS, 20, 'single')).toBe(true);
    // The same scope in the graph goes to the indexes.
    expect(readsExactly(app, scope(5_000_000, 5_000_000), NO_FILTERS, 20, 'hybrid')).toBe(false);
  });

  it('takes ORGMEM_SEARCH_EXACT_MAX as it is when set', () => {
    const fixed = appWith({ ORGMEM_SEARCH_EXACT_MAX: '30' });
    expect(exactMax(fixed, scope(2_000, 1_000_000), 20, 'hybrid')).toBe(30);
    expect(readsExactly(fixed, scope(31, 31), NO_FILTERS, 20, 'hybrid')).toBe(false);
    expect(readsExactly(fixed, scope(31, 31), { ...NO_FILTERS, category: 'decision' }, 20, 'hybrid')).toBe(true);
  });
});

describe('full-text match cap', () => {
  it('ranks every match of a scope within the cap and samples any larger scope', () => {
    const app = appWith();
    expect(textLimit(app, scope(1_000, 1_000))).toBe(1000);
    expect(textLimit(app, scope(1_001, 1_001))).toBe(250);
    expect(textLimit(app, scope(10_000, 10_000))).toBe(250);
    expect(textLimit(appWith({ ORGMEM_SEARCH_TEXT_CAP: '50' }), scope(5_000, 5_000))).toBe(50);
  });
});
