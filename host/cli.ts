import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { admin } from './commands/admin.ts';
import { HELP, UsageError, type Command, type Values } from './commands/command.ts';
import { connect } from './commands/connect.ts';
import { graphTenantsCommand, migrateCommand, reembedCommand, vectorStorageCommand } from './commands/database.ts';
import { hook } from './commands/hook.ts';
import { importCommand } from './commands/import.ts';
import { inboundSmtp } from './commands/inbound-smtp.ts';
import { mcp } from './commands/mcp.ts';
import { serve } from './commands/serve.ts';
import { worker } from './commands/worker.ts';

const DATA = `Data: PostgreSQL at DATABASE_URL when set, else an embedded database in ORGMEM_DATA_DIR
(default: $XDG_DATA_HOME/orgmem, else ~/.local/share/orgmem, whatever the working directory).
`;

const program: Command = {
  usage: `Usage: orgmem <command> [options]

Commands:
  serve             the API (and, by default, the worker) in one process
  worker            background jobs only (PostgreSQL deployments)
  inbound-smtp      the email drop's SMTP listener only (PostgreSQL deployments)
  mcp               MCP over stdio for Claude Desktop, Claude Code, Cursor
  hook              recall and capture hooks for Claude Code and Codex
  connect           connect Claude Code, Codex, Cursor, Claude Desktop or VS Code to a running orgmem
  migrate           apply database migrations and exit
  reembed           re-embed every memory after changing the embedder
  vector-storage    store and index the embeddings as ORGMEM_VECTOR_STORAGE says
  graph-tenants     put each tenant in or out of the vector graph as ORGMEM_GRAPH_FROM says
  admin             operator commands: create-tenant, create-key
  import            import a file (orgmem, mem0, supermemory, Letta, Zep, PAM) into a running server

Options:
  -v, --version     print orgmem's version and exit
${HELP}
Run \`orgmem <command> --help\` for a command's options.

${DATA}`,
  options: { version: { type: 'boolean', short: 'v' } },
  subcommands: {
    serve,
    worker,
    'inbound-smtp': inboundSmtp,
    mcp,
    hook,
    connect,
    migrate: migrateCommand,
    reembed: reembedCommand,
    'vector-storage': vectorStorageCommand,
    'graph-tenants': graphTenantsCommand,
    admin,
    import: importCommand,
  },
};

function parse(command: Command, args: string[]): { values: Values; positionals: string[] } {
  try {
    const allowPositionals = !!command.positionals;
    const { values, positionals } = parseArgs({ args, options: { ...command.options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals });
    if (!values.help && allowPositionals && positionals.length !== command.positionals) {
      throw new UsageError(`${command.positionals} argument${command.positionals === 1 ? '' : 's'} expected, ${positionals.length} given`);
    }
    return { values, positionals };
  } catch (err) {
    if (err instanceof UsageError) throw err;
    const e = err as Error & { code?: string };
    // Node's own message goes on about positional arguments; the usage below says what is accepted.
    throw new UsageError(e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? `unknown option ${/'[^']*'/.exec(e.message)?.[0] ?? ''}` : e.message);
  }
}

/** The package's version, read when asked: package.json is one level up from host/cli.ts and from its build, dist/cli.js. */
function version(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

async function main(argv: string[]) {
  // `orgmem help admin create-key` is `orgmem admin create-key --help`.
  const args = argv[0] === 'help' ? [...argv.slice(1), '--help'] : argv;
  let command = program;
  const path = ['orgmem'];
  try {
    while (command.subcommands && args[0] !== undefined && !args[0].startsWith('-')) {
      const name = args.shift()!;
      const next = command.subcommands[name];
      if (!next) throw new UsageError(`unknown command '${[...path.slice(1), name].join(' ')}'`);
      command = next;
      path.push(name);
    }
    const { values, positionals } = parse(command, args);
    if (values.help) return void process.stdout.write(command.usage);
    if (values.version) return void process.stdout.write(`${version()}\n`);
    if (!command.run) throw new UsageError(path.length === 1 ? 'a command is needed' : `'${path.slice(1).join(' ')}' needs a command`);
    await command.run(values, positionals);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`orgmem: ${err.message}\n\n${command.usage}`);
    process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((err: Error) => {
  process.stderr.write(`orgmem: ${err.message}\n`);
  process.exit(1);
});
