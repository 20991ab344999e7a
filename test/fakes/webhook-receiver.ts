import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** When the request arrived, and (for a hanging answer) when the sender gave up on it. */
  at: number;
  closedAt?: number;
}

/** What the receiver does with a request: answer this status, or never answer. */
export type Behaviour = number | 'hang';

/** A real webhook receiver on 127.0.0.1 that records every request it gets. */
export async function startReceiver(behaviour: () => Behaviour = () => 204) {
  const received: Received[] = [];
  // Requests open at once: now, and the most there ever were.
  const open = { now: 0, most: 0 };
  const server = http.createServer((req, res) => {
    open.most = Math.max(open.most, ++open.now);
    res.on('close', () => open.now--);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(r);
      const b = behaviour();
      if (b === 'hang') res.on('close', () => (r.closedAt = Date.now()));
      else res.writeHead(b).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    received,
    open,
    /** Resolves once `n` requests (or one matching `ok`) have arrived; rejects after `ms`. */
    async waitFor(n: number, ms = 15_000, ok: (r: Received[]) => boolean = (r) => r.length >= n): Promise<Received[]> {
      const deadline = Date.now() + ms;
      while (!ok(received)) {
        if (Date.now() > deadline) throw new Error(`receiver got ${received.length} requests, waited for ${n}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return received;
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
