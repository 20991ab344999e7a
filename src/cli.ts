import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Logger } from 'pino';
import type { App } from './context.ts';

// Everything beyond argument parsing is imported by the command that needs it, so that `--help`
// and usage errors answer at once and open nothing.

type Options = NonNullable<ParseArgsConfig['options']>;
type Values = Record<string, string | boolean | undefined>;

interface Command {
  usage: string;
  options?: Options;
  subcommands?: Record<string, Command>;
  run?(values: Values): Promise<void>;
}

/** Wrong arguments: the message and the command's usage go to stderr, exit code 2. */
class UsageError extends Error {}

const HELP = '  -h, --help        show this help and exit\n';

const DATA = `Data: PostgreSQL at DATABASE_URL when set, else an embedded database in ORGMEM_DATA_DIR
(default: $XDG_DATA_HOME/orgmem, else ~/.local/share/orgmem, whatever the working directory).
`;

function onShutdown(fn: () => Promise<void>) {
  let closing = false;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      if (closing) return;
      closing = true;
      fn().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }
}

/** Readable lines on a terminal, JSON lines (for log collectors) otherwise. */
async function cliLog(level: string): Promise<Logger> {
  const { pino } = await import('pino');
  if (!process.stdout.isTTY) return pino({ level });
  const { default: pretty } = await import('pino-pretty');
  return pino({ level }, pretty({ translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' }));
}

async function openApp(level?: string) {
  const [{ createApp }, { loadConfig }] = await Promise.all([import('./app.ts'), import('./config.ts')]);
  const config = loadConfig();
  return createApp(config, { log: await cliLog(level ?? config.logLevel) });
}

const closeApp = async (app: App) => (await import('./app.ts')).closeApp(app);
const startWorker = async (app: App) => (await import('./app.ts')).startWorker(app);

/** Loads the bundled model now, in the background, so that the first request does not wait for it (a remote embedder is not called). */
function warmEmbedder(app: App) {
  if (app.config.embedder.kind !== 'local') return;
  app.embedder.embed(['warm up']).catch((err: unknown) => app.log.warn({ err }, 'the embedding model failed to load'));
}

function portNumber(value: string | boolean | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new UsageError(`--port must be a port number (0-65535), not '${value}'`);
  return Number(value);
}

/**
 * A new database has no tenant. Embedded, the first start makes an admin tenant so the service
 * is usable at once; PostgreSQL deployments create theirs deliberately, so they get the command.
 */
async function firstStart(app: App, url: string) {
  const { countTenants, createTenant } = await import('./services/access/tenants.ts');
  if ((await countTenants(app)) > 0) return;
  if (app.config.databaseUrl) {
    process.stdout.write(
      `\nThis database has no tenants yet. Create the first one (an operator) with the same DATABASE_URL:\n\n` +
        `  orgmem admin create-tenant --name admin --email you@example.com --admin --tier enterprise\n\n` +
        `It prints the tenant's API key once.\n\n`,
    );
    return;
  }
  const { api_key } = await createTenant(app, { name: 'admin', email: 'admin@localhost', tier: 'enterprise', is_admin: true });
  process.stdout.write(
    `\nCreated the admin tenant. Its API key is shown only this once:\n\n  ${api_key}\n\n` +
      `Use it as a bearer token, for example:\n  curl -H "Authorization: Bearer ${api_key}" ${url}/v1/memory/collections\n\n` +
      `Lost it? \`orgmem admin create-key --tenant admin\` makes a new one.\n\n`,
  );
}

const serve: Command = {
  usage: `Usage: orgmem serve [--host H] [--port P] [--no-worker] [--inbound-smtp]

Runs the API and, unless --no-worker, the background worker in one process. The first start on
an empty embedded database creates an admin tenant and prints its API key once.

Options:
  --host H          address to listen on (default: HOST, else 127.0.0.1)
  --port P          port to listen on (default: PORT, else 8080; 0 picks a free one)
  --no-worker       the API only; run \`orgmem worker\` beside it (PostgreSQL)
  --inbound-smtp    also run the email drop's SMTP listener (ORGMEM_INBOUND_SMTP_HOST, _PORT)
${HELP}`,
  options: { host: { type: 'string' }, port: { type: 'string' }, 'no-worker': { type: 'boolean' }, 'inbound-smtp': { type: 'boolean' } },
  async run(values) {
    const { loadConfig } = await import('./config.ts');
    const config = loadConfig();
    const port = portNumber(values.port, config.port);
    const app = await openApp();
    warmEmbedder(app);
    const [{ buildServer }, { startInboundSmtp }] = await Promise.all([import('./server.ts'), import('./services/email/smtp-listener.ts')]);
    const server = await buildServer(app);
    await server.listen({ host: typeof values.host === 'string' ? values.host : config.host, port });
    const address = server.addresses()[0] as import('node:net').AddressInfo;
    const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
    await firstStart(app, url);
    if (!values['no-worker']) await startWorker(app);
    const smtp = values['inbound-smtp'] ? await startInboundSmtp(app, { host: config.email.smtpHost, port: config.email.smtpPort }) : null;
    const data = app.db.kind === 'pglite' ? `embedded data in ${config.dataDir}` : 'PostgreSQL';
    app.log.info(`orgmem listening on ${url} (${data}, embedder: ${app.embedder.name}${values['no-worker'] ? ', no worker' : ''})`);
    onShutdown(async () => {
      await smtp?.close();
      await server.close();
      await closeApp(app);
    });
  },
};

const worker: Command = {
  usage: `Usage: orgmem worker

Runs background jobs (extraction, ingestion, webhooks, scheduled tasks) only, beside \`orgmem serve
--no-worker\` on the same PostgreSQL database. Embedded, \`orgmem serve\` runs them itself.

Options:
${HELP}`,
  async run() {
    const app = await openApp();
    warmEmbedder(app);
    await startWorker(app);
    app.log.info('orgmem worker running');
    onShutdown(() => closeApp(app));
  },
};

const inboundSmtp: Command = {
  usage: `Usage: orgmem inbound-smtp [--host H] [--port P]

The email drop's SMTP listener on its own, beside \`serve\` and \`worker\` on the same PostgreSQL
database (embedded: \`orgmem serve --inbound-smtp\`).

Options:
  --host H          address to listen on (default: ORGMEM_INBOUND_SMTP_HOST, else 127.0.0.1)
  --port P          port to listen on (default: ORGMEM_INBOUND_SMTP_PORT, else 2525)
${HELP}`,
  options: { host: { type: 'string' }, port: { type: 'string' } },
  async run(values) {
    const { loadConfig } = await import('./config.ts');
    const config = loadConfig();
    const port = portNumber(values.port, config.email.smtpPort);
    const app = await openApp();
    // Embedded mode has no other process to ingest the attachments; with PostgreSQL the worker does.
    if (app.db.kind === 'pglite') await startWorker(app);
    const { startInboundSmtp } = await import('./services/email/smtp-listener.ts');
    const smtp = await startInboundSmtp(app, { host: typeof values.host === 'string' ? values.host : config.email.smtpHost, port });
    onShutdown(async () => {
      await smtp.close();
      await closeApp(app);
    });
  },
};

const migrate: Command = {
  usage: `Usage: orgmem migrate

Applies the database migrations that have not run yet and exits. Every other command migrates
on start as well; run this one first when several processes share a PostgreSQL database.

Options:
${HELP}`,
  async run() {
    await closeApp(await openApp());
    process.stdout.write('Migrations applied.\n');
  },
};

const mcp: Command = {
  usage: `Usage: orgmem mcp

MCP over stdio, for Claude Desktop, Claude Code, Cursor and other MCP clients. stdout carries the
protocol; logs go to stderr.

Environment:
  ORGMEM_API_KEY    the API key whose memories the client uses (required)
  ORGMEM_URL        a running orgmem server to forward to; unset, this process opens the data
                    itself (DATABASE_URL, else the embedded data directory)

Options:
${HELP}`,
  async run() {
    const { runMcpCommand } = await import('../mcp/command.ts');
    return runMcpCommand(onShutdown);
  },
};

const reembedCommand: Command = {
  usage: `Usage: orgmem reembed

Re-embeds every memory with the configured embedder, after changing the embedder or its
dimension (ORGMEM_EMBEDDER, ORGMEM_EMBEDDINGS_*). Stop the service first.

Options:
${HELP}`,
  async run() {
    const [{ loadConfig }, { openPglite }, { openPostgres }, { makeEmbedder }, { reembed }] = await Promise.all([
      import('./config.ts'),
      import('./ports/db/pglite.ts'),
      import('./ports/db/postgres.ts'),
      import('./ports/embedder/index.ts'),
      import('./reembed.ts'),
    ]);
    const config = loadConfig();
    const db = config.databaseUrl ? openPostgres(config.databaseUrl, 2) : await openPglite(config.dataDir);
    try {
      const { from, to, memories } = await reembed(db, makeEmbedder(config.embedder), await cliLog(config.logLevel));
      process.stdout.write(`Re-embedded ${memories} memories (${from} -> ${to} dimensions).\n`);
    } finally {
      await db.close();
    }
  },
};

/** Zod issues as one line per flag, e.g. `--email: Invalid email address`. */
function invalid(issues: { path: PropertyKey[]; message: string }[], flags: Record<string, string>): UsageError {
  return new UsageError(issues.map((i) => `${flags[String(i.path[0])] ?? String(i.path[0])}: ${i.message}`).join('\n'));
}

const createTenantCommand: Command = {
  usage: `Usage: orgmem admin create-tenant --name N --email E [--tier T] [--admin]

Creates a tenant and prints its API key once.

Options:
  --name N          the tenant's name
  --email E         its email address (one tenant per address)
  --tier T          free (default), pro, enterprise, or a tier defined in ORGMEM_TIERS
  --admin           an operator tenant (the admin endpoints, such as creating tenants)
${HELP}`,
  options: { name: { type: 'string' }, email: { type: 'string' }, tier: { type: 'string' }, admin: { type: 'boolean' } },
  async run(values) {
    if (!values.name || !values.email) throw new UsageError('create-tenant needs --name and --email');
    const [{ z }, { loadConfig }, { default: procedure }] = await Promise.all([
      import('zod'),
      import('./config.ts'),
      import('../procedures/admin.create-tenant.ts'),
    ]);
    // The API's rules, with every tier this server knows (ORGMEM_TIERS may add some).
    const tiers = Object.keys(loadConfig().tiers) as [string, ...string[]];
    const input = procedure.input
      .extend({ tier: z.enum(tiers).default('free') })
      .safeParse({ name: values.name, email: values.email, tier: values.tier, is_admin: values.admin ?? false });
    if (!input.success) throw invalid(input.error.issues, { name: '--name', email: '--email', tier: '--tier' });
    const app = await openApp('warn');
    try {
      const { createTenant } = await import('./services/access/tenants.ts');
      const { tenant, api_key } = await createTenant(app, input.data);
      process.stdout.write(`Created tenant ${tenant.name} (${tenant.id}, tier ${tenant.tier}${tenant.is_admin ? ', admin' : ''}).\nAPI key (shown only now): ${api_key}\n`);
    } finally {
      await closeApp(app);
    }
  },
};

const createKeyCommand: Command = {
  usage: `Usage: orgmem admin create-key --tenant T [--label L] [--read-only]

Creates an API key for an existing tenant and prints it once; the tenant's other keys stay as
they are. This is how an operator replaces a lost key, the first start's admin key included:

  orgmem admin create-key --tenant admin

Options:
  --tenant T        the tenant's name, email or id
  --label L         the key's label, its agent name (default: cli)
  --read-only       a key that can read but not write
${HELP}`,
  options: { tenant: { type: 'string' }, label: { type: 'string' }, 'read-only': { type: 'boolean' } },
  async run(values) {
    if (!values.tenant) throw new UsageError('create-key needs --tenant (a tenant name, email or id)');
    const { default: procedure } = await import('../procedures/keys.create.ts');
    const input = procedure.input.safeParse({ label: values.label ?? 'cli', read_only: values['read-only'] ?? false });
    if (!input.success) throw invalid(input.error.issues, { label: '--label' });
    const app = await openApp('warn');
    try {
      const tenants = await app.db.query<{ id: string; name: string; email: string }>(
        'select id, name, email from tenants where id::text = $1 or lower(email) = lower($1) or name = $1 order by created_at',
        [values.tenant],
      );
      if (!tenants.length) throw new Error(`No tenant has the name, email or id '${values.tenant}'`);
      if (tenants.length > 1) {
        const list = tenants.map((t) => `  ${t.name} <${t.email}> ${t.id}`).join('\n');
        throw new Error(`Several tenants match '${values.tenant}'; name one by email or id:\n${list}`);
      }
      const tenant = tenants[0]!;
      const { insertKey } = await import('./services/access/keys.ts');
      const { row, apiKey } = await insertKey(app.db, tenant.id, input.data.label, input.data.read_only);
      process.stdout.write(
        `Created API key '${row.label}'${row.read_only ? ' (read-only)' : ''} for tenant ${tenant.name} <${tenant.email}>.\nAPI key (shown only now): ${apiKey}\n`,
      );
    } finally {
      await closeApp(app);
    }
  },
};

const admin: Command = {
  usage: `Usage: orgmem admin <command>

Operator commands, run on the server's database (same DATABASE_URL or data directory).

  create-tenant     create a tenant and print its API key once
  create-key        create an API key for an existing tenant (replaces a lost one)

Run \`orgmem admin <command> --help\` for its options.
`,
  subcommands: { 'create-tenant': createTenantCommand, 'create-key': createKeyCommand },
};

const program: Command = {
  usage: `Usage: orgmem <command> [options]

Commands:
  serve             the API (and, by default, the worker) in one process
  worker            background jobs only (PostgreSQL deployments)
  inbound-smtp      the email drop's SMTP listener only (PostgreSQL deployments)
  mcp               MCP over stdio for Claude Desktop, Claude Code, Cursor
  migrate           apply database migrations and exit
  reembed           re-embed every memory after changing the embedder
  admin             operator commands: create-tenant, create-key

Run \`orgmem <command> --help\` for a command's options.

${DATA}`,
  subcommands: { serve, worker, 'inbound-smtp': inboundSmtp, mcp, migrate, reembed: reembedCommand, admin },
};

function parse(command: Command, args: string[]): Values {
  try {
    const { values } = parseArgs({ args, options: { ...command.options, help: { type: 'boolean', short: 'h' } }, strict: true });
    return values;
  } catch (err) {
    const e = err as Error & { code?: string };
    // Node's own message goes on about positional arguments; the usage below says what is accepted.
    throw new UsageError(e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? `unknown option ${/'[^']*'/.exec(e.message)?.[0] ?? ''}` : e.message);
  }
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
    const values = parse(command, args);
    if (values.help) return void process.stdout.write(command.usage);
    if (!command.run) throw new UsageError(path.length === 1 ? 'a command is needed' : `'${path.slice(1).join(' ')}' needs a command`);
    await command.run(values);
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
