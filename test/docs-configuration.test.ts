import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * docs/configuration.md against the code: every environment variable the configuration reads
 * (src/core/config.ts: its schema and the data directory's defaults), and every one the code
 * reads from process.env elsewhere (`orgmem mcp`), has a row there; every row is a variable
 * the code reads. A default stated in a table of any doc is the schema's.
 */
const root = join(import.meta.dirname, '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const SERVER = ['host', 'src', 'procedures', 'rest-adapter', 'trpc', 'mcp', 'plugins'];

const configTs = read('src/core/config.ts');
const schema = /^const env = z\.object\(\{$([\s\S]*?)^\}\);$/m.exec(configTs)?.[1] ?? '';
const inSchema = [...schema.matchAll(/^ {2}([A-Z][A-Z0-9_]*):/gm)].map((m) => m[1]!);
const fromSource = [...configTs.matchAll(/\bsource\.([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!);

const serverFiles = SERVER.flatMap((dir) =>
  readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|mjs)$/.test(f))
    .map((f) => join(dir, f)),
);
// `process.env.X`, and `env.X` or `env('X')` where a module takes the environment as `env`.
const fromProcessEnv = serverFiles.flatMap((f) => [...read(f).matchAll(/(?:process\.env\.|\benv\.|\benv\(')([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!));

// The schema's literal defaults: a number or a quoted string.
const defaults = new Map(
  [...schema.matchAll(/^ {2}([A-Z][A-Z0-9_]*):.*\.default\((?:'([^']*)'|(-?[\d_.]+))\)/gm)].map((m) => [m[1]!, m[2] ?? m[3]!.replaceAll('_', '')]),
);
const docRows = readdirSync(join(root, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .flatMap((f) => [...read(join('docs', f)).matchAll(/^\| `([A-Z][A-Z0-9_]*)` \| ([^|]*) \|/gm)].map((m) => ({ doc: f, name: m[1]!, cell: m[2]!.trim() })));

const documented = docRows.filter((r) => r.doc === 'configuration.md').map((r) => r.name);

describe('docs/configuration.md', () => {
  it('finds the variables in the code (the pattern still matches config.ts)', () => {
    expect(inSchema.length).toBeGreaterThan(50);
    expect(inSchema).toContain('ORGMEM_DATA_DIR');
    expect(fromSource).toEqual(expect.arrayContaining(['XDG_DATA_HOME', 'HOME']));
    expect(fromProcessEnv).toEqual(expect.arrayContaining(['ORGMEM_API_KEY', 'ORGMEM_URL']));
  });

  it('has a row for every variable the code reads', () => {
    const missing = [...new Set([...inSchema, ...fromSource, ...fromProcessEnv])].filter((name) => !documented.includes(name));
    expect(missing).toEqual([]);
  });

  it('documents only variables the code reads, each once', () => {
    const readByCode = new Set([...inSchema, ...fromSource, ...fromProcessEnv]);
    expect(documented.filter((name) => !readByCode.has(name))).toEqual([]);
    expect(documented.filter((name, i) => documented.indexOf(name) !== i)).toEqual([]);
  });

  it('states in every table of docs/ the default the schema has', () => {
    expect(defaults.get('ORGMEM_VECTOR_RERANK')).toBe('50');
    const stated = docRows.filter((r) => defaults.has(r.name));
    expect(stated.length).toBeGreaterThan(40);
    // An empty default is written as what it means ("empty", "unset: ...").
    const wrong = stated.filter(({ name, cell }) => {
      const value = defaults.get(name)!;
      return value === '' ? !/^(empty|unset)\b/.test(cell) : cell !== `\`${value}\`` && cell.replaceAll(',', '') !== value;
    });
    expect(wrong).toEqual([]);
  });
});
