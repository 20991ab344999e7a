import type { ParseArgsConfig } from 'node:util';
import type { Logger } from 'pino';
import type { Config } from '../../src/core/config.ts';
import type { App } from '../../src/core/context.ts';

// What every command shares. Everything beyond argument parsing is imported by the command that
// needs it, so that `--help` and usage errors answer at once and open nothing.

export type Values = Record<string, string | boolean | undefined>;

export interface Command {
  usage: string;
  options?: NonNullable<ParseArgsConfig['options']>;
  subcommands?: Record<string, Command>;
  /** The command takes this many arguments after its options (`orgmem import FILE`: 1); none otherwise. */
  positionals?: number;
  run?(values: Values, positionals: string[]): Promise<void>;
}

/** Wrong arguments: the message and the command's usage go to stderr, exit code 2. */
export class UsageError extends Error {}

export const HELP = '  -h, --help        show this help and exit\n';

export function onShutdown(fn: () => Promise<void>) {
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
export async function cliLog(level: string): Promise<Logger> {
  const { pino } = await import('pino');
  if (!process.stdout.isTTY) return pino({ level });
  const { default: pretty } = await import('pino-pretty');
  return pino({ level }, pretty({ translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' }));
}

/** The App on `config` (default: the environment's), logging at `level` (default: the config's). */
export async function openApp(level?: string, config?: Config) {
  const [{ createApp }, { loadConfig }] = await Promise.all([import('../app.ts'), import('../../src/core/config.ts')]);
  const c = config ?? loadConfig();
  return createApp(c, { log: await cliLog(level ?? c.logLevel) });
}

export const stopApp = async (app: App) => (await import('../app.ts')).closeApp(app);
export const runJobs = async (app: App) => (await import('../app.ts')).startWorker(app);

/** Loads the bundled model now, in the background, so that the first request does not wait for it (a remote embedder is not called). */
export function warmEmbedder(app: App) {
  if (app.config.embedder.kind !== 'local') return;
  app.embedder.embed(['warm up']).catch((err: unknown) => app.log.warn({ err }, 'the embedding model failed to load'));
}

export function portNumber(value: string | boolean | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^\d{1,5}$/.test(value) || Number(value) > 65535)
    throw new UsageError(`--port must be a port number (0-65535), not '${value}'`);
  return Number(value);
}

/** Zod issues, or a 422's `errors` (dotted paths), as one line per flag, e.g. `--email: Invalid email address`. */
export function invalid(issues: { path: PropertyKey[] | string; message: string }[], flags: Record<string, string>): UsageError {
  const field = (path: PropertyKey[] | string) => String(typeof path === 'string' ? path.split('.')[0] : path[0]);
  return new UsageError(issues.map((i) => `${flags[field(i.path)] ?? field(i.path)}: ${i.message}`).join('\n'));
}
