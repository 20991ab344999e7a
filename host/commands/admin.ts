import type { App } from '../../src/core/context.ts';
import type { AnyProcedure } from '../../src/pipeline/procedure.ts';
import { HELP, UsageError, invalid, openApp, stopApp, type Command } from './command.ts';

/**
 * Runs an admin command on the data: opened here (`direct`), or, while an `orgmem serve` holds the
 * embedded data directory, through that server's local admin endpoint `proc` with the secret it
 * wrote there (host/server-file.ts). Either way the answer is `proc`'s output and a refusal its
 * {detail}; `flags` name the input fields when the server refuses one (its tiers may differ).
 */
async function onTheData<T>(proc: AnyProcedure, input: Record<string, unknown>, flags: Record<string, string>, direct: (app: App) => Promise<T>): Promise<T> {
  const [{ loadConfig }, { DataDirInUseError }] = await Promise.all([import('../../src/core/config.ts'), import('../../src/ports/db/dir-lock.ts')]);
  let app: App;
  try {
    app = await openApp('warn', loadConfig());
  } catch (err) {
    if (!(err instanceof DataDirInUseError)) throw err;
    return throughServer(err, proc, input, flags);
  }
  try {
    return await direct(app);
  } finally {
    await stopApp(app);
  }
}

async function throughServer<T>(
  inUse: import('../../src/ports/db/dir-lock.ts').DataDirInUseError,
  proc: AnyProcedure,
  input: Record<string, unknown>,
  flags: Record<string, string>,
): Promise<T> {
  const { serverHolding, SERVER_FILE } = await import('../server-file.ts');
  const server = serverHolding(inUse);
  if (!server) {
    throw new Error(
      `The data directory ${inUse.dir} is in use by another orgmem process (pid ${inUse.owner}), which is not an orgmem serve this ` +
        `command can go through (a running orgmem serve writes ${SERVER_FILE} there). Fix: if it is an orgmem serve still starting, run ` +
        `this command again in a moment; otherwise stop that process (kill ${inUse.owner}) and run this command again.`,
    );
  }
  let res: Response;
  try {
    res = await fetch(new URL(proc.rest.path, server.url), {
      method: proc.rest.method,
      headers: { 'content-type': 'application/json', [proc.secret!.header]: server.secret },
      body: JSON.stringify(input),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
    throw new Error(
      `The orgmem serve that holds the data directory ${inUse.dir} (pid ${server.pid}) does not answer at ${server.url} (${cause}). ` +
        `Fix: stop it (kill ${server.pid}) and run this command again, which then opens the data itself; start orgmem serve again after.`,
    );
  }
  const body = (await res.json().catch(() => ({}))) as { detail?: string; errors?: { path: string; message: string }[] };
  if (res.ok) return body as T;
  if (res.status === 422 && body.errors) throw invalid(body.errors, flags);
  if (res.status === 401) {
    throw new Error(
      `The orgmem serve at ${server.url} (pid ${server.pid}) refused the secret in ${inUse.dir}/${SERVER_FILE} (401: ${body.detail}). ` +
        `Fix: restart that server (it writes a new ${SERVER_FILE}), then run this command again.`,
    );
  }
  throw new Error(body.detail ?? `The orgmem serve at ${server.url} answered ${res.status}`);
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
      import('../../src/core/config.ts'),
      import('../../procedures/internal.create-tenant.ts'),
    ]);
    // The API's rules, with every tier this configuration knows (ORGMEM_TIERS may add some), checked before anything is opened.
    const tiers = Object.keys(loadConfig().tiers) as [string, ...string[]];
    const flags = { name: '--name', email: '--email', tier: '--tier' };
    const input = procedure.input
      .extend({ tier: z.enum(tiers).default('free') })
      .safeParse({ name: values.name, email: values.email, tier: values.tier, is_admin: values.admin ?? false });
    if (!input.success) throw invalid(input.error.issues, flags);
    const { tenant, api_key } = await onTheData(procedure, input.data, flags, async (app) => {
      const { createTenant } = await import('../../src/services/access/tenants.ts');
      return createTenant(app, input.data);
    });
    process.stdout.write(
      `Created tenant ${tenant.name} (${tenant.id}, tier ${tenant.tier}${tenant.is_admin ? ', admin' : ''}).\nAPI key (shown only now): ${api_key}\n`,
    );
  },
};

const createKeyCommand: Command = {
  usage: `Usage: orgmem admin create-key --tenant T [--label L] [--role admin|agent] [--read-only]

Creates an API key for an existing tenant and prints it once; the tenant's other keys stay as
they are. This is how an operator replaces a lost key, the first start's admin key included:

  orgmem admin create-key --tenant admin

It works while orgmem serve runs on the same data: it then asks that server.

Options:
  --tenant T        the tenant's name, email or id
  --label L         the key's label, its agent name (default: cli)
  --role R          admin (the default: it also manages keys, grants, settings) or agent
  --read-only       a key that can read but not write
${HELP}`,
  options: { tenant: { type: 'string' }, label: { type: 'string' }, role: { type: 'string' }, 'read-only': { type: 'boolean' } },
  async run(values) {
    if (!values.tenant) throw new UsageError('create-key needs --tenant (a tenant name, email or id)');
    const [{ loadConfig }, { hasEmbeddedData }, { default: procedure }] = await Promise.all([
      import('../../src/core/config.ts'),
      import('../../src/ports/db/pglite.ts'),
      import('../../procedures/internal.create-key.ts'),
    ]);
    const flags = { tenant: '--tenant', label: '--label', role: '--role' };
    const input = procedure.input.safeParse({
      tenant: values.tenant,
      label: values.label ?? 'cli',
      role: values.role ?? 'admin',
      read_only: values['read-only'] ?? false,
    });
    if (!input.success) throw invalid(input.error.issues, flags);
    const config = loadConfig();
    // A new, empty database has no tenant to give a key to: say where the data was looked for instead of making one.
    if (!config.databaseUrl && !config.dataDir.startsWith('memory://') && !hasEmbeddedData(config.dataDir)) {
      const which = process.env.ORGMEM_DATA_DIR ? 'ORGMEM_DATA_DIR' : 'the default data directory';
      throw new Error(
        `There is no orgmem data in ${config.dataDir} (${which}). Fix: run this command with ORGMEM_DATA_DIR set to the data directory ` +
          'of your orgmem serve (its log says "embedded data in ..."), or with its DATABASE_URL.',
      );
    }
    const key = await onTheData(procedure, input.data, flags, async (app) => {
      const { createKeyFor } = await import('../../src/services/access/tenants.ts');
      return createKeyFor(app, input.data.tenant, input.data.label, input.data.role, input.data.read_only);
    });
    process.stdout.write(
      `Created ${key.role} API key '${key.label}'${key.read_only ? ' (read-only)' : ''} for tenant ${key.tenant.name} <${key.tenant.email}>.\nAPI key (shown only now): ${key.api_key}\n`,
    );
  },
};

export const admin: Command = {
  usage: `Usage: orgmem admin <command>

Operator commands, run on the server's database (same DATABASE_URL or data directory). While
orgmem serve holds the embedded data directory, they go through that server.

  create-tenant     create a tenant and print its API key once
  create-key        create an API key for an existing tenant (replaces a lost one)

Run \`orgmem admin <command> --help\` for its options.
`,
  subcommands: { 'create-tenant': createTenantCommand, 'create-key': createKeyCommand },
};
