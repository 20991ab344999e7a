import type { App } from '../../src/core/context.ts';
import { HELP, onShutdown, openApp, stopApp, portNumber, runJobs, warmEmbedder, type Command } from './command.ts';

/**
 * A new database has no tenant. Embedded, the first start makes an admin tenant so the service
 * is usable at once; PostgreSQL deployments create theirs deliberately, so they get the command.
 */
async function firstStart(app: App, url: string) {
  const { countTenants, createTenant } = await import('../../src/services/access/tenants.ts');
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
      `Lost it? \`orgmem admin create-key --tenant admin\` makes a new one, even while this server runs\n` +
      `(from the orgmem directory: \`npx orgmem admin create-key --tenant admin\`).\n\n`,
  );
}

export const serve: Command = {
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
    const [{ loadConfig }, { newLocalSecret, writeServerFile }] = await Promise.all([import('../../src/core/config.ts'), import('../server-file.ts')]);
    const loaded = loadConfig();
    const port = portNumber(values.port, loaded.port);
    // An embedded data directory is this process's alone: the other commands on this machine reach the data through this
    // server, found in the directory's server file with the secret of its local admin endpoints (host/server-file.ts).
    const local = loaded.databaseUrl || loaded.dataDir.startsWith('memory://') ? null : { dir: loaded.dataDir, secret: newLocalSecret() };
    const config = { ...loaded, localAdminSecret: local?.secret };
    const app = await openApp(undefined, config);
    warmEmbedder(app);
    const [{ buildServer }, { startInboundSmtp }] = await Promise.all([import('../server.ts'), import('../../src/services/email/smtp-listener.ts')]);
    const server = await buildServer(app);
    await server.listen({ host: typeof values.host === 'string' ? values.host : config.host, port });
    const address = server.addresses()[0] as import('node:net').AddressInfo;
    const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
    const removeServerFile = local ? writeServerFile(local.dir, { url: localUrl(address), pid: process.pid, secret: local.secret }) : () => {};
    await firstStart(app, url);
    if (!values['no-worker']) await runJobs(app);
    const smtp = values['inbound-smtp'] ? await startInboundSmtp(app, { host: config.email.smtpHost, port: config.email.smtpPort }) : null;
    const data = app.db.kind === 'pglite' ? `embedded data in ${config.dataDir}` : 'PostgreSQL';
    app.log.info(`orgmem listening on ${url} (${data}, embedder: ${app.embedder.name}${values['no-worker'] ? ', no worker' : ''})`);
    onShutdown(async () => {
      await smtp?.close();
      await server.close();
      // Before the data directory's lock is released: the next server's file must not be the one removed.
      removeServerFile();
      await stopApp(app);
    });
  },
};

/** How a client on this machine reaches the server: listening on every address, it answers on the loopback one. */
function localUrl({ address, family, port }: import('node:net').AddressInfo): string {
  if (family === 'IPv6') return `http://[${address === '::' ? '::1' : address}]:${port}`;
  return `http://${address === '0.0.0.0' ? '127.0.0.1' : address}:${port}`;
}
