import { runBridge } from './bridge.ts';
import { serveProblem, type Session } from './problem.ts';

const NO_KEY =
  'ORGMEM_API_KEY is not set. Fix: add "ORGMEM_API_KEY": "mv_..." to the env of this MCP server in the client\'s config: ' +
  'the key printed by the first orgmem serve, or one made with orgmem admin create-tenant.';

/**
 * `orgmem mcp`: MCP over this process's stdin/stdout, acting with the key in ORGMEM_API_KEY.
 * With ORGMEM_URL it bridges to that running server (remote); otherwise it opens the data itself
 * (local, mcp/local.ts). Whatever keeps it from serving reaches the MCP host as an answer naming
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
      if (!URL.canParse(url)) return await serveProblem(`ORGMEM_URL is not a URL: "${url}". Fix: give the server's address, such as http://127.0.0.1:8080.`);
      return await runBridge(url, apiKey);
    }
    // Loaded only here: the bridge needs none of the service (database, embedder, jobs).
    const { openLocal } = await import('./local.ts');
    return await openLocal(apiKey);
  } catch (err) {
    return serveProblem(`orgmem mcp could not start: ${(err as Error).stack ?? String(err)}`);
  }
}
