import { runBridge, type BridgeTarget } from '../mcp/bridge.ts';
import { IN_CLIENT_ENV, serveProblem, type Session } from '../mcp/problem.ts';

const NO_KEY =
  `ORGMEM_API_KEY is not set. Fix: add "ORGMEM_API_KEY": "mv_..." ${IN_CLIENT_ENV}: ` +
  'the key printed by the first orgmem serve, or one made with orgmem admin create-key or create-tenant.';

/** A server named by ORGMEM_URL: its settings are the ones to fix. */
const remote = (url: string): BridgeTarget => ({
  refusedKey: (detail: string) =>
    `The server at ${new URL(url).origin} (ORGMEM_URL) refused ORGMEM_API_KEY (401: ${detail}). Fix: set ORGMEM_API_KEY ${IN_CLIENT_ENV} ` +
    'to a key this server issued (printed at its first start, or made with orgmem admin create-key), or ORGMEM_URL to the server that issued yours.',
  wrongServer:
    `start it (orgmem serve), or correct ORGMEM_URL ${IN_CLIENT_ENV} (an orgmem server's address, such as http://127.0.0.1:8080); ` +
    'without ORGMEM_URL, orgmem mcp opens the data itself',
});

/**
 * `orgmem mcp`: MCP over this process's stdin/stdout, acting with the key in ORGMEM_API_KEY.
 * With ORGMEM_URL it bridges to that running server (remote); otherwise it opens the data itself
 * (local, host/mcp-local.ts). Whatever keeps it from serving reaches the MCP host as an answer naming
 * the fix (mcp/problem.ts), never as a closed pipe. Resolves once serving; `onShutdown`
 * registers what stops it.
 */
export async function runMcpCommand(onShutdown: (fn: () => Promise<void>) => void) {
  const session = await open(process.env.ORGMEM_API_KEY, process.env.ORGMEM_URL);
  onShutdown(() => session.close());
  process.stdin.on('close', () => process.kill(process.pid, 'SIGTERM'));
}

async function open(apiKey: string | undefined, url: string | undefined): Promise<Session> {
  try {
    if (!apiKey) return await serveProblem(NO_KEY);
    if (url) {
      if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
        return await serveProblem(
          `ORGMEM_URL is not an http(s) URL: "${url}". Fix: set ORGMEM_URL ${IN_CLIENT_ENV} to the server's address, such as http://127.0.0.1:8080.`,
        );
      }
      return await runBridge(url, apiKey, remote(url));
    }
    // Loaded only here: the bridge needs none of the service (database, embedder, jobs).
    const { openLocal } = await import('./mcp-local.ts');
    return await openLocal(apiKey);
  } catch (err) {
    return serveProblem(`orgmem mcp could not start: ${(err as Error).stack ?? String(err)}`);
  }
}
