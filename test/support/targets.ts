import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { targetRule } from '../../src/ports/public-target.ts';

/** The rule of default mode (every address) and of production mode (public addresses only), for tests calling ports directly. */
export const OPEN = targetRule({ targets: { publicOnly: false, allowedNetworks: [] } });
export const PUBLIC_ONLY = targetRule({ targets: { publicOnly: true, allowedNetworks: [] } });

/** What an internal page holds: what must never reach a caller. */
export const SECRET_PAGE = 'INTERNAL-ONLY admin page: db_password=hunter2';

/**
 * An HTTP server on `host` that counts what reaches it, the connections (whatever they speak) and
 * the requests, and answers with `handler` (by default the secret page).
 */
export async function listen(host: string, handler?: (req: IncomingMessage, res: ServerResponse) => void) {
  const hits: string[] = [];
  const connections = { count: 0 };
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    if (handler) return handler(req, res);
    res.writeHead(200, { 'content-type': 'text/html' }).end(SECRET_PAGE);
  });
  server.on('connection', () => connections.count++);
  await new Promise<void>((r) => server.listen(0, host, r));
  const { port } = server.address() as AddressInfo;
  return {
    hits,
    connections,
    port,
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
