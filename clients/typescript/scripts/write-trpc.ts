// Writes src/trpc.d.ts: the `AppRouter` type of the server of this checkout with every
// procedure's input and output printed as plain types. The server's own declaration reaches zod
// through the catalogue and the server's internals through its context, so it cannot ship without
// them; a client reads only each procedure's kind, input and output and the error shape, so those
// are all this one holds (its context is `object`: clients never see it), and `@trpc/server`'s
// types are the one thing it imports. It reads the server's declarations (dist/trpc/router.d.ts,
// which the package's build brings up to date first): half the time of reading the sources.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const root = join(import.meta.dirname, '..', '..', '..');
const routerFile = join(root, 'dist', 'trpc', 'router.d.ts');
const parsed = ts.getParsedCommandLineOfConfigFile(
  join(root, 'tsconfig.json'),
  {},
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  },
);
// This file is in the program too: the types are spelled as seen from here, where none of the
// server's or zod's names is in scope, so that their aliases are spelled out.
const program = ts.createProgram({ rootNames: [routerFile, import.meta.filename], options: parsed!.options });
const checker = program.getTypeChecker();
const here = program.getSourceFile(import.meta.filename)!;
const router = checker.getSymbolAtLocation(program.getSourceFile(routerFile)!)!;
const appRouter = checker.getExportsOfModule(router).find((s) => s.name === 'AppRouter');
if (!appRouter) throw new Error(`${routerFile} exports no AppRouter`);

function member(type: ts.Type, name: string): ts.Type {
  const symbol = type.getProperty(name);
  if (!symbol) throw new Error(`${checker.typeToString(type)} has no ${name}`);
  return checker.getTypeOfSymbol(symbol);
}

const f = ts.factory;
const key = (name: string) => (ts.isIdentifierText(name, ts.ScriptTarget.Latest) ? name : f.createStringLiteral(name));
const flags = ts.NodeBuilderFlags.NoTruncation | ts.NodeBuilderFlags.MultilineObjectLiterals | ts.NodeBuilderFlags.InTypeAlias;

const importsType = (n: ts.Node): boolean => ts.isImportTypeNode(n) || ts.forEachChild(n, importsType) === true;

/** A type spelled in full, with no names but the global ones (the package's tsc rejects any other). */
function node(type: ts.Type): ts.TypeNode {
  const spelled = checker.typeToTypeNode(type, here, flags);
  if (spelled && !importsType(spelled)) return spelled;
  // It names what is out of scope here (an interface of the server, an alias of tRPC's): spelled from its parts.
  if (type.isUnion()) return f.createUnionTypeNode(type.types.map(node));
  if (checker.isArrayType(type)) return f.createArrayTypeNode(node(checker.getTypeArguments(type as ts.TypeReference)[0]!));
  return f.createTypeLiteralNode(
    checker.getPropertiesOfType(type).map((p) => {
      const optional = p.flags & ts.SymbolFlags.Optional ? f.createToken(ts.SyntaxKind.QuestionToken) : undefined;
      return f.createPropertySignature(undefined, key(p.name), optional, node(checker.getTypeOfSymbol(p)));
    }),
  );
}
const literal = (members: Record<string, ts.TypeNode>) =>
  f.createTypeLiteralNode(Object.entries(members).map(([name, type]) => f.createPropertySignature(undefined, key(name), undefined, type)));
const objectType = () => f.createKeywordTypeNode(ts.SyntaxKind.ObjectKeyword);

const KINDS: Record<string, string> = { '"query"': 'TRPCQueryProcedure', '"mutation"': 'TRPCMutationProcedure' };

/** A router record: each procedure as tRPC's procedure type of its input and output, each nested router as a record of its own. */
function record(type: ts.Type): ts.TypeNode {
  const members: Record<string, ts.TypeNode> = {};
  for (const symbol of checker.getPropertiesOfType(type)) {
    const value = checker.getTypeOfSymbol(symbol);
    const def = value.getProperty('_def') && member(value, '_def');
    if (!def?.getProperty('procedure')) {
      members[symbol.name] = record(value);
      continue;
    }
    const kind = KINDS[checker.typeToString(member(def, 'type'))];
    if (!kind) throw new Error(`${symbol.name}: a procedure of kind ${checker.typeToString(member(def, 'type'))}`);
    const types = member(def, '$types');
    members[symbol.name] = f.createTypeReferenceNode(kind, [
      literal({ input: node(member(types, 'input')), output: node(member(types, 'output')), meta: objectType() }),
    ]);
  }
  return literal(members);
}

const def = member(checker.getDeclaredTypeOfSymbol(appRouter), '_def');
const rootTypes = literal({
  ctx: objectType(),
  meta: objectType(),
  errorShape: node(member(member(member(def, '_config'), '$types'), 'errorShape')),
  transformer: f.createLiteralTypeNode(f.createFalse()),
});
const alias = f.createTypeAliasDeclaration(
  [f.createModifier(ts.SyntaxKind.ExportKeyword)],
  'AppRouter',
  undefined,
  f.createTypeReferenceNode('TRPCBuiltRouter', [rootTypes, record(member(def, 'record'))]),
);
const printed = ts.createPrinter().printNode(ts.EmitHint.Unspecified, alias, ts.createSourceFile('trpc.ts', '', ts.ScriptTarget.Latest));
if (printed.includes('import('))
  throw new Error(`AppRouter names a type of the server, which the package cannot hold:\n${printed.match(/.*import\(.*/g)!.join('\n')}`);
writeFileSync(
  join(import.meta.dirname, '..', 'src', 'trpc.d.ts'),
  `// Generated by scripts/write-trpc.ts from the server's trpc/router.ts: do not edit.\n` +
    `import type { TRPCBuiltRouter, TRPCMutationProcedure, TRPCQueryProcedure } from '@trpc/server';\n\n` +
    `/** The type a tRPC client passes to \`createTRPCClient<AppRouter>\`. */\n${printed.replace(/^(?: {4})+/gm, (spaces) => '\t'.repeat(spaces.length / 4))}\n`,
);
