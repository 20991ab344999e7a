import http from 'node:http';
import https from 'node:https';
import { guardedLookup, hostOf, isPrivateAddress, PrivateTargetError } from '../../ports/public-target.ts';

export const WEBHOOK_TIMEOUT_MS = 5_000;

/**
 * POSTs `body` and resolves with the status code. The whole exchange is bounded by the
 * 5 second timeout; redirects are not followed. With `publicOnly`, private and loopback
 * targets are refused, by literal address or by what the name resolves to.
 */
export function postWebhook(url: string, body: string, headers: Record<string, string>, publicOnly: boolean): Promise<number> {
  const target = new URL(url);
  if (publicOnly && isPrivateAddress(hostOf(target))) {
    return Promise.reject(new PrivateTargetError(`${target.hostname} is a private or loopback address`));
  }
  return new Promise((resolve, reject) => {
    const client = target.protocol === 'https:' ? https : http;
    const req = client.request(
      target,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'orgmem-webhooks', ...headers },
        signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
        lookup: publicOnly ? guardedLookup : undefined,
      },
      (res) => {
        res.on('error', reject);
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.resume();
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
