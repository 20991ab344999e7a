import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { serveStdio } from '../mcp/stdio.ts';
import { closeApp, createApp, startWorker } from './app.ts';
import { loadConfig } from './config.ts';
import type { App } from './context.ts';
import { openPglite } from './ports/db/pglite.ts';
import { openPostgres } from './ports/db/postgres.ts';
import { makeEmbedder } from './ports/embedder/index.ts';
import { reembed } from './reembed.ts';
import { buildServer } from './server.ts';
import { countTenants, createTenant } from './services/access/tenants.ts';
import { startInboundSmtp } from './services/email/smtp-listener.ts';

const USAGE = `Usage: orgmem <command>

  serve [--no-worker] [--host H] [--port P] [--inbound-smtp]
                                              API (and, by default, the worker) in one process;
                                              --inbound-smtp also runs the email drop's SMTP listener
  worker                                      background jobs only (PostgreSQL deployments)
  inbound-smtp [--host H] [--port P]          SMTP listener for the email drop domain only
                                              (PostgreSQL deployments; embedded: serve --inbound-smtp)
  migrate                                     apply database migrations and exit
  mcp                                         MCP over stdio; the key comes from ORGMEM_API_KEY
  reembed                                     re-embed every memory with the configured embedder
                                              (after changing embedder or dimension; stop the service first)
  admin create-tenant --name N --email E [--admin] [--tier T]
                                              create a tenant and print its key once
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

/** An empty embedded database gets an admin tenant on first start, so the service is usable at once. */
async function bootstrapAdmin(app: App, url: string) {
  if (app.config.databaseUrl || (await countTenants(app)) > 0) return;
  const { api_key } = await createTenant(app, { name: 'admin', email: 'admin@localhost', tier: 'enterprise', is_admin: true });
  process.stdout.write(
    `\nCreated the admin tenant. Its API key is shown only this once:\n\n  ${api_key}\n\n` +
      `Use it as a bearer token, for example:\n  curl -H "Authorization: Bearer ${api_key}" ${url}/v1/memory/collections\n\n`,
  );
}

async function serve(args: string[]) {
  const { values } = parseArgs({
    args,
    options: { 'no-worker': { type: 'boolean' }, host: { type: 'string' }, port: { type: 'string' }, 'inbound-smtp': { type: 'boolean' } },
  });
  const config = loadConfig();
  const app = await createApp(config);
  const server = await buildServer(app);
  const host = values.host ?? config.host;
  const port = values.port ? Number(values.port) : config.port;
  await server.listen({ host, port });
  const address = server.addresses()[0] as import('node:net').AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  await bootstrapAdmin(app, url);
  if (!values['no-worker']) await startWorker(app);
  const smtp = values['inbound-smtp'] ? await startInboundSmtp(app, { host: config.email.smtpHost, port: config.email.smtpPort }) : null;
  app.log.info(`orgmem listening on ${url} (${app.db.kind}, embedder: ${app.embedder.name}${values['no-worker'] ? ', no worker' : ''})`);
  onShutdown(async () => {
    await smtp?.close();
    await server.close();
    await closeApp(app);
  });
}

async function worker() {
  const app = await createApp(loadConfig());
  await startWorker(app);
  app.log.info('orgmem worker running');
  onShutdown(() => closeApp(app));
}

/** The email drop's SMTP listener on its own, beside `serve` and `worker` on the same PostgreSQL database. */
async function inboundSmtp(args: string[]) {
  const { values } = parseArgs({ args, options: { host: { type: 'string' }, port: { type: 'string' } } });
  const config = loadConfig();
  const app = await createApp(config);
  // Embedded mode has no other process to ingest the attachments; with PostgreSQL the worker does.
  if (app.db.kind === 'pglite') await startWorker(app);
  const smtp = await startInboundSmtp(app, { host: values.host ?? config.email.smtpHost, port: values.port ? Number(values.port) : config.email.smtpPort });
  onShutdown(async () => {
    await smtp.close();
    await closeApp(app);
  });
}

async function mcpStdio() {
  const key = process.env.ORGMEM_API_KEY;
  if (!key) throw new Error('orgmem mcp needs ORGMEM_API_KEY (an API key of the tenant whose memories the agent uses)');
  // stdout carries the protocol, so logs go to stderr.
  const config = loadConfig();
  const app = await createApp(config, { log: pino({ level: config.logLevel }, pino.destination(2)) });
  const server = await serveStdio(app, key);
  // Embedded mode has no other process to run jobs; with PostgreSQL a separate worker does.
  if (app.db.kind === 'pglite') await startWorker(app);
  onShutdown(async () => {
    await server.close();
    await closeApp(app);
  });
  process.stdin.on('close', () => process.kill(process.pid, 'SIGTERM'));
}

async function reembedCommand() {
  const config = loadConfig();
  const log = pino({ level: config.logLevel });
  const db = config.databaseUrl ? openPostgres(config.databaseUrl, 2) : await openPglite(config.dataDir);
  try {
    const { from, to, memories } = await reembed(db, makeEmbedder(config.embedder), log);
    process.stdout.write(`Re-embedded ${memories} memories (${from} -> ${to} dimensions).\n`);
  } finally {
    await db.close();
  }
}

async function admin(args: string[]) {
  const [sub, ...rest] = args;
  if (sub !== 'create-tenant') throw new Error(USAGE);
  const { values } = parseArgs({
    args: rest,
    options: { name: { type: 'string' }, email: { type: 'string' }, admin: { type: 'boolean' }, tier: { type: 'string' } },
  });
  if (!values.name || !values.email) throw new Error('create-tenant needs --name and --email');
  const app = await createApp(loadConfig(), { log: pino({ level: 'warn' }) });
  try {
    const { tenant, api_key } = await createTenant(app, { name: values.name, email: values.email, tier: values.tier, is_admin: values.admin });
    process.stdout.write(`Created tenant ${tenant.name} (${tenant.id}, tier ${tenant.tier}${tenant.is_admin ? ', admin' : ''}).\nAPI key (shown only now): ${api_key}\n`);
  } finally {
    await closeApp(app);
  }
}

async function main(argv: string[]) {
  const [command, ...args] = argv;
  switch (command) {
    case 'serve':
      return serve(args);
    case 'worker':
      return worker();
    case 'inbound-smtp':
      return inboundSmtp(args);
    case 'migrate': {
      const app = await createApp(loadConfig());
      await closeApp(app);
      return void process.stdout.write('Migrations applied.\n');
    }
    case 'mcp':
      return mcpStdio();
    case 'reembed':
      return reembedCommand();
    case 'admin':
      return admin(args);
    default:
      process.stdout.write(USAGE);
      if (command && command !== 'help' && command !== '--help') process.exitCode = 1;
  }
}

main(process.argv.slice(2)).catch((err: Error) => {
  process.stderr.write(`orgmem: ${err.message}\n`);
  process.exit(1);
});
