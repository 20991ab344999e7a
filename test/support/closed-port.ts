import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A port nothing listens on: one the OS just handed out and took back. */
export async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}
