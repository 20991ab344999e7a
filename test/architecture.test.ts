import { readdirSync, readFileSync } from 'node:fs';
import { cruise, type IAllowedRuleType, type IModule } from 'dependency-cruiser';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * The map of docs/architecture.md, checked: no import circles, every import allowed by the
 * table below (type-only imports included), and one name per export.
 */
const ROOTS = ['host', 'src', 'procedures', 'rest-adapter', 'trpc', 'mcp', 'bin', 'web'];

const CORE = 'src/core/';
const PIPELINE = 'src/pipeline/';

/**
 * What each part may import besides packages and Node's own modules; a part may import itself.
 * `typesOnly` lists what it may import with `import type` alone.
 */
const MAY_IMPORT: Array<{ part: string; from: string; to: string[]; typesOnly?: string[] }> = [
  { part: 'bin', from: '^bin/', to: ['^host/cli[.]ts$'] },
  // The dashboard is a client of the public API like any other: none of the server's code, only
  // the API's types (erased from its build): its shapes, and the router its typed client calls.
  { part: 'dashboard', from: '^web/', to: ['^web/'], typesOnly: ['^src/schemas/', '^trpc/router[.]ts$'] },
  // Process start-up and wiring sits above all it starts; nothing but bin/ imports it.
  { part: 'host', from: '^host/', to: ['^'] },
  // The Claude Code plugin runs as installed, without npm: Node's own modules and itself only.
  { part: 'plugin', from: '^plugins/claude-code/', to: ['^plugins/claude-code/'] },
  { part: 'database maintenance', from: '^src/maintenance/', to: ['^src/maintenance/', '^src/ports/'] },
  { part: 'front ends', from: '^(rest-adapter|trpc|mcp)/', to: ['^$1/', '^procedures/index[.]ts$', `^${PIPELINE}`, '^src/schemas/', `^${CORE}`] },
  { part: 'catalogue', from: '^procedures/', to: ['^procedures/', '^src/pipeline/procedure[.]ts$', '^src/services/', '^src/schemas/', `^${CORE}`] },
  { part: 'pipeline', from: `^${PIPELINE}`, to: [`^${PIPELINE}`, '^src/services/(access|events|tenant-db)/', '^src/ports/db/', '^src/schemas/', `^${CORE}`] },
  // Services: each domain may use the ones listed after it, and ports, schemas and core.
  ...Object.entries({
    events: ['tenant-db'],
    access: ['events', 'storage', 'tenant-db'],
    billing: ['access', 'events'],
    llm: [],
    trust: ['tenant-db'],
    ledger: [],
    memory: ['access', 'events', 'storage', 'trust', 'ledger'],
    search: ['memory', 'access', 'llm', 'ledger'],
    graph: ['memory', 'access', 'llm', 'trust'],
    status: [],
    storage: [],
    files: ['memory', 'access', 'llm', 'events', 'storage', 'trust'],
    email: ['files', 'memory', 'access', 'events', 'storage'],
    context: ['search', 'memory', 'ledger'],
    proxy: ['context', 'search', 'graph', 'memory', 'access', 'llm'],
    connectors: ['files', 'memory', 'access', 'events'],
    consolidation: ['memory', 'access', 'llm', 'events'],
    people: ['memory', 'access', 'events', 'tenant-db'],
    embed: [],
    // The operator's aggregates read across every domain (above them all).
    operator: [
      'events',
      'access',
      'billing',
      'llm',
      'memory',
      'search',
      'graph',
      'status',
      'storage',
      'files',
      'email',
      'context',
      'proxy',
      'connectors',
      'consolidation',
      'embed',
    ],
  }).map(([domain, uses]) => ({
    part: `services/${domain}`,
    from: `^src/services/${domain}/`,
    to: [`^src/services/(${[domain, ...uses].join('|')})/`, '^src/ports/', '^src/schemas/', `^${CORE}`],
  })),
  // Where a tenant's data lives: below every domain, and it migrates a tenant's own database.
  {
    part: 'services/tenant-db',
    from: '^src/services/tenant-db/',
    to: ['^src/services/tenant-db/', '^src/maintenance/migrate[.]ts$', '^src/ports/', '^src/schemas/', `^${CORE}`],
  },
  { part: 'ports', from: '^src/ports/', to: ['^src/ports/', '^src/core/(config|ids)[.]ts$'] },
  { part: 'schemas', from: '^src/schemas/', to: ['^src/schemas/', '^src/core/config[.]ts$'] },
  { part: 'core', from: `^${CORE}`, to: [`^${CORE}`, '^src/ports/', '^src/schemas/'] },
];

let modules: IModule[];

beforeAll(async () => {
  const allowed: IAllowedRuleType[] = [
    { from: {}, to: { dependencyTypes: ['npm', 'npm-dev', 'core'] } },
    ...MAY_IMPORT.map(({ from, to }) => ({ from: { path: from }, to: { path: to } })),
    ...MAY_IMPORT.filter((p) => p.typesOnly).map(({ from, typesOnly }) => ({
      from: { path: from },
      to: { path: typesOnly, dependencyTypes: ['type-only' as const] },
    })),
  ];
  const result = await cruise(ROOTS, {
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    // Resolve packages' subpath exports (@modelcontextprotocol/sdk/server/mcp.js) the way Node does.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
    validate: true,
    ruleSet: {
      allowed,
      allowedSeverity: 'error',
      forbidden: [
        { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
        { name: 'resolvable', severity: 'error', from: {}, to: { couldNotResolve: true } },
      ],
    },
  });
  modules = (result.output as { modules: IModule[] }).modules.filter((m) => !m.source.startsWith('node_modules/') && !m.coreModule);
}, 60_000);

const violations = (rule: string) =>
  modules.flatMap((m) => m.dependencies.filter((d) => d.rules?.some((r) => r.name === rule)).map((d) => `${m.source} -> ${d.resolved}`));

describe('architecture (docs/architecture.md)', () => {
  it('reads every file of the service', () => {
    const files = ROOTS.flatMap((root) => readdirSync(root, { recursive: true, encoding: 'utf8' }).map((f) => `${root}/${f}`)).filter((f) =>
      /[.](tsx?|js)$/.test(f),
    );
    expect(files.length).toBeGreaterThan(140);
    expect(
      modules
        .map((m) => m.source)
        .filter((f) => /[.](tsx?|js)$/.test(f))
        .sort(),
    ).toEqual(files.sort());
  });

  it('has no import circles', () => {
    expect(violations('no-circular')).toEqual([]);
  });

  it('imports only what the map allows', () => {
    expect(violations('not-in-allowed')).toEqual([]);
    expect(violations('resolvable')).toEqual([]);
  });

  it('exports each name from one module only', () => {
    const owners = new Map<string, string[]>();
    for (const { source } of modules.filter((m) => /[.]ts$/.test(m.source))) {
      const file = ts.createSourceFile(source, readFileSync(source, 'utf8'), ts.ScriptTarget.Latest);
      for (const statement of file.statements) {
        if (!ts.canHaveModifiers(statement) || !ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
        const names = ts.isVariableStatement(statement)
          ? statement.declarationList.declarations.map((d) => d.name.getText(file))
          : [(statement as ts.DeclarationStatement).name?.getText(file)].filter((n): n is string => !!n);
        for (const name of names) owners.set(name, [...(owners.get(name) ?? []), source]);
      }
    }
    expect(owners.size).toBeGreaterThan(100);
    expect([...owners].filter(([, files]) => files.length > 1)).toEqual([]);
  });
});
